// The causal graph of "Where Do the Joules Go?" (docs/joules-framework.md §2) as data:
// knobs and properties -> latent variables -> observed metrics. Rules name their explanation as a
// path through this graph, and every path is checked against the edges.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wattlab::diagnose {

enum class NodeKind { knob, latent, observed };  // gray, blue, orange in the paper's figure
const char* to_string(NodeKind k);

enum class Node {
  gpu_count_generation,
  model,
  quantization,
  runtime_parameters,
  app_constraints,
  non_gpu_bottlenecks,
  memory_availability,
  memory_footprint,
  compute_volume,
  batch_size,
  gpu_utilization,
  energy,
  throughput_per_watt,
};
inline constexpr std::size_t kNodeCount = 13;

struct NodeInfo {
  Node node;
  NodeKind kind;
  const char* name;  // as in the paper: "GPU count & generation"
  const char* id;    // snake_case, for JSON
};

struct Edge {
  int number;  // the doc's numbering, 1..16
  Node from;
  Node to;
  bool bidirectional;  // edge 16 (Energy <-> Throughput/Watt, dashed)
  const char* why;
};

class CausalGraph {
 public:
  static const CausalGraph& paper();  // the graph of arXiv 2601.22076, all 13 nodes and 16 edges

  const std::vector<NodeInfo>& nodes() const { return nodes_; }
  const std::vector<Edge>& edges() const { return edges_; }
  const NodeInfo& info(Node n) const;
  std::optional<Node> find(std::string_view name_or_id) const;

  bool has_edge(Node from, Node to) const;
  std::vector<Node> children(Node n) const;
  // True when every consecutive pair of `path` is an edge.
  bool is_path(const std::vector<Node>& path) const;
  // The shortest directed path from `from` to `to` (breadth-first), empty when none.
  std::vector<Node> shortest_path(Node from, Node to) const;
  // Every node reachable from `n` (its downstream effects).
  std::vector<Node> downstream(Node n) const;

 private:
  CausalGraph();
  std::vector<NodeInfo> nodes_;
  std::vector<Edge> edges_;
};

// "Batch size → GPU utilization → Energy".
std::string format_path(const std::vector<Node>& path);

}  // namespace wattlab::diagnose
