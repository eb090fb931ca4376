#include "nvml/nvml_loader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "sensors/nvml/fake_nvml_env.h"

namespace wattlab::nvml {
namespace {

using testing::FakeNvml;

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

TEST(NvmlLoader, LoadsTheGivenFileAndReadsVersions) {
  FakeNvml fake("gpus=1\ndriver_version=580.159.04\nnvml_version=13.580.159.04\ncuda_driver_version=13000\n");
  auto lib = Library::open(FakeNvml::library());
  ASSERT_TRUE(lib.ok()) << lib.error().message();
  EXPECT_EQ(std::filesystem::path((*lib)->path()).filename(), "libnvidia-ml.so.1");
  EXPECT_EQ(std::filesystem::weakly_canonical((*lib)->path()), std::filesystem::weakly_canonical(FakeNvml::library()));
  EXPECT_EQ((*lib)->driver_version(), "580.159.04");
  EXPECT_EQ((*lib)->nvml_version(), "13.580.159.04");
  EXPECT_EQ((*lib)->cuda_driver_version(), 13000);
  EXPECT_TRUE((*lib)->missing_optional().empty());
  EXPECT_TRUE((*lib)->fallbacks().empty());  // every newest version is there
  EXPECT_EQ((*lib)->name_of("nvmlInit_v2"), "nvmlInit_v2");
  unsigned n = 0;
  EXPECT_EQ((*lib)->api().device_get_count(&n), NVML_SUCCESS);
  EXPECT_EQ(n, 1u);
}

TEST(NvmlLoader, EnvironmentVariableNamesTheLibrary) {
  FakeNvml fake("gpus=2\n");
  ::setenv("WATTLAB_NVML_LIBRARY", FakeNvml::library().c_str(), 1);
  auto lib = Library::open();
  ::unsetenv("WATTLAB_NVML_LIBRARY");
  ASSERT_TRUE(lib.ok()) << lib.error().message();
  EXPECT_EQ((*lib)->requested(), FakeNvml::library());
}

// Run by CTest a second time with LD_LIBRARY_PATH at the fake's folder (see CMakeLists.txt):
// then the default names find the fake, libnvidia-ml.so.1 first.
TEST(NvmlLoaderDefaultNames, FindsLibnvidiaMlSo1OnTheLibraryPath) {
  if (!std::getenv("WATTLAB_TEST_FAKE_ON_LIBRARY_PATH")) GTEST_SKIP() << "needs LD_LIBRARY_PATH at the fake";
  FakeNvml fake("gpus=1\n");
  auto lib = Library::open();
  ASSERT_TRUE(lib.ok()) << lib.error().message();
  EXPECT_EQ((*lib)->requested(), "libnvidia-ml.so.1");
  EXPECT_EQ(std::filesystem::path((*lib)->path()).filename(), "libnvidia-ml.so.1");
}

TEST(NvmlLoader, NoLibraryNamesWhatWasTriedAndWhatToDo) {
  FakeNvml fake("gpus=1\n");
  auto lib = Library::open("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.error().kind, ErrorKind::not_found);
  EXPECT_NE(lib.error().what.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos) << lib.error().what;
  EXPECT_NE(lib.error().what.find("dlopen"), std::string::npos);
  EXPECT_NE(lib.error().hint.find("WATTLAB_NVML_LIBRARY"), std::string::npos);
}

TEST(NvmlLoader, MissingOptionalFunctionsAreListed) {
  FakeNvml fake("gpus=1\nmissing=nvmlGpmSampleGet,nvmlDeviceGetSamples\n");
  auto lib = Library::open(FakeNvml::library());
  ASSERT_TRUE(lib.ok()) << lib.error().message();
  EXPECT_TRUE(contains((*lib)->missing_optional(), "nvmlGpmSampleGet"));
  EXPECT_TRUE(contains((*lib)->missing_optional(), "nvmlDeviceGetSamples"));
  EXPECT_EQ((*lib)->api().gpm_sample_get, nullptr);
  EXPECT_EQ((*lib)->missing_optional().size(), 2u);
}

TEST(NvmlLoader, NewestVersionFirstThenTheOlderName) {
  FakeNvml fake("gpus=1\nmissing=nvmlInit_v2,nvmlDeviceGetCount_v2,nvmlDeviceGetCurrentClocksEventReasons\n");
  auto lib = Library::open(FakeNvml::library());
  ASSERT_TRUE(lib.ok()) << lib.error().message();
  EXPECT_EQ((*lib)->name_of("nvmlInit_v2"), "nvmlInit");
  EXPECT_EQ((*lib)->name_of("nvmlDeviceGetCount_v2"), "nvmlDeviceGetCount");
  EXPECT_EQ((*lib)->name_of("nvmlDeviceGetCurrentClocksEventReasons"), "nvmlDeviceGetCurrentClocksThrottleReasons");
  EXPECT_EQ((*lib)->name_of("nvmlDeviceGetHandleByIndex_v2"), "nvmlDeviceGetHandleByIndex_v2");
  EXPECT_NE((*lib)->api().device_get_clocks_event_reasons, nullptr);
  EXPECT_TRUE((*lib)->missing_optional().empty());
}

TEST(NvmlLoader, MissingRequiredFunctionIsASpecificError) {
  FakeNvml fake("gpus=1\nmissing=nvmlDeviceGetHandleByIndex_v2,nvmlDeviceGetHandleByIndex\n");
  auto lib = Library::open(FakeNvml::library());
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.error().kind, ErrorKind::not_found);
  EXPECT_NE(lib.error().what.find("required"), std::string::npos) << lib.error().what;
  EXPECT_NE(lib.error().what.find("nvmlDeviceGetHandleByIndex_v2 / nvmlDeviceGetHandleByIndex"), std::string::npos)
      << lib.error().what;
  EXPECT_EQ(lib.error().vendor_code, NVML_ERROR_FUNCTION_NOT_FOUND);
}

TEST(NvmlLoader, DriverNotLoadedSaysSo) {
  FakeNvml fake("gpus=1\ninit_return=9\n");
  auto lib = Library::open(FakeNvml::library());
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.error().kind, ErrorKind::unavailable);
  EXPECT_EQ(lib.error().vendor_code, 9);
  EXPECT_NE(lib.error().what.find("nvmlInit_v2"), std::string::npos) << lib.error().what;
  EXPECT_NE(lib.error().what.find("NVML_ERROR_DRIVER_NOT_LOADED"), std::string::npos);
  EXPECT_NE(lib.error().hint.find("kernel driver"), std::string::npos);
}

TEST(NvmlLoader, PermissionErrorGivesAHint) {
  FakeNvml fake("gpus=1\ninit_return=4\n");
  auto lib = Library::open(FakeNvml::library());
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.error().kind, ErrorKind::no_permission);
  EXPECT_EQ(lib.error().vendor_code, 4);
  EXPECT_NE(lib.error().hint.find("/dev/nvidia"), std::string::npos) << lib.error().hint;
}

