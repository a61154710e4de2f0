#include "schedule/op_graph.h"

#include <algorithm>
#include <boost/graph/topological_sort.hpp>
#include <iterator>

namespace fusim::schedule {

OpGraph make_op_graph(const Schedule& schedule) {
  const int n = int(schedule.ops.size());
  OpGraph graph{std::size_t(n)};
  for (int i = 0; i < n; ++i) {
    const Op& op = schedule.ops[std::size_t(i)];
    for (std::size_t k = 0; k < op.deps.size(); ++k) {
      int d = op.deps[k];
      if (d < 0 || d >= n) continue;
      DepKind kind = k < op.dep_kinds.size() ? op.dep_kinds[k] : DepKind::Data;
      boost::add_edge(std::size_t(d), std::size_t(i), EdgeInfo{kind}, graph);
    }
  }
  return graph;
}

std::optional<std::vector<int>> topological_order(const OpGraph& graph) {
  std::vector<std::size_t> reversed;
  try {
    boost::topological_sort(graph, std::back_inserter(reversed));
  } catch (const boost::not_a_dag&) {
    return std::nullopt;
  }
  std::vector<int> order(reversed.rbegin(), reversed.rend());
  return order;
}

std::vector<int> find_cycle(const OpGraph& graph) {
  // Iterative DFS with colours; the grey stack is the cycle when a back edge appears.
  const std::size_t n = boost::num_vertices(graph);
  std::vector<int> colour(n, 0), parent(n, -1);
  for (std::size_t root = 0; root < n; ++root) {
    if (colour[root]) continue;
    std::vector<std::pair<std::size_t, OpGraph::out_edge_iterator>> stack;
    colour[root] = 1;
    stack.push_back({root, boost::out_edges(root, graph).first});
    while (!stack.empty()) {
      auto& [v, it] = stack.back();
      if (it == boost::out_edges(v, graph).second) {
        colour[v] = 2;
        stack.pop_back();
        continue;
      }
      std::size_t w = boost::target(*it, graph);
      ++it;
      if (colour[w] == 1) {
        std::vector<int> cycle;
        for (std::size_t k = 0; k < stack.size(); ++k)
          if (stack[k].first == w || !cycle.empty()) cycle.push_back(int(stack[k].first));
        return cycle;
      }
      if (colour[w] == 0) {
        colour[w] = 1;
        stack.push_back({w, boost::out_edges(w, graph).first});
      }
    }
  }
  return {};
}

}  // namespace fusim::schedule
