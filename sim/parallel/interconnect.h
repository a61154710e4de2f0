#pragma once
// The interconnect of a GPU cluster (issue 19, point 5): links with a bandwidth per direction
// and a latency per collective step, nodes of GPUs behind one switch, cluster presets, and
// the closed-form cost of NCCL's ring collectives, flat and hierarchical.
//
// Ring collectives over n ranks and S bytes on links of bandwidth B and step latency α
// (Patarasuk & Yuan 2009; NCCL's tuning model, src/graph/tuning.cc: nsteps = 2(n-1) for
// all-reduce, n-1 for reduce-scatter and all-gather, algorithm bandwidth B n / nsteps):
//   all-reduce      2(n-1)/n S/B + 2(n-1) α
//   reduce-scatter  (n-1)/n S/B + (n-1) α   (S: the whole buffer, S/n left on each rank)
//   all-gather      (n-1)/n S/B + (n-1) α   (S: the gathered buffer)
// A group spanning N nodes with g ranks on each runs the hierarchical form: a reduce-scatter
// over NVLink within the node, the inter-node collective on S/g bytes in g parallel rings
// (one per GPU's own NIC: rail-optimised DGX fabrics), an all-gather within the node.
#include <cstdint>
#include <string>
#include <string_view>

#include "core/time.h"

namespace fusim::parallel {

struct LinkSpec {
  std::string_view name;
  double bytes_per_s = 0;                        // per direction, per GPU
  Tick latency = 0;                              // α: one step of a ring collective over this link
  Tick transfer_time(std::int64_t bytes) const;  // bytes / bytes_per_s, rounded to a ps
};
// "nvlink3", "nvlink4", "pcie4", "pcie5", "ib-hdr", "ib-ndr"; InputError otherwise.
const LinkSpec& link_preset(std::string_view name);
std::string link_presets();

struct ClusterSpec {
  std::string_view name;
  std::string_view gpu;  // a stage_memory.h GPU preset
  int gpus_per_node = 8;
  LinkSpec intra;  // each GPU's port into the node's switch (NVSwitch: non-blocking)
  LinkSpec inter;  // each GPU's own NIC (rail-optimised: GPU k of every node on rail k)
};
// "dgx-a100", "dgx-h100"; InputError naming --cluster otherwise.
const ClusterSpec& cluster_preset(std::string_view name);
std::string cluster_presets();

enum class Collective { AllReduce, ReduceScatter, AllGather };
std::string_view to_string(Collective c);

// Closed form of a flat ring over n ranks all on `link` (0 for n == 1).
Tick ring_collective_time(Collective c, int n, std::int64_t bytes, const LinkSpec& link);

// Where a communication group sits: ranks in all, ranks_per_node of them on each node it
// spans (ranks / ranks_per_node nodes). Megatron orders ranks tp, cp, dp, pp (fastest first:
// parallel_state.RankGenerator "tp-cp-ep-dp-pp"), so a group of stride k (tp 1, cp tp,
// dp tp cp, pp tp cp dp) has min(n, max(1, g / k)) ranks per node.
struct GroupShape {
  int ranks = 1;
  int ranks_per_node = 1;
};
GroupShape group_shape(int ranks, int stride, int gpus_per_node);

// The collective on a group of the cluster: within a node the intra ring, one rank per node
// the inter ring, else the hierarchical form above.
Tick collective_time(Collective c, GroupShape group, std::int64_t bytes, const ClusterSpec& cl);

}  // namespace fusim::parallel
