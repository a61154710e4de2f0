#pragma once
// Collectives run as messages on the links of a cluster (issue 19, point 5), so that
// communications contend: each GPU has two egress links, its port into the node's switch and
// its NIC; a message waits for its sender's link to finish what was queued on it before
// (first come, first served), occupies it bytes / B and arrives α after it left. The closed
// forms of interconnect.h are what these runs give without contention (tests).
#include <cstdint>
#include <vector>

#include "parallel/interconnect.h"

namespace fusim::parallel {

// One message on a link, for timelines: the sending GPU's link (intra: its switch port;
// inter: its NIC) occupied from start to end.
struct LinkMessage {
  int gpu = 0;
  bool inter = false;
  Tick start = 0, end = 0;
  std::int64_t bytes = 0;
};

class LinkNetwork {
 public:
  LinkNetwork(const ClusterSpec& cluster, int gpus);

  int gpus() const { return int(free_at_.size() / 2); }
  int node_of(int gpu) const { return gpu / cluster_.gpus_per_node; }
  // One message from `from` to `to` (two GPUs) ready at `ready`: returns its arrival.
  Tick send(int from, int to, std::int64_t bytes, Tick ready);
  // Time each link of `gpu` spent sending (intra: its switch port; else its NIC).
  Tick busy(int gpu, bool inter) const { return busy_[index(gpu, inter)]; }
  // Keep every message from now on (timelines); off by default.
  void record(bool on) { record_ = on; }
  const std::vector<LinkMessage>& messages() const { return messages_; }

 private:
  std::size_t index(int gpu, bool inter) const { return std::size_t(2 * gpu + (inter ? 1 : 0)); }
  const LinkSpec& link(bool inter) const { return inter ? cluster_.inter : cluster_.intra; }

  ClusterSpec cluster_;
  std::vector<Tick> free_at_, busy_;  // per GPU: intra, inter
  bool record_ = false;
  std::vector<LinkMessage> messages_;
};

// A ring collective over `ranks` (GPU ids in ring order) from per-rank ready times: in step
// k each rank sends one chunk (bytes / n) to the next rank once it has the chunk of step k-1
// from the previous one (2(n-1) steps for all-reduce, n-1 otherwise). Returns, per rank, when
// its part is complete.
std::vector<Tick> run_ring(LinkNetwork& net, Collective c, const std::vector<int>& ranks,
                           std::int64_t bytes, const std::vector<Tick>& ready);

// The collective over a group of whole nodes as NCCL runs it on a multi-node group: a flat
// ring within one node or with one rank per node, else the hierarchical form (intra-node
// reduce-scatter, inter-node rings of the GPUs of equal local rank, intra-node all-gather).
// `ranks` ascending; each node the group spans holds as many of them.
std::vector<Tick> run_collective(LinkNetwork& net, Collective c, const std::vector<int>& ranks,
                                 std::int64_t bytes, Tick start);

}  // namespace fusim::parallel