TEST(NvmlLoader, ToolkitStubIsDetected) {
  FakeNvml fake("gpus=1\n");
  const auto stubs = fake.dir() / "cuda" / "lib64" / "stubs";
  std::filesystem::create_directories(stubs);
  std::filesystem::copy_file(FakeNvml::library(), stubs / "libnvidia-ml.so");
  auto lib = Library::open((stubs / "libnvidia-ml.so").string());
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.error().kind, ErrorKind::unavailable);
  EXPECT_NE(lib.error().what.find("stub"), std::string::npos) << lib.error().what;
  EXPECT_NE(lib.error().hint.find("LD_LIBRARY_PATH"), std::string::npos);
}

TEST(NvmlErrors, CodesMapOntoKindsOnce) {
  EXPECT_EQ(error_kind(NVML_ERROR_GPU_IS_LOST), ErrorKind::device_lost);
  EXPECT_EQ(error_kind(NVML_ERROR_NOT_SUPPORTED), ErrorKind::not_supported);
  EXPECT_EQ(error_kind(NVML_ERROR_FUNCTION_NOT_FOUND), ErrorKind::not_supported);
  EXPECT_EQ(error_kind(NVML_ERROR_NO_PERMISSION), ErrorKind::no_permission);
  EXPECT_EQ(error_kind(NVML_ERROR_DRIVER_NOT_LOADED), ErrorKind::unavailable);
  EXPECT_EQ(error_kind(NVML_ERROR_UNKNOWN), ErrorKind::io);
  EXPECT_EQ(error_kind(NVML_ERROR_INVALID_ARGUMENT), ErrorKind::internal);
  EXPECT_STREQ(return_name(15), "NVML_ERROR_GPU_IS_LOST");
  EXPECT_FALSE(hint_for(NVML_ERROR_GPU_IS_LOST).empty());
}

TEST(NvmlErrors, ErrorNamesCallDomainCodeAndKeepsTheRawCode) {
  FakeNvml fake("gpus=1\n");
  auto lib = Library::open(FakeNvml::library());
  ASSERT_TRUE(lib.ok());
  const Error e = (*lib)->error("nvmlDeviceGetTotalEnergyConsumption", NVML_ERROR_GPU_IS_LOST, "gpu:3");
  EXPECT_EQ(e.kind, ErrorKind::device_lost);
  EXPECT_EQ(e.vendor_code, 15);
  EXPECT_EQ(e.what, "nvmlDeviceGetTotalEnergyConsumption(gpu:3) returned 15 NVML_ERROR_GPU_IS_LOST (\"GPU is lost\")");
  EXPECT_NE(e.hint.find("dmesg"), std::string::npos);
}

}  // namespace
}  // namespace wattlab::nvml
