// A database path under the system temp dir, unique to the test, removed with its WAL files.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace wattlab::lab::test {

struct TempDb {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("wattlab_lab_" + std::to_string(::getpid()) + "_" +
                                ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
  TempDb() { std::filesystem::remove(path); }
  ~TempDb() {
    std::filesystem::remove(path);
    std::filesystem::remove(path.string() + "-wal");
    std::filesystem::remove(path.string() + "-shm");
  }
};

}  // namespace wattlab::lab::test
