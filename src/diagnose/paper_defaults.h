// The defaults that `wattlab diagnose` takes from "Where Do the Joules Go?" (Chung, Wu, Ma,
// Chowdhury, arXiv 2601.22076): the GPU types its figures use, the latency deadlines of its
// SLO-based selection, and the batch bins of its FP8 comparison.
// Named here so the CLI and the library quote one value, and a reader can check it against the paper.
#pragma once
#include <array>
#include <string_view>
#include <utility>

namespace wattlab::diagnose {

// The GPU type of the paper's minimum-energy figures ("B200 minimum-energy configurations unless
// stated otherwise"): the default of `summary --gpu` and `pairs --kind moe --gpu`.
inline constexpr std::string_view kPaperGpuModel = "B200";

// The GPU-against-GPU comparison at matched deadlines: the older generation is the baseline (A),
// the newer one the alternative (B). Defaults of `pairs --kind gpu --gpu-a / --gpu-b`.
inline constexpr std::string_view kPaperBaselineGpuModel = "H100";
inline constexpr std::string_view kPaperAlternativeGpuModel = "B200";

// The deadlines of the paper's SLO-based selection, in ms: LLM median ITL <= 50, 100 or 250 ms,
// and image batch latency <= 10, 30 or 60 s. The default of `pairs --kind gpu --deadline-ms`.
inline constexpr std::array<double, 6> kPaperDeadlinesMs = {50, 100, 250, 10000, 30000, 60000};

// The batch bins of the FP8-against-BF16 comparison (inclusive): 8-16, 17-64 and 65-256.
inline constexpr std::array<std::pair<int, int>, 3> kPaperFp8BatchBins = {{{8, 16}, {17, 64}, {65, 256}}};

// The smallest batch most of the paper's analyses keep (they drop B < 16); quoted in `--help`.
inline constexpr int kPaperMinBatch = 16;

}  // namespace wattlab::diagnose
