#include "test_data.h"
#include "wattlab/core/error.h"

using namespace wattlab::diagnose;
using namespace wattlab::diagnose::testing;

namespace {
const char* kHeader =
    "model_id,nickname,gpu_model,num_gpus,max_num_seqs,avg_batch_size,avg_output_len,energy_per_token_joules,"
    "energy_per_request_joules,avg_power_watts,output_throughput_tokens_per_sec,median_itl_ms,sm_activity,task\n";
}

TEST(CsvReader, ReadsRowsQuotedFieldsAndExtras) {
  TempDir tmp;
  const auto p = tmp.write("runs.csv", std::string(kHeader) +
                                           "org/a,\"A, quoted\",H100,1,64,63,500,0.2,100,600,3000,20,0.45,my-task\n"
                                           "org/b,B,B200,2,128,120,400,0.1,40,900,9000,15,,my-task\r\n");
  const Dataset d = read_csv(p);
  ASSERT_EQ(d.rows.size(), 2u);
  EXPECT_EQ(d.task, "my-task");
  EXPECT_EQ(d.rows[0].nickname, "A, quoted");
  EXPECT_EQ(d.rows[0].measured.sm_activity, 0.45);
  EXPECT_FALSE(d.rows[1].measured.sm_activity.has_value());
  EXPECT_EQ(d.rows[1].num_gpus, 2);
  EXPECT_EQ(d.rows[1].row_index, 1u);
  EXPECT_TRUE(d.violations.empty());
  EXPECT_EQ(read_any(p).rows.size(), 2u);
}

TEST(CsvReader, InvariantViolationsAreReportedNotFatal) {
  TempDir tmp;
  const auto p = tmp.write("v.csv", std::string(kHeader) + "org/a,A,H100,1,64,63,500,0.2,999,600,3000,20,,t\n");
  const Dataset d = read_csv(p);
  ASSERT_EQ(d.violations.size(), 1u);
  EXPECT_EQ(d.violations[0].row_index, 0u);
}

TEST(CsvReader, MalformedNamesRowLineAndField) {
  TempDir tmp;
  auto err = [&](const std::string& text) -> std::string {
    try {
      read_csv(tmp.write("bad.csv", text));
    } catch (const wattlab::UsageError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(err(std::string(kHeader) + "org/a,A,H100,1,64,63,500,abc,100,600,3000,20,,t\n")
                .find("bad.csv: row 0 (line 2), field 'energy_per_token_joules': expected a number, got string \"abc\""),
            std::string::npos);
  EXPECT_NE(err(std::string(kHeader) + "org/a,A,H100,1,64\n").find("row 0 (line 2): has 5 fields, the header has 14"),
            std::string::npos);
  EXPECT_NE(err(std::string(kHeader) + "org/a,\"A,H100\n").find("unterminated quoted field"), std::string::npos);
  EXPECT_NE(err("").find("empty CSV"), std::string::npos);
}

// Found by fuzz/fuzz_leaderboard_csv.cpp: a cell that is not UTF-8 became a record whose JSON
// (--format json) threw nlohmann's type_error; the reader now refuses such a file as bad input.
TEST(CsvReader, TextThatIsNotUtf8IsBadInput) {
  const std::string row = "org/a,A,H100,1,64,63,500,0.2,100,600,3000,20,,t\n";
  auto err = [](const std::string& text) -> std::string {
    try {
      parse_csv(text, "u.csv");
    } catch (const wattlab::UsageError& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string header(kHeader);
  EXPECT_EQ(err(header + "org/\xff," + row.substr(6)), "u.csv: line 2: not UTF-8 text (byte 0xFF at offset " +
                                                         std::to_string(header.size() + 4) + ")");
  EXPECT_NE(err(header + "org/\xc0\xaf," + row.substr(6)).find("line 2: not UTF-8 text (byte 0xC0"), std::string::npos);
  EXPECT_NE(err(header + "org/\xed\xa0\x80," + row.substr(6)).find("byte 0xED"), std::string::npos);  // a surrogate
  EXPECT_NE(err(header + row + "org/\xe2\x82").find("line 3: not UTF-8 text (byte 0xE2"), std::string::npos);  // cut short
  // Well-formed UTF-8 of every length is read as it is.
  const Dataset d = parse_csv(header + "org/\xc3\xa9\xe2\x82\xac\xf0\x9f\x94\x8b," + row.substr(6), "u.csv");
  ASSERT_EQ(d.rows.size(), 1u);
  EXPECT_EQ(d.rows[0].model_id, "org/\xc3\xa9\xe2\x82\xac\xf0\x9f\x94\x8b");
  EXPECT_NE(record_to_json(d.rows[0]).find("org/\xc3\xa9"), std::string::npos);
}
