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
