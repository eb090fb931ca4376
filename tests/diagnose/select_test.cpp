#include "diagnose/select.h"

#include "test_data.h"
#include "wattlab/core/error.h"

using namespace wattlab::diagnose;
using namespace wattlab::diagnose::testing;

namespace {
std::string error_of(const std::string& sel, const Rows& rows) {
  try {
    resolve(parse_selector(sel), rows);
  } catch (const wattlab::UsageError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(Select, ExactNicknameAndSubstring) {
  const Rows rows = rows_of(chat());
  const auto& r = resolve(parse_selector("model=meta-llama/Llama-3.1-8B-Instruct,gpu=H100,gpus=1,batch=512"), rows);
  EXPECT_NEAR(r.energy_per_unit_j(), 0.0702, 5e-4);
  EXPECT_EQ(&resolve(parse_selector("model=Llama 3.1 8B Instruct, gpu=h100, gpus=1, batch=512"), rows), &r);
  EXPECT_EQ(&resolve(parse_selector("model=llama-3.1-8b,gpu=H100,gpus=1,batch=512"), rows), &r);
  EXPECT_EQ(&resolve(parse_selector(selector_for(r)), rows), &r);
  EXPECT_EQ(resolve(parse_selector("model=llama-3.1-8b,gpu=H100,gpus=1,pick=min-energy"), rows).batch(), 512);
  EXPECT_EQ(resolve(parse_selector("model=llama-3.1-8b,gpu=H100,pick=min-latency"), rows).batch(), 8);
  EXPECT_EQ(match(parse_selector("precision=bf16,gpu=H100,gpus=1,batch=8"), rows).size(),
            match(parse_selector("precision=bfloat16,gpu=H100,gpus=1,batch=8"), rows).size());
}

TEST(Select, ErrorsListCloseMatches) {
  const Rows rows = rows_of(chat());
  const auto amb = error_of("model=Llama,gpu=H100", rows);
  EXPECT_NE(amb.find("ambiguous"), std::string::npos);
  EXPECT_NE(amb.find("meta-llama/Llama-3.1-8B-Instruct"), std::string::npos);
  const auto many = error_of("model=meta-llama/Llama-3.1-8B-Instruct,gpu=H100", rows);
  EXPECT_NE(many.find("matches 11 configurations"), std::string::npos) << many;
  const auto none = error_of("model=meta-llama/Llama-3.1-8B-Instruct,gpu=H100,gpus=1,batch=100", rows);
  EXPECT_NE(none.find("matches no configuration; closest (1 term off)"), std::string::npos) << none;
  EXPECT_NE(none.find("batch=96"), std::string::npos) << none;
  EXPECT_THROW(parse_selector("colour=blue"), wattlab::UsageError);
  EXPECT_THROW(parse_selector("model"), wattlab::UsageError);
  EXPECT_THROW(parse_selector(""), wattlab::UsageError);
  EXPECT_THROW(parse_selector("pick=cheapest"), wattlab::UsageError);
  EXPECT_THROW(match(parse_selector("batch=lots"), rows), wattlab::UsageError);
}
