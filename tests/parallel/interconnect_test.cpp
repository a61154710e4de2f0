// The interconnect: link and cluster presets, the closed-form ring collectives worked by
// hand, and the same collectives run as messages on the simulated links (equal to the closed
// forms within 1%; contending when two share the links).
#include <catch2/catch.hpp>
#include <numeric>

#include "core/error.h"
#include "parallel/interconnect.h"
#include "parallel/link_sim.h"

using namespace fusim;
using namespace fusim::parallel;

namespace {
std::vector<int> iota(int from, int n) {
  std::vector<int> r(static_cast<std::size_t>(n));
  std::iota(r.begin(), r.end(), from);
  return r;
}
Tick last(const std::vector<Tick>& v) {
  return *std::max_element(v.begin(), v.end());
}
double rel(Tick a, Tick b) {
  return std::abs(double(a - b)) / double(b);
}
}  // namespace

TEST_CASE("link and cluster presets carry their datasheet numbers") {
  CHECK(link_preset("nvlink4").bytes_per_s == 450e9);
  CHECK(link_preset("nvlink3").bytes_per_s == 300e9);
  CHECK(link_preset("ib-ndr").bytes_per_s == 50e9);
  CHECK(link_preset("ib-hdr").bytes_per_s == 25e9);
  CHECK(link_preset("pcie4").bytes_per_s == Approx(31.5077e9).epsilon(1e-5));
  CHECK(link_preset("pcie5").bytes_per_s == Approx(63.0154e9).epsilon(1e-5));
  CHECK(link_preset("nvlink4").latency == 3400 * kTicksPerNs);
  CHECK(link_preset("ib-hdr").latency == 9600 * kTicksPerNs);
  const auto& h = cluster_preset("dgx-h100");
  CHECK(h.gpus_per_node == 8);
  CHECK(h.intra.name == "nvlink4");
  CHECK(h.inter.name == "ib-ndr");
  CHECK(cluster_preset("dgx-a100").inter.name == "ib-hdr");
  CHECK_THROWS_WITH(cluster_preset("dgx-b200"),
                    "--cluster: expected one of dgx-a100, dgx-h100, got \"dgx-b200\"");
  CHECK_THROWS_AS(link_preset("nvlink9"), InputError);
}

TEST_CASE("ring collectives: 2(n-1)/n S/B + 2(n-1) alpha, by hand") {
  const auto& nv = link_preset("nvlink4");
  const std::int64_t S = std::int64_t{1} << 30;
  // 8 ranks, 1 GiB: 2 * 7/8 * 2^30 B / 450e9 B/s = 4175.6626 us, + 14 * 3.4 us = 47.6 us.
  CHECK(to_us(ring_collective_time(Collective::AllReduce, 8, S, nv)) ==
        Approx(4223.2626).epsilon(1e-7));
  // Reduce-scatter and all-gather: half the steps: 2087.8313 + 23.8 us.
  CHECK(to_us(ring_collective_time(Collective::ReduceScatter, 8, S, nv)) ==
        Approx(2111.6313).epsilon(1e-7));
  CHECK(ring_collective_time(Collective::AllGather, 8, S, nv) ==
        ring_collective_time(Collective::ReduceScatter, 8, S, nv));
  CHECK(ring_collective_time(Collective::AllReduce, 1, S, nv) == 0);
}

TEST_CASE("groups on a cluster: placement by stride, hierarchical across nodes") {
  // Megatron's rank order tp, cp, dp, pp: the dp group of tp 8 has one rank per node; of
  // tp 2 four per node; a tp group of 8 fills one node.
  CHECK(group_shape(16, 8, 8).ranks_per_node == 1);
  CHECK(group_shape(16, 2, 8).ranks_per_node == 4);
  CHECK(group_shape(8, 1, 8).ranks_per_node == 8);
  CHECK(group_shape(4, 1, 8).ranks_per_node == 4);
  const auto& h = cluster_preset("dgx-h100");
  const std::int64_t S = std::int64_t{1} << 30;
  // 2 nodes x 8: reduce-scatter over NVLink (7/8 S/450e9 + 7 alpha_nv), all-reduce of S/8
  // over 2 nodes on NDR (2 * 1/2 * S/8 / 50e9 + 2 alpha_net), all-gather over NVLink.
  const double nv_us = 7.0 / 8 * double(S) / 450e9 * 1e6 + 7 * 3.4;
  const double ib_us = 1.0 * double(S / 8) / 50e9 * 1e6 + 2 * 9.6;
  CHECK(to_us(collective_time(Collective::AllReduce, {16, 8}, S, h)) ==
        Approx(2 * nv_us + ib_us).epsilon(1e-7));
  // One rank per node: a flat ring on the NICs.
  CHECK(collective_time(Collective::AllReduce, {4, 1}, S, h) ==
        ring_collective_time(Collective::AllReduce, 4, S, h.inter));
  CHECK(collective_time(Collective::AllReduce, {8, 8}, S, h) ==
        ring_collective_time(Collective::AllReduce, 8, S, h.intra));
}

TEST_CASE("a ring all-reduce on the simulated links equals the closed form within 1%") {
  const auto& h = cluster_preset("dgx-h100");
  for (std::int64_t S : {std::int64_t{1} << 20, std::int64_t{64} << 20, std::int64_t{1} << 30}) {
    INFO("bytes " << S);
    {
      LinkNetwork net(h, 8);
      const Tick sim = last(run_collective(net, Collective::AllReduce, iota(0, 8), S, 0));
      CHECK(rel(sim, collective_time(Collective::AllReduce, {8, 8}, S, h)) < 0.01);
    }
    {  // 4 nodes x 8 GPUs, the dp group of all 32: hierarchical
      LinkNetwork net(h, 32);
      const Tick sim = last(run_collective(net, Collective::AllReduce, iota(0, 32), S, 0));
      CHECK(rel(sim, collective_time(Collective::AllReduce, {32, 8}, S, h)) < 0.01);
    }
    {  // one GPU per node (ranks 0, 8, 16, 24): the NIC ring
      LinkNetwork net(h, 32);
      const Tick sim = last(run_collective(net, Collective::ReduceScatter, {0, 8, 16, 24}, S, 0));
      CHECK(rel(sim, collective_time(Collective::ReduceScatter, {4, 1}, S, h)) < 0.01);
    }
  }
}

TEST_CASE("collectives sharing links contend: the second waits for the first's messages") {
  const auto& h = cluster_preset("dgx-h100");
  const std::int64_t S = std::int64_t{256} << 20;
  LinkNetwork net(h, 8);
  const Tick a = last(run_collective(net, Collective::AllReduce, iota(0, 8), S, 0));
  const Tick b = last(run_collective(net, Collective::AllReduce, iota(0, 8), S, 0));
  // The second's first message leaves when the first's last one has left its link (alpha
  // before the first ends), then takes as long again: b = 2a - alpha.
  CHECK(b == 2 * a - h.intra.latency);
  // Each GPU's port sent 2(n-1) chunks of S/8 per all-reduce.
  CHECK(net.busy(3, false) == 2 * 14 * h.intra.transfer_time(S / 8));
  CHECK(net.busy(3, true) == 0);
  // Disjoint GPUs do not contend.
  LinkNetwork two(h, 16);
  const Tick x = last(run_collective(two, Collective::AllReduce, iota(0, 8), S, 0));
  CHECK(last(run_collective(two, Collective::AllReduce, iota(8, 8), S, 0)) == x);
}
