#include "parallel/link_sim.h"

#include <algorithm>
#include <map>

#include "core/error.h"

namespace fusim::parallel {

LinkNetwork::LinkNetwork(const ClusterSpec& cluster, int gpus)
    : cluster_(cluster), free_at_(std::size_t(2 * gpus), 0), busy_(std::size_t(2 * gpus), 0) {
  FUSIM_ASSERT(gpus >= 1, "a network of GPUs");
}

Tick LinkNetwork::send(int from, int to, std::int64_t bytes, Tick ready) {
  FUSIM_ASSERT(from != to && from >= 0 && to >= 0 && from < gpus() && to < gpus(),
               "a message between two GPUs of the network");
  const bool inter = node_of(from) != node_of(to);
  const std::size_t i = index(from, inter);
  const Tick start = std::max(ready, free_at_[i]);
  const Tick occupied = link(inter).transfer_time(bytes);
  free_at_[i] = start + occupied;
  busy_[i] += occupied;
  if (record_) messages_.push_back({from, inter, start, free_at_[i], bytes});
  return free_at_[i] + link(inter).latency;
}

std::vector<Tick> run_ring(LinkNetwork& net, Collective c, const std::vector<int>& ranks,
                           std::int64_t bytes, const std::vector<Tick>& ready) {
  const int n = int(ranks.size());
  FUSIM_ASSERT(n >= 1 && ready.size() == ranks.size(), "ring ranks and ready times");
  if (n == 1) return ready;
  const int steps = c == Collective::AllReduce ? 2 * (n - 1) : n - 1;
  const std::int64_t chunk = bytes / n;
  // have[i]: when rank i holds what it sends in the next step.
  std::vector<Tick> have = ready;
  std::vector<Tick> next(std::size_t(n), 0);
  for (int k = 0; k < steps; ++k) {
    for (int i = 0; i < n; ++i) {
      const int to = (i + 1) % n;
      next[std::size_t(to)] =
          net.send(ranks[std::size_t(i)], ranks[std::size_t(to)], chunk, have[std::size_t(i)]);
    }
    // A rank's next send also waits for its own previous one to have left (its ready time
    // is already behind it: max keeps the order of steps on one rank).
    for (int i = 0; i < n; ++i)
      have[std::size_t(i)] = std::max(have[std::size_t(i)], next[std::size_t(i)]);
  }
  return have;
}

std::vector<Tick> run_collective(LinkNetwork& net, Collective c, const std::vector<int>& ranks,
                                 std::int64_t bytes, Tick start) {
  std::map<int, std::vector<int>> by_node;
  for (int r : ranks) by_node[net.node_of(r)].push_back(r);
  const int nodes = int(by_node.size());
  const int g = int(by_node.begin()->second.size());
  for (const auto& [node, members] : by_node)
    FUSIM_ASSERT(int(members.size()) == g, "a group holds as many ranks on each of its nodes");
  std::vector<Tick> ready(ranks.size(), start);
  if (nodes == 1 || g == 1) return run_ring(net, c, ranks, bytes, ready);

  std::map<int, Tick> done;  // per GPU
  for (int r : ranks) done[r] = start;
  auto phase = [&](Collective pc, bool inter, std::int64_t size) {
    std::vector<std::vector<int>> rings;
    if (inter) {
      for (int j = 0; j < g; ++j) {
        rings.emplace_back();
        for (const auto& [node, members] : by_node) rings.back().push_back(members[std::size_t(j)]);
      }
    } else {
      for (const auto& [node, members] : by_node) rings.push_back(members);
    }
    for (const auto& ring : rings) {
      std::vector<Tick> at;
      for (int r : ring) at.push_back(done[r]);
      const auto end = run_ring(net, pc, ring, size, at);
      for (std::size_t i = 0; i < ring.size(); ++i) done[ring[i]] = end[i];
    }
  };
  const std::int64_t shard = bytes / g;
  switch (c) {
    case Collective::AllReduce:
      phase(Collective::ReduceScatter, false, bytes);
      phase(Collective::AllReduce, true, shard);
      phase(Collective::AllGather, false, bytes);
      break;
    case Collective::ReduceScatter:
      phase(Collective::ReduceScatter, false, bytes);
      phase(Collective::ReduceScatter, true, shard);
      break;
    case Collective::AllGather:
      phase(Collective::AllGather, true, shard);
      phase(Collective::AllGather, false, bytes);
      break;
  }
  std::vector<Tick> out;
  for (int r : ranks) out.push_back(done[r]);
  return out;
}

}  // namespace fusim::parallel
