#include <gtest/gtest.h>

#include <set>

#include "lab/bit_stats.h"
#include "lab/generate.h"
#include "lab/study_recipes.h"

using namespace wattlab::lab;

TEST(StudyRecipes, EveryRecipeParsesAndGenerates) {
  for (DType t : all_dtypes) {
    const auto sweeps = study_sweeps(t);
    std::set<std::string> ids;
    for (const StudySweep& s : sweeps) {
      ids.insert(s.id);
      EXPECT_FALSE(s.points.empty()) << s.id;
      for (const StudyPoint& p : s.points) {
        for (const std::string* text : {&p.recipe_a, &p.recipe_b}) {
          if (text->empty()) continue;
          auto r = parse_recipe(*text);
          ASSERT_TRUE(r.ok()) << s.id << " " << *text << ": " << r.error().message();
          const Operand which = text == &p.recipe_a ? Operand::A : Operand::B;
          const OperandShape shape{which, 8, 12, 16, t};
          const auto bytes = generate_cpu(*r, shape, 1);
          ASSERT_EQ(bytes.size(), storage_bytes(shape));
        }
        if (s.kind == SweepKind::gemm) {
          ASSERT_FALSE(p.recipe_b.empty()) << s.id;
        }
      }
    }
    for (int e = 1; e <= 15; ++e) EXPECT_TRUE(ids.count("E" + std::to_string(e))) << e;
    for (const char* x : {"X1", "X2", "X3"}) EXPECT_TRUE(ids.count(x));
  }
}

TEST(StudyRecipes, GridsFollowTheDoc) {
  EXPECT_EQ(find_sweep(DType::f16, "E1")->points.size(), 16u);  // 2^-5..2^10
  EXPECT_EQ(find_sweep(DType::i8, "E1")->points.size(), 7u);    // 2^0..2^6
  EXPECT_EQ(find_sweep(DType::f8_e4m3, "E1")->points.back().value_text, "2^8");
  EXPECT_EQ(find_sweep(DType::f32, "E4")->points.size(), 33u);  // all 32 bits
  EXPECT_EQ(find_sweep(DType::bf16, "E14")->points.size(), 17u);
  EXPECT_EQ(find_sweep(DType::f16, "E8")->points.size(), 11u);
  EXPECT_EQ(find_sweep(DType::f16, "E8")->points[3].recipe_a, "normal(mean=0, std=1024) | sort(fraction=0.3, along=MN)");
  EXPECT_EQ(find_sweep(DType::f16, "E13")->points[3].recipe_b, "normal(mean=0, std=1024) | sort(fraction=0.3, along=K)");
  EXPECT_TRUE(find_sweep(DType::f32, "TF32").has_value());
  EXPECT_FALSE(find_sweep(DType::bf16, "TF32").has_value());
}

TEST(StudyRecipes, ZeroSweepEndsAllZeroAndSortRaisesAgreement) {
  const auto e11 = find_sweep(DType::bf16, "E11").value();
  const OperandShape sa{Operand::A, 32, 32, 32, DType::bf16}, sb{Operand::B, 32, 32, 32, DType::bf16};
  const auto last = generate_cpu(parse_recipe(e11.points.back().recipe_a).value(), sa, 1);
  EXPECT_EQ(bit_stats_cpu(last.data(), sa).zero_fraction, 1.0);
  const auto e8 = find_sweep(DType::bf16, "E8").value();
  auto agreement = [&](const StudyPoint& p) {
    const auto a = generate_cpu(parse_recipe(p.recipe_a).value(), sa, 1);
    const auto b = generate_cpu(parse_recipe(p.recipe_b).value(), sb, 1);
    return ab_bit_agreement_cpu(a.data(), sa, b.data(), sb);
  };
  EXPECT_GT(agreement(e8.points.back()), agreement(e8.points.front()) + 0.15);  // 0.64 -> 0.82 here
}
