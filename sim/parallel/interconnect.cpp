#include "parallel/interconnect.h"

#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <cmath>

#include "core/error.h"

namespace fusim::parallel {
namespace {
// Step latencies α: NCCL's hardware latency of one ring step with the Simple protocol
// (src/graph/tuning.cc, hwLat[hw][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] at NVIDIA/nccl commit
// 01afd20: NVLink 3.4 us, PCI 5.7 us, network 9.6 us).
constexpr double kNvlinkUs = 3.4, kPciUs = 5.7, kNetUs = 9.6;

// Bandwidths per direction of one GPU:
//  nvlink3: A100, 12 third-generation links x 25 GB/s = 300 GB/s each way ("600 GB/s total",
//           NVIDIA A100 Tensor Core GPU Architecture whitepaper, 2020);
//  nvlink4: H100 SXM5, 18 fourth-generation links x 25 GB/s = 450 GB/s ("900 GB/s total",
//           NVIDIA H100 Tensor Core GPU Architecture whitepaper, 2022);
//  pcie4:   x16 at 16 GT/s with 128b/130b coding, 31.5 GB/s (PCI Express Base Spec 4.0);
//  pcie5:   x16 at 32 GT/s, 63.0 GB/s (PCI Express Base Spec 5.0);
//  ib-hdr:  200 Gb/s InfiniBand HDR (ConnectX-6), 25 GB/s;
//  ib-ndr:  400 Gb/s InfiniBand NDR (ConnectX-7), 50 GB/s.
const std::array<LinkSpec, 6> kLinks{{
    {"nvlink3", 300e9, us(kNvlinkUs)},
    {"nvlink4", 450e9, us(kNvlinkUs)},
    {"pcie4", 16e9 * 16 * 128.0 / 130.0 / 8.0, us(kPciUs)},
    {"pcie5", 32e9 * 16 * 128.0 / 130.0 / 8.0, us(kPciUs)},
    {"ib-hdr", 200e9 / 8.0, us(kNetUs)},
    {"ib-ndr", 400e9 / 8.0, us(kNetUs)},
}};

// DGX A100: 8 A100 SXM4 80 GB on NVLink 3 through 6 NVSwitches, 8 single-port ConnectX-6
// HDR 200 Gb/s compute NICs, one per GPU (NVIDIA DGX A100 User Guide, "Hardware Overview").
// DGX H100: 8 H100 SXM5 80 GB on NVLink 4 through 4 NVSwitches, 8 ConnectX-7 NDR 400 Gb/s
// compute ports, one per GPU (NVIDIA DGX H100 User Guide, "Hardware Overview").
const std::array<ClusterSpec, 2> kClusters{{
    {"dgx-a100", "a100-sxm4-80gb", 8, kLinks[0], kLinks[4]},
    {"dgx-h100", "h100-sxm5", 8, kLinks[1], kLinks[5]},
}};

template <typename T, std::size_t N>
std::string names(const std::array<T, N>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ", ") + std::string(i.name);
  return s;
}

// Steps of a ring collective over n ranks.
int ring_steps(Collective c, int n) {
  return c == Collective::AllReduce ? 2 * (n - 1) : n - 1;
}
}  // namespace

Tick LinkSpec::transfer_time(std::int64_t bytes) const {
  return Tick(std::llround(double(bytes) * double(kTicksPerS) / bytes_per_s));
}

const LinkSpec& link_preset(std::string_view name) {
  for (const auto& l : kLinks)
    if (l.name == name) return l;
  throw InputError(fmt::format("link: expected one of {}, got \"{}\"", names(kLinks), name));
}
std::string link_presets() {
  return names(kLinks);
}

const ClusterSpec& cluster_preset(std::string_view name) {
  for (const auto& c : kClusters)
    if (c.name == name) return c;
  throw InputError(
      fmt::format("--cluster: expected one of {}, got \"{}\"", names(kClusters), name));
}
std::string cluster_presets() {
  return names(kClusters);
}

std::string_view to_string(Collective c) {
  switch (c) {
    case Collective::AllReduce:
      return "all-reduce";
    case Collective::ReduceScatter:
      return "reduce-scatter";
    case Collective::AllGather:
      return "all-gather";
  }
  return "?";
}

Tick ring_collective_time(Collective c, int n, std::int64_t bytes, const LinkSpec& link) {
  FUSIM_ASSERT(n >= 1, "a collective needs a rank");
  if (n == 1) return 0;
  const int steps = ring_steps(c, n);
  // Each step moves one of n chunks over every link of the ring at once.
  const double seconds = double(steps) * (double(bytes) / n) / link.bytes_per_s;
  return Tick(std::llround(seconds * double(kTicksPerS))) + steps * link.latency;
}

GroupShape group_shape(int ranks, int stride, int gpus_per_node) {
  FUSIM_ASSERT(ranks >= 1 && stride >= 1 && gpus_per_node >= 1, "group shape");
  return {ranks, std::min(ranks, std::max(1, gpus_per_node / stride))};
}

Tick collective_time(Collective c, GroupShape group, std::int64_t bytes, const ClusterSpec& cl) {
  const int g = group.ranks_per_node, n = group.ranks;
  FUSIM_ASSERT(g >= 1 && n % g == 0, "a group spans whole nodes");
  const int nodes = n / g;
  if (nodes == 1) return ring_collective_time(c, n, bytes, cl.intra);
  if (g == 1) return ring_collective_time(c, n, bytes, cl.inter);
  // Hierarchical: the intra-node part on the whole buffer, the inter-node part on the 1/g of
  // it each GPU is left with, g rings in parallel on their own NICs.
  const std::int64_t shard = bytes / g;
  switch (c) {
    case Collective::AllReduce:
      return ring_collective_time(Collective::ReduceScatter, g, bytes, cl.intra) +
             ring_collective_time(Collective::AllReduce, nodes, shard, cl.inter) +
             ring_collective_time(Collective::AllGather, g, bytes, cl.intra);
    case Collective::ReduceScatter:
      return ring_collective_time(Collective::ReduceScatter, g, bytes, cl.intra) +
             ring_collective_time(Collective::ReduceScatter, nodes, shard, cl.inter);
    case Collective::AllGather:
      return ring_collective_time(Collective::AllGather, nodes, shard, cl.inter) +
             ring_collective_time(Collective::AllGather, g, bytes, cl.intra);
  }
  return 0;
}

}  // namespace fusim::parallel
