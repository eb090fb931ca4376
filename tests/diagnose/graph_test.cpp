#include "diagnose/graph.h"

#include <gtest/gtest.h>

#include "diagnose/rules.h"

using namespace wattlab::diagnose;

TEST(Graph, AllNodesAndEdgesOfThePaper) {
  const auto& g = CausalGraph::paper();
  EXPECT_EQ(g.nodes().size(), kNodeCount);
  ASSERT_EQ(g.edges().size(), 16u);
  for (std::size_t i = 0; i < g.edges().size(); ++i) EXPECT_EQ(g.edges()[i].number, static_cast<int>(i + 1));
  std::size_t knobs = 0, latent = 0, observed = 0;
  for (const auto& n : g.nodes()) {
    knobs += n.kind == NodeKind::knob;
    latent += n.kind == NodeKind::latent;
    observed += n.kind == NodeKind::observed;
  }
  EXPECT_EQ(knobs, 6u);
  EXPECT_EQ(latent, 5u);
  EXPECT_EQ(observed, 2u);
  EXPECT_TRUE(g.has_edge(Node::memory_availability, Node::batch_size));
  EXPECT_FALSE(g.has_edge(Node::batch_size, Node::memory_availability));
  EXPECT_TRUE(g.has_edge(Node::throughput_per_watt, Node::energy));  // edge 16 is both ways
  EXPECT_EQ(g.find("Non-GPU bottlenecks"), Node::non_gpu_bottlenecks);
  EXPECT_EQ(g.find("gpu_utilization"), Node::gpu_utilization);
  EXPECT_FALSE(g.find("Temperature").has_value());
}

TEST(Graph, PathsAndReachability) {
  const auto& g = CausalGraph::paper();
  const auto p = g.shortest_path(Node::gpu_count_generation, Node::energy);
  EXPECT_EQ(format_path(p), "GPU count & generation → Memory availability → Batch size → GPU utilization → Energy");
  EXPECT_TRUE(g.is_path(p));
  EXPECT_FALSE(g.is_path({Node::energy, Node::batch_size}));
  EXPECT_TRUE(g.shortest_path(Node::energy, Node::model).empty());
  const auto down = g.downstream(Node::quantization);
  EXPECT_NE(std::find(down.begin(), down.end(), Node::throughput_per_watt), down.end());
  EXPECT_EQ(std::find(down.begin(), down.end(), Node::memory_availability), down.end());
}

TEST(Graph, EveryRulePathIsAPathOfTheGraph) {
  for (const auto& r : rules()) {
    EXPECT_TRUE(CausalGraph::paper().is_path(r.path)) << r.id << ": " << format_path(r.path);
    EXPECT_EQ(r.path.back(), Node::energy) << r.id;
  }
}
