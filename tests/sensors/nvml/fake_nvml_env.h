// Test helper: writes a script for the fake libnvidia-ml.so.1 and points the fake at it for the
// life of the object; clears the CUDA device variables so each test states its own.
#pragma once
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "wattlab/sensors/registry.h"

#ifndef WATTLAB_FAKE_NVML
#error "WATTLAB_FAKE_NVML (path of the fake libnvidia-ml.so.1) must be defined by the build"
#endif

namespace wattlab::testing {

inline std::filesystem::path temp_dir() {
  static int n = 0;
  auto p = std::filesystem::temp_directory_path() /
           ("wattlab_nvml_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
  std::filesystem::create_directories(p);
  return p;
}

class FakeNvml {
 public:
  explicit FakeNvml(const std::string& script) : dir_(temp_dir()) {
    const auto path = dir_ / "script.txt";
    std::ofstream(path) << script;
    ::setenv("WATTLAB_FAKE_NVML_SCRIPT", path.c_str(), 1);
    ::unsetenv("WATTLAB_NVML_LIBRARY");
    ::unsetenv("CUDA_VISIBLE_DEVICES");
    ::unsetenv("CUDA_DEVICE_ORDER");
  }
  ~FakeNvml() {
    ::unsetenv("WATTLAB_FAKE_NVML_SCRIPT");
    ::unsetenv("CUDA_VISIBLE_DEVICES");
    ::unsetenv("CUDA_DEVICE_ORDER");
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  FakeNvml(const FakeNvml&) = delete;
  FakeNvml& operator=(const FakeNvml&) = delete;

  static std::string library() { return WATTLAB_FAKE_NVML; }
  BackendOptions options() const {
    BackendOptions o;
    o.device = "nvml";
    o.nvml_library = library();
    return o;
  }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

}  // namespace wattlab::testing
