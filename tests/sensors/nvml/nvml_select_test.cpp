#include "nvml/nvml_select.h"

#include <gtest/gtest.h>

namespace wattlab::nvml {
namespace {

std::vector<GpuIdentity> machine(int n, const std::string& name = "NVIDIA H200") {
  std::vector<GpuIdentity> v;
  for (int i = 0; i < n; ++i) {
    GpuIdentity g;
    g.nvml_index = static_cast<unsigned>(i);
    g.uuid = "GPU-" + std::to_string(1000 + i) + "-aaaa";
    char pci[32];
    std::snprintf(pci, sizeof pci, "00000000:%02X:00.0", 0x10 + i);
    g.pci_bus_id = pci;
    g.name = name;
    v.push_back(g);
  }
  return v;
}

std::vector<unsigned> pick(const Result<Selection>& r) { return r.ok() ? r->nvml_indices : std::vector<unsigned>{99}; }

TEST(NvmlSelect, AllGpusWhenNothingIsSet) {
  auto r = select_gpus(machine(4), {}, nullptr, nullptr);
  EXPECT_EQ(pick(r), (std::vector<unsigned>{0, 1, 2, 3}));
  EXPECT_NE(r->rule.find("all GPUs"), std::string::npos);
}

TEST(NvmlSelect, CudaIndicesFollowPciOrderNotNvmlIndices) {
  auto gpus = machine(4);
  // NVML index 0 sits at the highest PCI address here: CUDA index 0 is the lowest address.
  gpus[0].pci_bus_id = "00000000:F0:00.0";
  auto r = select_gpus(gpus, {}, "0", "PCI_BUS_ID");
  EXPECT_EQ(pick(r), (std::vector<unsigned>{1}));
  r = select_gpus(gpus, {}, "3", "PCI_BUS_ID");
  EXPECT_EQ(pick(r), (std::vector<unsigned>{0}));
  EXPECT_NE(r->rule.find("PCI_BUS_ID"), std::string::npos);
}

TEST(NvmlSelect, FastestFirstOnIdenticalGpusEqualsPciOrder) {
  auto r = select_gpus(machine(4), {}, "2,0", nullptr);
  EXPECT_EQ(pick(r), (std::vector<unsigned>{0, 2}));
  EXPECT_NE(r->rule.find("FASTEST_FIRST"), std::string::npos) << r->rule;
}

TEST(NvmlSelect, FastestFirstOnMixedGpusMeasuresAllAndSaysWhy) {
  auto gpus = machine(3);
  gpus[2].name = "NVIDIA A40";
  auto r = select_gpus(gpus, {}, "1", nullptr);
  EXPECT_EQ(pick(r), (std::vector<unsigned>{0, 1, 2}));
  ASSERT_FALSE(r->notes.empty());
  EXPECT_NE(r->notes.back().find("cannot be known without CUDA"), std::string::npos);
  // With PCI_BUS_ID the same value is exact.
  EXPECT_EQ(pick(select_gpus(gpus, {}, "1", "PCI_BUS_ID")), (std::vector<unsigned>{1}));
}

TEST(NvmlSelect, UuidsAndUniquePrefixes) {
  EXPECT_EQ(pick(select_gpus(machine(4), {}, "GPU-1003-aaaa", nullptr)), (std::vector<unsigned>{3}));
  EXPECT_EQ(pick(select_gpus(machine(4), {}, "GPU-1002", nullptr)), (std::vector<unsigned>{2}));
  EXPECT_EQ(pick(select_gpus(machine(4), {}, "gpu-1001-AAAA,GPU-1003-aaaa", nullptr)), (std::vector<unsigned>{1, 3}));
}

TEST(NvmlSelect, MigUuidSelectsTheParentGpuAndSaysWholeGpu) {
  auto gpus = machine(2);
  gpus[1].mig_uuids = {"MIG-1111-bbbb", "MIG-2222-cccc"};
  auto r = select_gpus(gpus, {}, "MIG-2222-cccc", nullptr);
  EXPECT_EQ(pick(r), (std::vector<unsigned>{1}));
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_NE(r->notes[0].find("whole GPU"), std::string::npos) << r->notes[0];
  // Older form: MIG-GPU-<gpu uuid>/<gi>/<ci>.
  EXPECT_EQ(pick(select_gpus(gpus, {}, "MIG-GPU-1000-aaaa/1/0", nullptr)), (std::vector<unsigned>{0}));
}

TEST(NvmlSelect, ParsingStopsAtTheFirstInvalidEntryAsCudaDoes) {
  auto r = select_gpus(machine(4), {}, "1,7,2", nullptr);
  EXPECT_EQ(pick(r), (std::vector<unsigned>{1}));
  ASSERT_FALSE(r->notes.empty());
  EXPECT_NE(r->notes[0].find("ignores it and every entry after it"), std::string::npos);
  EXPECT_EQ(pick(select_gpus(machine(4), {}, "1,-1,2", nullptr)), (std::vector<unsigned>{1}));
}

TEST(NvmlSelect, EmptyCudaVisibleDevicesSelectsNothing) {
  auto r = select_gpus(machine(2), {}, "", nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::not_found);
  EXPECT_NE(r.error().what.find("selects no GPU"), std::string::npos);
  EXPECT_FALSE(select_gpus(machine(2), {}, "GPU-nope", nullptr).ok());
}

TEST(NvmlSelect, GpusOptionOverridesCudaVisibleDevices) {
  auto r = select_gpus(machine(8), {"5", "GPU-1002"}, "0", nullptr);
  EXPECT_EQ(pick(r), (std::vector<unsigned>{2, 5}));
  EXPECT_NE(r->rule.find("--gpus"), std::string::npos);
  EXPECT_EQ(pick(select_gpus(machine(8), {"1,3"}, nullptr, nullptr)), (std::vector<unsigned>{1, 3}));
}

TEST(NvmlSelect, GpusOptionNamingNoGpuIsAUsageError) {
  auto r = select_gpus(machine(2), {"9"}, nullptr, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::invalid_argument);
  EXPECT_NE(r.error().what.find("'9'"), std::string::npos);
  EXPECT_NE(r.error().hint.find("GPU-1001-aaaa"), std::string::npos);  // lists what exists
  EXPECT_EQ(select_gpus(machine(2), {"GPU-10"}, nullptr, nullptr).error().kind, ErrorKind::invalid_argument);  // ambiguous
}

}  // namespace
}  // namespace wattlab::nvml
