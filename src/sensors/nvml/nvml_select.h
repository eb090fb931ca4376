// Which GPUs belong to the command: --gpus, else CUDA_VISIBLE_DEVICES, else all.
// Pure function of the GPUs' identities and the settings, so it is tested apart from NVML.
//
// The rule (also in README.md):
//  * --gpus (BackendOptions::gpus) wins. Entries are NVML indices (wattlab's gpu:<i>, PCI bus order)
//    or UUIDs (GPU-..., MIG-..., or a unique prefix of one); comma lists are split. An entry that
//    names no GPU is a usage error (exit 2).
//  * Else CUDA_VISIBLE_DEVICES, read the way CUDA reads it: entries in order, parsing stops at the
//    first entry that names no device; an empty value means no GPU.
//     - GPU-<uuid> (or a unique prefix) is matched against nvmlDeviceGetUUID.
//     - MIG-<uuid> (and the older MIG-GPU-<uuid>/<gi>/<ci>) selects the parent GPU: NVML has no
//       per-instance energy, so the whole GPU is measured and this is said.
//     - An integer is a CUDA index, never an NVML index. CUDA numbers devices by
//       CUDA_DEVICE_ORDER: PCI_BUS_ID is PCI bus order; FASTEST_FIRST (the default) puts faster
//       devices first and breaks ties by PCI bus id. So integers map through PCI bus id order when
//       CUDA_DEVICE_ORDER=PCI_BUS_ID, or when every GPU is the same model (fastest-first then equals
//       PCI order). On a mixed machine under FASTEST_FIRST the CUDA order cannot be known without
//       CUDA: every GPU is measured and the note says so (use UUIDs or PCI_BUS_ID to narrow it).
//  * Else every GPU.
#pragma once
#include <string>
#include <vector>

#include "wattlab/core/error.h"

namespace wattlab::nvml {

struct GpuIdentity {
  unsigned nvml_index = 0;
  std::string uuid;        // "GPU-..."
  std::string pci_bus_id;  // "00000000:19:00.0"; empty if unknown
  std::string name;        // "NVIDIA H200"
  std::vector<std::string> mig_uuids;  // "MIG-..." of its MIG devices (MIG mode on)
};

struct Selection {
  std::vector<unsigned> nvml_indices;  // ascending
  std::string rule;                    // what decided it, in words, with the setting's value
  std::vector<std::string> notes;      // MIG, ignored entries, ambiguity
};

// cuda_visible / cuda_order: the environment values, nullptr when unset.
Result<Selection> select_gpus(const std::vector<GpuIdentity>& gpus, const std::vector<std::string>& option_gpus,
                              const char* cuda_visible, const char* cuda_order);

}  // namespace wattlab::nvml
