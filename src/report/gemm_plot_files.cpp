#include "report/gemm_plot_files.h"

#include <fmt/format.h>

#include <cctype>
#include <filesystem>

#include "report/gemm_plots.h"
#include "report/plot.h"

namespace wattlab::report {

std::string gemm_plot_file_name(const std::string& sweep, const GemmPlotKey& key, GemmQty q) {
  std::string name = fmt::format("gemm_{}_{}_{}_{}.svg", sweep.empty() ? "nosweep" : sweep, key.experiment,
                                 key.shape == "0x0x0" ? "control" : key.shape, q == GemmQty::power ? "power" : "energy");
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') c = '_';
  return name;
}

Result<std::size_t> write_gemm_plot_files(const std::vector<GemmSweepAnalysis>& analyses, const std::string& dir) {
  std::size_t n = 0;
  for (const auto& a : analyses)
    for (const auto& key : gemm_plot_keys(a))
      for (auto q : {GemmQty::energy_per_gemm, GemmQty::power}) {
        auto plot = gemm_normalized_plot(a, key, q);
        if (!plot) continue;
        auto r = render(*plot, (std::filesystem::path(dir) / gemm_plot_file_name(a.sweep, key, q)).string(), false);
        if (!r) return r.error();
        ++n;
      }
  return n;
}

}  // namespace wattlab::report
