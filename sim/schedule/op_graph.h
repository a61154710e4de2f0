#pragma once
// The op DAG of a schedule as a Boost.Graph: vertex i is Schedule::ops[i], an edge d -> i
// for each dependency d of op i, tagged data or control.
#include <boost/graph/adjacency_list.hpp>
#include <optional>
#include <vector>

#include "schedule/schedule.h"

namespace fusim::schedule {

struct EdgeInfo {
  DepKind kind = DepKind::Data;
};
using OpGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS,
                                      boost::no_property, EdgeInfo>;

// Dependencies naming ops outside the schedule are skipped (the checker reports them).
OpGraph make_op_graph(const Schedule& schedule);

// A topological order of the ops, or nullopt when the dependencies have a cycle.
std::optional<std::vector<int>> topological_order(const OpGraph& graph);

// The ops on one cycle (for messages), empty when acyclic.
std::vector<int> find_cycle(const OpGraph& graph);

}  // namespace fusim::schedule
