// TorusHamiltonianCycles: the two cycles hamiltonian-rings runs on an n x n
// torus plane are each one cycle through every chip, move one wraparound hop
// per step, and share no undirected edge, so together they use every edge of
// the torus exactly once (all four ports of every chip).
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "sim/ici/collectives.h"

namespace tpusim::ici {
namespace {

using Coord = std::pair<int64_t, int64_t>;
using Edge = std::pair<Coord, Coord>;  // undirected: the smaller end first

/// The undirected edges of `cycle`, closing edge included; fails the test if
/// a step is not one +x or +y hop with wraparound.
std::set<Edge> EdgesOf(const std::vector<Coord>& cycle, int64_t n) {
  std::set<Edge> edges;
  for (size_t i = 0; i < cycle.size(); ++i) {
    const Coord a = cycle[i];
    const Coord b = cycle[(i + 1) % cycle.size()];
    const bool plus_x = b.first == (a.first + 1) % n && b.second == a.second;
    const bool plus_y = b.second == (a.second + 1) % n && b.first == a.first;
    EXPECT_TRUE(plus_x || plus_y) << "n=" << n << " step " << i;
    edges.insert(a < b ? Edge{a, b} : Edge{b, a});
  }
  return edges;
}

TEST(HamiltonianCyclesTest, TwoEdgeDisjointHamiltonianCyclesForEveryN) {
  for (int64_t n = 3; n <= 16; ++n) {
    const auto cycles = TorusHamiltonianCycles(n);
    std::set<Edge> all;
    for (const std::vector<Coord>& cycle : cycles) {
      ASSERT_EQ(static_cast<int64_t>(cycle.size()), n * n) << "n=" << n;
      const std::set<Coord> chips(cycle.begin(), cycle.end());
      EXPECT_EQ(static_cast<int64_t>(chips.size()), n * n) << "n=" << n << ": a chip repeats";
      const std::set<Edge> edges = EdgesOf(cycle, n);
      EXPECT_EQ(static_cast<int64_t>(edges.size()), n * n) << "n=" << n << ": an edge repeats";
      for (const Edge& e : edges) {
        EXPECT_TRUE(all.insert(e).second) << "n=" << n << ": the cycles share an edge";
      }
    }
    // 2n² undirected edges: every edge of the n x n torus, once.
    EXPECT_EQ(static_cast<int64_t>(all.size()), 2 * n * n) << "n=" << n;
  }
}

// The rule the decomposition follows: on the anti-diagonal x + y ≡ 0 cycle 0
// steps +y and cycle 1 steps +x; elsewhere the other way round.
TEST(HamiltonianCyclesTest, CyclesFollowTheAntiDiagonalRule) {
  const int64_t n = 5;
  const auto cycles = TorusHamiltonianCycles(n);
  for (size_t c = 0; c < cycles.size(); ++c) {
    for (size_t i = 0; i < cycles[c].size(); ++i) {
      const auto [x, y] = cycles[c][i];
      const auto [nx, ny] = cycles[c][(i + 1) % cycles[c].size()];
      const bool on_diagonal = (x + y) % n == 0;
      const bool steps_y = nx == x && ny == (y + 1) % n;
      EXPECT_EQ(steps_y, on_diagonal == (c == 0)) << "cycle " << c << " at (" << x << "," << y << ")";
    }
  }
}

// n = 2 has no two disjoint Hamiltonian cycles (+1 and -1 are the same
// neighbour); smaller planes get none.
TEST(HamiltonianCyclesTest, NoCyclesBelowThree) {
  for (int64_t n = 0; n < 3; ++n) {
    const auto cycles = TorusHamiltonianCycles(n);
    EXPECT_TRUE(cycles[0].empty());
    EXPECT_TRUE(cycles[1].empty());
  }
}

}  // namespace
}  // namespace tpusim::ici
