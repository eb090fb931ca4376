#include "wattlab/core/error.h"

#include <gtest/gtest.h>

namespace wattlab {

TEST(Result, ValueOrError) {
  Result<int> ok = 5;
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 5);
  Result<int> bad = Error{ErrorKind::not_supported, "read power of gpu:0", "use the counter", 3};
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().vendor_code, 3);
  EXPECT_THROW(bad.value(), WattlabError);
  EXPECT_EQ(bad.error().message(), "read power of gpu:0 (not supported); use the counter");
}

TEST(Status, SuccessOrError) {
  Status s;
  EXPECT_TRUE(s.ok());
  Status e = Error{ErrorKind::io, "write x"};
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.error().kind, ErrorKind::io);
}

}  // namespace wattlab
