#include "shared_data.h"
#include "wattlab/core/error.h"

using namespace wattlab::diagnose;
using namespace wattlab::diagnose::testing;

TEST(StoreReader, NotImplementedSaysSoInsteadOfInventingRows) {
  try {
    read_store("/tmp/runs.db");
    FAIL() << "read_store returned";
  } catch (const wattlab::WattlabError& e) {
    EXPECT_EQ(e.error().kind, wattlab::ErrorKind::not_supported);
    EXPECT_NE(std::string(e.what()).find("/tmp/runs.db"), std::string::npos);
  }
  EXPECT_THROW(read_any("/tmp/runs.db"), wattlab::WattlabError);
}

TEST(StoreReader, DispatchByExtension) {
  EXPECT_NE(reader_for("x.json")->describe().find("leaderboard JSON"), std::string::npos);
  EXPECT_NE(reader_for("x.csv")->describe().find("CSV"), std::string::npos);
  EXPECT_NE(reader_for("x.sqlite")->describe().find("store"), std::string::npos);
  EXPECT_THROW(reader_for("x.parquet"), wattlab::UsageError);
}

TEST(StoreReader, MeasuredRecordsGoThroughMakeDataset) {
  ConfigRecord r = chat().rows.at(0);
  r.source.clear();
  r.llm->energy_per_request_joules *= 2;
  const Dataset d = make_dataset("store:run-7", "wattlab store run 7", "lm-arena-chat", {r});
  EXPECT_EQ(d.rows[0].source, "store:run-7");
  EXPECT_EQ(d.violations.size(), 1u);
}
