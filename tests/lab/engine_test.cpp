#include "lab/engine.h"

#include <gtest/gtest.h>

namespace wattlab::lab {
namespace {

TEST(Engine, ParseNamesAndLists) {
  EXPECT_EQ(*parse_engine("bf16"), Engine::bf16);
  EXPECT_EQ(*parse_engine("fp16acc16"), Engine::fp16acc16);
  auto bad = parse_engine("fp4");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("fp4"), std::string::npos);
  EXPECT_NE(bad.error().message().find("int8"), std::string::npos);  // lists the accepted names
  auto list = parse_engine_list("bf16,fp16,bf16,int8");
  ASSERT_TRUE(list);
  EXPECT_EQ(*list, (std::vector<Engine>{Engine::bf16, Engine::fp16, Engine::int8}));
  EXPECT_FALSE(parse_engine_list("bf16,,fp16"));
}

TEST(Engine, ShapeRules) {
  EXPECT_FALSE(shape_problem(Engine::bf16, 129, 67, 95));
  EXPECT_FALSE(shape_problem(Engine::fp8e4m3, 2048, 2048, 2048));
  auto why = shape_problem(Engine::fp8e4m3, 2048, 2048, 100);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("K = 100"), std::string::npos);
  EXPECT_TRUE(shape_problem(Engine::fp32, 0, 1, 1));
}

TEST(Engine, Fp8E5m2PairsWithE4m3AndInt8IsExact) {
  EXPECT_EQ(spec(Engine::fp8e5m2).a, DType::f8_e5m2);
  EXPECT_EQ(spec(Engine::fp8e5m2).b, DType::f8_e4m3);
  EXPECT_EQ(spec(Engine::int8).rel_error_bound, 0);
  EXPECT_EQ(spec(Engine::int8).out, OutType::i32);
}

}  // namespace
}  // namespace wattlab::lab
