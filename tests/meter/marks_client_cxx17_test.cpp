// The header-only marks client builds as C++17 with nothing of wattlab linked, and writes one
// protocol line per call (the parser's side is checked in marks_test.cpp).
#include "wattlab/marks.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

static_assert(__cplusplus >= 201703L && __cplusplus < 202002L, "this test checks the client under C++17");

TEST(MarksClientCxx17, OneLinePerMark) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  wattlab::marks::Client c(fds[1]);
  ASSERT_TRUE(c.enabled());
  EXPECT_TRUE(c.open("w", {{"batch", "8"}}));
  EXPECT_TRUE(c.close("w", {{"tokens", 512}}));
  ::close(fds[1]);
  std::string all;
  char buf[1024];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) all.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  const auto nl = all.find('\n');
  ASSERT_NE(nl, std::string::npos);
  const std::string first = all.substr(0, nl), second = all.substr(nl + 1);
  EXPECT_EQ(first.rfind("{\"op\":\"open\",\"t_ns\":", 0), 0u) << first;
  EXPECT_NE(first.find(",\"name\":\"w\",\"labels\":{\"batch\":\"8\"}}"), std::string::npos) << first;
  EXPECT_NE(second.find("\"op\":\"close\""), std::string::npos) << second;
  EXPECT_NE(second.find("\"counts\":{\"tokens\":512}}\n"), std::string::npos) << second;
}
