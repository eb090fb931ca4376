#include "diagnose/graph.h"

#include <algorithm>
#include <deque>
#include <stdexcept>

namespace wattlab::diagnose {

const char* to_string(NodeKind k) {
  switch (k) {
    case NodeKind::knob: return "property or knob";
    case NodeKind::latent: return "latent variable";
    case NodeKind::observed: return "observed metric";
  }
  return "?";
}

CausalGraph::CausalGraph() {
  using N = Node;
  using K = NodeKind;
  nodes_ = {
      {N::gpu_count_generation, K::knob, "GPU count & generation", "gpu_count_generation"},
      {N::model, K::knob, "Model", "model"},
      {N::quantization, K::knob, "Quantization", "quantization"},
      {N::runtime_parameters, K::knob, "Runtime parameters", "runtime_parameters"},
      {N::app_constraints, K::knob, "App constraints", "app_constraints"},
      {N::non_gpu_bottlenecks, K::knob, "Non-GPU bottlenecks", "non_gpu_bottlenecks"},
      {N::memory_availability, K::latent, "Memory availability", "memory_availability"},
      {N::memory_footprint, K::latent, "Memory footprint", "memory_footprint"},
      {N::compute_volume, K::latent, "Compute volume", "compute_volume"},
      {N::batch_size, K::latent, "Batch size", "batch_size"},
      {N::gpu_utilization, K::latent, "GPU utilization", "gpu_utilization"},
      {N::energy, K::observed, "Energy", "energy"},
      {N::throughput_per_watt, K::observed, "Throughput/Watt", "throughput_per_watt"},
  };
  edges_ = {
      {1, N::gpu_count_generation, N::memory_availability, false, "more or larger GPUs hold more KV cache"},
      {2, N::model, N::memory_availability, false, "weights leave less room for KV cache"},
      {3, N::model, N::memory_footprint, false, "per-sequence KV size and context length"},
      {4, N::model, N::compute_volume, false, "active parameters, output length"},
      {5, N::quantization, N::memory_footprint, false, "fewer bytes per weight"},
      {6, N::quantization, N::compute_volume, false, "lower-precision arithmetic, extra quantize/scale ops"},
      {7, N::runtime_parameters, N::compute_volume, false, "denoising steps, resolution, frames"},
      {8, N::memory_availability, N::batch_size, false, "memory caps the batch"},
      {9, N::memory_footprint, N::batch_size, false, "a larger footprint per request fits fewer"},
      {10, N::app_constraints, N::batch_size, false, "a deadline or energy budget picks the point"},
      {11, N::non_gpu_bottlenecks, N::batch_size, false, "CPU, network and disk I/O starve the GPU"},
      {12, N::batch_size, N::gpu_utilization, false, "more work per kernel launch"},
      {13, N::compute_volume, N::gpu_utilization, false, "arithmetic intensity of the work"},
      {14, N::compute_volume, N::energy, false, "more work, more joules"},
      {15, N::gpu_utilization, N::energy, false, "low utilization wastes static power"},
      {16, N::energy, N::throughput_per_watt, true, "inverses of each other"},
  };
}

const CausalGraph& CausalGraph::paper() {
  static const CausalGraph g;
  return g;
}

const NodeInfo& CausalGraph::info(Node n) const {
  for (const auto& i : nodes_)
    if (i.node == n) return i;
  throw std::out_of_range("CausalGraph::info: unknown node");
}

std::optional<Node> CausalGraph::find(std::string_view s) const {
  for (const auto& i : nodes_)
    if (s == i.name || s == i.id) return i.node;
  return std::nullopt;
}

bool CausalGraph::has_edge(Node from, Node to) const {
  return std::any_of(edges_.begin(), edges_.end(), [&](const Edge& e) {
    return (e.from == from && e.to == to) || (e.bidirectional && e.from == to && e.to == from);
  });
}

std::vector<Node> CausalGraph::children(Node n) const {
  std::vector<Node> out;
  for (const auto& e : edges_) {
    if (e.from == n) out.push_back(e.to);
    if (e.bidirectional && e.to == n) out.push_back(e.from);
  }
  return out;
}

bool CausalGraph::is_path(const std::vector<Node>& path) const {
  if (path.empty()) return false;
  for (std::size_t i = 1; i < path.size(); ++i)
    if (!has_edge(path[i - 1], path[i])) return false;
  return true;
}

std::vector<Node> CausalGraph::shortest_path(Node from, Node to) const {
  std::array<int, kNodeCount> prev;
  prev.fill(-2);
  std::deque<Node> q{from};
  prev[static_cast<std::size_t>(from)] = -1;
  while (!q.empty()) {
    const Node n = q.front();
    q.pop_front();
    if (n == to) break;
    for (Node c : children(n)) {
      auto& p = prev[static_cast<std::size_t>(c)];
      if (p == -2) {
        p = static_cast<int>(n);
        q.push_back(c);
      }
    }
  }
  if (prev[static_cast<std::size_t>(to)] == -2) return {};
  std::vector<Node> path;
  for (int cur = static_cast<int>(to); cur != -1; cur = prev[static_cast<std::size_t>(cur)])
    path.push_back(static_cast<Node>(cur));
  std::reverse(path.begin(), path.end());
  return path;
}

std::vector<Node> CausalGraph::downstream(Node n) const {
  std::vector<Node> out;
  std::deque<Node> q{n};
  while (!q.empty()) {
    const Node x = q.front();
    q.pop_front();
    for (Node c : children(x)) {
      if (c != n && std::find(out.begin(), out.end(), c) == out.end()) {
        out.push_back(c);
        q.push_back(c);
      }
    }
  }
  return out;
}

std::string format_path(const std::vector<Node>& path) {
  std::string s;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (i) s += " \u2192 ";
    s += CausalGraph::paper().info(path[i]).name;
  }
  return s;
}

}  // namespace wattlab::diagnose
