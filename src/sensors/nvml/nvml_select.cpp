#include "nvml/nvml_select.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <optional>

namespace wattlab::nvml {
namespace {

std::string trim(std::string s) {
  auto sp = [](unsigned char c) { return std::isspace(c) != 0; };
  while (!s.empty() && sp(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && sp(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t p = s.find(',', start);
    out.push_back(trim(s.substr(start, p == std::string::npos ? std::string::npos : p - start)));
    if (p == std::string::npos) break;
    start = p + 1;
  }
  return out;
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

bool starts_with_ci(const std::string& s, const std::string& prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != std::tolower(static_cast<unsigned char>(prefix[i])))
      return false;
  return true;
}

std::string gpu_id(unsigned i) { return "gpu:" + std::to_string(i); }

struct Match {
  std::optional<std::size_t> pos;  // position in `gpus`
  std::string note;                // MIG note, or why nothing matched
  bool ambiguous = false;
};

// A GPU-/MIG- UUID or unique prefix of one.
Match match_uuid(const std::vector<GpuIdentity>& gpus, const std::string& entry) {
  Match m;
  std::string token = entry;
  // Older MIG form: MIG-GPU-<gpu uuid>/<gi>/<ci> names the parent GPU by its UUID.
  if (starts_with_ci(token, "MIG-GPU-")) {
    token = token.substr(4, token.find('/') == std::string::npos ? std::string::npos : token.find('/') - 4);
  }
  const bool mig = starts_with_ci(token, "MIG-");
  std::vector<std::size_t> hits;
  for (std::size_t k = 0; k < gpus.size(); ++k) {
    if (mig) {
      for (const auto& u : gpus[k].mig_uuids)
        if (starts_with_ci(u, token)) hits.push_back(k);
    } else if (starts_with_ci(gpus[k].uuid, token)) {
      hits.push_back(k);
    }
  }
  std::sort(hits.begin(), hits.end());
  hits.erase(std::unique(hits.begin(), hits.end()), hits.end());
  if (hits.size() == 1) {
    m.pos = hits[0];
    if (mig || token != entry)
      m.note = entry + " is a MIG instance of " + gpu_id(gpus[hits[0]].nvml_index) +
               ": NVML has no per-instance power or energy, so the whole GPU is measured";
  } else if (hits.size() > 1) {
    m.ambiguous = true;
    m.note = "'" + entry + "' matches " + std::to_string(hits.size()) + " GPUs";
  } else {
    m.note = "'" + entry + "' matches no GPU UUID" + (mig ? " or MIG device UUID" : "");
  }
  return m;
}

std::string known_gpus(const std::vector<GpuIdentity>& gpus) {
  std::string s;
  for (const auto& g : gpus) {
    if (!s.empty()) s += ", ";
    s += std::to_string(g.nvml_index) + " (" + g.uuid + ")";
  }
  return s.empty() ? "none" : s;
}

}  // namespace

Result<Selection> select_gpus(const std::vector<GpuIdentity>& gpus, const std::vector<std::string>& option_gpus,
                              const char* cuda_visible, const char* cuda_order) {
  Selection sel;
  std::vector<std::size_t> picked;  // positions in `gpus`

  std::vector<std::string> opt;
  for (const auto& o : option_gpus)
    for (auto& e : split_commas(o))
      if (!e.empty()) opt.push_back(e);

  if (!opt.empty()) {
    std::string joined;
    for (const auto& e : opt) {
      joined += (joined.empty() ? "" : ",") + e;
      std::optional<std::size_t> pos;
      std::string why;
      if (all_digits(e)) {
        const unsigned long idx = std::stoul(e);
        for (std::size_t k = 0; k < gpus.size(); ++k)
          if (gpus[k].nvml_index == idx) pos = k;
        if (!pos) why = "no GPU has NVML index " + e;
      } else {
        Match m = match_uuid(gpus, e);
        pos = m.pos;
        if (pos && !m.note.empty()) sel.notes.push_back(m.note);
        if (!pos) why = m.note;
      }
      if (!pos) {
        return Error{ErrorKind::invalid_argument, "--gpus '" + e + "': " + why,
                     "use NVML indices or UUIDs (GPU-..., MIG-..., or a unique prefix); this machine has " +
                         known_gpus(gpus),
                     0};
      }
      picked.push_back(*pos);
    }
    sel.rule = "--gpus " + joined + " (overrides CUDA_VISIBLE_DEVICES)";
  } else if (cuda_visible) {
    const std::string value = cuda_visible;
    const std::string order = cuda_order ? cuda_order : "";
    const bool pci_order = order == "PCI_BUS_ID";
    bool same_model = true;
    for (const auto& g : gpus) same_model = same_model && g.name == gpus.front().name;
    // PCI bus id order (NVML's own order; sorted explicitly in case it is not).
    std::vector<std::size_t> by_pci(gpus.size());
    std::iota(by_pci.begin(), by_pci.end(), std::size_t{0});
    std::stable_sort(by_pci.begin(), by_pci.end(),
                     [&](std::size_t a, std::size_t b) { return gpus[a].pci_bus_id < gpus[b].pci_bus_id; });
    bool integers = false, ambiguous_integers = false;
    if (!trim(value).empty()) {
      for (const auto& e : split_commas(value)) {
        std::optional<std::size_t> pos;
        std::string why;
        if (all_digits(e)) {
          integers = true;
          const unsigned long idx = std::stoul(e);
          if (!pci_order && !same_model) {
            ambiguous_integers = true;
            continue;
          }
          if (idx < by_pci.size()) pos = by_pci[idx];
          else why = "CUDA index " + e + " is past the " + std::to_string(gpus.size()) + " GPUs";
        } else if (starts_with_ci(e, "GPU-") || starts_with_ci(e, "MIG-")) {
          Match m = match_uuid(gpus, e);
          pos = m.pos;
          if (pos && !m.note.empty()) sel.notes.push_back(m.note);
          if (!pos) why = m.note;
        } else {
          why = "'" + e + "' is neither an index nor a GPU-/MIG- UUID";
        }
        if (!pos) {
          sel.notes.push_back("CUDA_VISIBLE_DEVICES entry " + why + "; CUDA ignores it and every entry after it");
          break;
        }
        picked.push_back(*pos);
      }
    }
    sel.rule = "CUDA_VISIBLE_DEVICES=" + value;
    if (integers)
      sel.rule += pci_order ? " (indices in PCI bus order: CUDA_DEVICE_ORDER=PCI_BUS_ID)"
                            : same_model ? " (indices in PCI bus order: all GPUs are " + gpus.front().name +
                                               ", so CUDA's FASTEST_FIRST order equals it)"
                                         : "";
    if (ambiguous_integers) {
      picked.clear();
      for (std::size_t k = 0; k < gpus.size(); ++k) picked.push_back(k);
      sel.notes.push_back("CUDA_VISIBLE_DEVICES uses indices under CUDA_DEVICE_ORDER=" +
                          (order.empty() ? std::string("FASTEST_FIRST (default)") : order) +
                          " on GPUs of different models: which GPUs CUDA numbers so cannot be known without CUDA, "
                          "so all " + std::to_string(gpus.size()) +
                          " GPUs are measured; use UUIDs, CUDA_DEVICE_ORDER=PCI_BUS_ID or --gpus to narrow it");
    }
    if (picked.empty()) {
      return Error{ErrorKind::not_found,
                   "CUDA_VISIBLE_DEVICES='" + value + "' selects no GPU" +
                       (sel.notes.empty() ? std::string() : ": " + sel.notes.back()),
                   "the command will see no GPU; unset CUDA_VISIBLE_DEVICES or pass --gpus (this machine has " +
                       known_gpus(gpus) + ")",
                   0};
    }
  } else {
    for (std::size_t k = 0; k < gpus.size(); ++k) picked.push_back(k);
    sel.rule = "all GPUs (no --gpus, CUDA_VISIBLE_DEVICES unset)";
  }

  for (std::size_t k : picked) sel.nvml_indices.push_back(gpus[k].nvml_index);
  std::sort(sel.nvml_indices.begin(), sel.nvml_indices.end());
  sel.nvml_indices.erase(std::unique(sel.nvml_indices.begin(), sel.nvml_indices.end()), sel.nvml_indices.end());
  return sel;
}

}  // namespace wattlab::nvml
