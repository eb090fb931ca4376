#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

#include "wattlab/core/error.h"
#include "lab/recipe.h"

using namespace wattlab::lab;

TEST(Recipe, ParsesPipelineAndPrintsCanonically) {
  auto r = parse_recipe("normal(mean=0,std=1) | sort(fraction=0.5, along=K) | zero(fraction=0.9)");
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->stages.size(), 3u);
  EXPECT_EQ(r->stages[1].kind, StageKind::sort);
  EXPECT_EQ(r->stages[1].along, Along::K);
  EXPECT_DOUBLE_EQ(r->stages[2].fraction, 0.9);
  EXPECT_EQ(r->stages[1].column, 24);
  EXPECT_EQ(to_string(*r),
            "normal(mean=0, std=1) | sort(fraction=0.5, along=K, scope=matrix) | zero(fraction=0.9)");
  auto again = parse_recipe(to_string(*r));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(to_string(*again), to_string(*r));
}

TEST(Recipe, NumbersPowersAndHex) {
  auto r = parse_recipe("normal(std=2^-5, mean=-1.5e2) | distinct(n=2^4) | xor_bits(mask=0xff)");
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->stages[0].stddev, 0.03125);
  EXPECT_EQ(r->stages[0].mean, -150.0);
  EXPECT_EQ(r->stages[1].n, 16);
  EXPECT_EQ(r->stages[2].mask, 0xFFu);
  EXPECT_EQ(to_string(*r), "normal(mean=-150, std=0.03125) | distinct(n=16) | xor_bits(mask=0xFF)");
  EXPECT_TRUE(parse_recipe("constant(value=1)|sparse24(keep=largest)|flip(n=3)").ok());
  EXPECT_TRUE(parse_recipe("uniform").ok());
  EXPECT_TRUE(parse_recipe("uniform()").ok());
}

std::string err(std::string_view text) {
  auto r = parse_recipe(text);
  EXPECT_FALSE(r.ok()) << text;
  if (r.ok()) return {};
  EXPECT_EQ(r.error().kind, wattlab::ErrorKind::invalid_argument);
  return r.error().what;
}

TEST(Recipe, RejectsWithColumnAndCaret) {
  EXPECT_EQ(err("normal(mean=0 | sort"),
            "bad recipe at column 15: expected ',' or ')' after parameter 'mean', got '|'\n"
            "  normal(mean=0 | sort\n"
            "                ^");
  EXPECT_EQ(err("normal | sorty"),
            "bad recipe at column 10: unknown stage 'sorty'; stages: normal, uniform, constant, distinct, sort, zero, "
            "sparse24, flip, randomize_low, randomize_high, zero_low, zero_high, xor_bits\n"
            "  normal | sorty\n"
            "           ^");
  EXPECT_EQ(err("normal(sigma=2)"),
            "bad recipe at column 8: 'normal' takes no parameter 'sigma'; it takes: mean, std\n"
            "  normal(sigma=2)\n"
            "         ^");
  EXPECT_EQ(err("zero(fraction=0.5)"),
            "bad recipe at column 1: a recipe starts with a source (normal, uniform or constant), got 'zero'\n"
            "  zero(fraction=0.5)\n"
            "  ^");
}

// Found by fuzz/fuzz_recipe.cpp: a parameter whose value is missing at the very end of the text
// (after a blank the parser skips) read one byte past the text. The text sits in a buffer of
// exactly its size, so the asan preset sees any such read.
TEST(Recipe, MissingValueAtTheEndReadsNothingPastTheText) {
  for (const std::string text : {"distinct(n=\f", "normal(mean=", "normal | xor_bits(mask= "}) {
    auto buf = std::make_unique<char[]>(text.size());
    std::memcpy(buf.get(), text.data(), text.size());
    auto r = parse_recipe(std::string_view(buf.get(), text.size()));
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.error().kind, wattlab::ErrorKind::invalid_argument);
    EXPECT_NE(r.error().what.find("bad recipe at column " + std::to_string(text.size() + 1) + ": expected "),
              std::string::npos)
        << r.error().what;
  }
}

TEST(Recipe, RejectsBadValuesAndOrder) {
  EXPECT_NE(err("normal(std=-1)").find("column 12: expected std >= 0"), std::string::npos);
  EXPECT_NE(err("normal | zero(fraction=1.5)").find("column 24: expected a number from 0 to 1 for 'fraction'"),
            std::string::npos);
  EXPECT_NE(err("normal | zero").find("column 10: 'zero' needs parameter 'fraction'"), std::string::npos);
  EXPECT_NE(err("normal | flip(n=33)").find("expected an integer from 0 to 32 for 'n'"), std::string::npos);
  EXPECT_NE(err("normal | flip(n=1.5)").find("expected an integer from 0 to 32 for 'n'"), std::string::npos);
  EXPECT_NE(err("normal | sort(along=X)").find("expected K, MN, M or N for 'along'"), std::string::npos);
  EXPECT_NE(err("normal | sort(scope=rows)").find("expected matrix or line for 'scope'"), std::string::npos);
  EXPECT_NE(err("normal(mean=1, mean=2)").find("column 16: parameter 'mean' given twice"), std::string::npos);
  EXPECT_NE(err("normal | uniform").find("only one source per recipe"), std::string::npos);
  EXPECT_NE(err("normal | zero(fraction=0.1) | distinct(n=2)").find("'distinct' must directly follow"),
            std::string::npos);
  EXPECT_NE(err("normal | flip(n=1) | sort").find("column 22: value stage 'sort' after bit stage 'flip'"),
            std::string::npos);
  EXPECT_NE(err("normal |").find("expected a stage after '|'"), std::string::npos);
  EXPECT_NE(err("").find("column 1: expected a source stage"), std::string::npos);
  EXPECT_NE(err("normal(mean=abc)").find("column 13: expected a number for 'mean'"), std::string::npos);
  EXPECT_NE(err("uniform(low=2, high=1)").find("'uniform' needs low <= high"), std::string::npos);
  EXPECT_NE(err("normal) ").find("column 7: expected '|' or the end of the recipe, got ')'"), std::string::npos);
}

TEST(Recipe, ValidateAgainstShape) {
  const OperandShape a{Operand::A, 8, 8, 6, DType::f16};
  EXPECT_TRUE(validate(parse_recipe("normal | flip(n=16)").value(), a).ok());
  EXPECT_FALSE(validate(parse_recipe("normal | flip(n=17)").value(), a).ok());
  EXPECT_FALSE(validate(parse_recipe("normal | sort(along=N)").value(), a).ok());
  EXPECT_TRUE(validate(parse_recipe("normal | sort(along=M)").value(), a).ok());
  EXPECT_FALSE(validate(parse_recipe("normal | sparse24").value(), a).ok());  // K = 6
  EXPECT_FALSE(validate(parse_recipe("normal | xor_bits(mask=0x10000)").value(), a).ok());
  OperandShape b = a;
  b.which = Operand::B;
  EXPECT_FALSE(validate(parse_recipe("normal | sort(along=M)").value(), b).ok());
}
