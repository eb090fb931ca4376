// Prometheus text exposition (format 0.0.4) of a meter snapshot: what `wattlab serve` answers
// on /metrics. A pure function of its inputs, so tests compare exact text.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "export/metrics_server.h"
#include "wattlab/meter/meter.h"

namespace wattlab {

struct ExpositionInfo {
  std::string host;              // the host label of every series
  std::string device_selection;  // --device: "auto", "sim", "nvml", "rapl"
  std::string version = "0.1.0";
  // The HTTP server's own counts, when there is a server (wattlab serve).
  std::optional<ServerCounters> http;
};

// Content-Type of the text format.
inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

// Every metric family with HELP and TYPE lines; docs/export.md lists them. Ages are taken against
// snapshot.t_ns. Domains marked simulated carry simulated="true" and their families say SIMULATED.
std::string format_prometheus(const std::vector<Domain>& domains, const MeterSnapshot& snapshot,
                              const ExpositionInfo& info);

// A label value escaped for the text format (backslash, double quote, newline).
std::string prometheus_escape(const std::string& value);

}  // namespace wattlab
