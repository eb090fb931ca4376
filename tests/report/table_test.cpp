#include "report/table.h"

#include <gtest/gtest.h>

using namespace wattlab::report;

TEST(Table, AlignsNumbersRight) {
  Table t({"model", "J/token"});
  t.add_row({"a", "0.5"});
  t.add_row({"longer", "12.25"});
  EXPECT_EQ(t.render(), "model   J/token\n---------------\na           0.5\nlonger    12.25\n");
  EXPECT_EQ(display_width("a → b"), 5u);
}
