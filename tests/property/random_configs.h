#pragma once
// Seeded generators of small random configurations for the property tests (issue 21, point
// 5): layer traces, cache hierarchies, DRAM sections and whole machines, each a JSON document
// read through the same strict readers as users' files, so a generated case is a case a user
// could write. Case i of a test uses seed i: a failure names its seed and reruns alone.
//
// How many cases: each test has its own count, multiplied by FUSIM_PROPERTY_SCALE (default 1;
// the sanitized run and long local runs set it).
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace fusim::property {

// splitmix64 (Steele, Lea, Flood 2014), as the DRAM trace generator: no library
// distributions, so the cases are the same with every standard library.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed * 0x2545F4914F6CDD1Dull + 1) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi] (inclusive; the modulo bias is irrelevant at these sizes).
  std::int64_t in(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  bool chance(int percent) { return in(1, 100) <= percent; }
  template <class T>
  const T& pick(const std::vector<T>& items) {
    return items[static_cast<std::size_t>(in(0, static_cast<std::int64_t>(items.size()) - 1))];
  }

 private:
  std::uint64_t state_;
};

inline int cases(int base) {
  const char* scale = std::getenv("FUSIM_PROPERTY_SCALE");
  const double s = scale ? std::atof(scale) : 1.0;
  return s > 0 ? static_cast<int>(base * s + 0.5) : base;
}

// A chain of 1-6 hidden blocks (linear, then an activation, sometimes a residual add of two
// same-width tensors), widths 1-48, batch 1-8, ending in cross_entropy (a scalar output).
inline nlohmann::json random_trace(Rng& rng) {
  const std::int64_t batch = rng.in(1, 8);
  std::int64_t width = rng.in(1, 48);
  nlohmann::json layers = nlohmann::json::array();
  nlohmann::json prev = "input";  // the id (or input name) feeding the next layer
  std::int64_t prev_width = width;
  auto add = [&](nlohmann::json layer) {
    layer["id"] = layers.size();
    layers.push_back(std::move(layer));
    prev = layers.size() - 1;
  };
  const std::vector<std::string> activations{"relu", "gelu", "tanh", "sigmoid", "silu"};
  const int blocks = static_cast<int>(rng.in(1, 6));
  for (int b = 0; b <= blocks; ++b) {
    const bool last = b == blocks;
    const std::int64_t out = last ? rng.in(2, 10) : (rng.chance(30) ? prev_width : rng.in(1, 48));
    const bool bias = rng.chance(50);
    const std::string name = "fc" + std::to_string(b);
    nlohmann::json params = {{{"name", name + ".weight"}, {"shape", {out, prev_width}}}};
    if (bias) params.push_back({{"name", name + ".bias"}, {"shape", {out}}});
    const nlohmann::json block_input = prev;
    const std::int64_t block_input_width = prev_width;
    add({{"name", name},
         {"op", "linear"},
         {"attrs", {{"bias", bias}}},
         {"inputs", {prev}},
         {"output", {batch, out}},
         {"params", params}});
    prev_width = out;
    if (last) break;
    add({{"name", "act" + std::to_string(b)},
         {"op", rng.pick(activations)},
         {"attrs", nlohmann::json::object()},
         {"inputs", {prev}},
         {"output", {batch, out}}});
    if (out == block_input_width && block_input.is_number() && rng.chance(60))
      add({{"name", "res" + std::to_string(b)},
           {"op", "add"},
           {"attrs", nlohmann::json::object()},
           {"inputs", {prev, block_input}},
           {"output", {batch, out}}});
  }
  add({{"name", "loss"},
       {"op", "cross_entropy"},
       {"attrs", nlohmann::json::object()},
       {"inputs", {prev, "target"}},
       {"output", nlohmann::json::array()}});
  return {{"format", "fusim-trace"},
          {"version", 1},
          {"model", "random"},
          {"batch", batch},
          {"dtype", "float32"},
          {"source", "tests/property"},
          {"inputs",
           {{{"name", "input"}, {"shape", {batch, width}}},
            {{"name", "target"}, {"shape", {batch}}, {"dtype", "int64"}}}},
          {"layers", layers}};
}

// 1-3 levels with 64 B lines, each 2-256 KiB (powers of two: tree-plru needs power-of-two
// ways in block fidelity too), associativity dividing the line count, any policy / inclusion / write policy.
inline nlohmann::json random_hierarchy(Rng& rng, bool allow_exclusive = true) {
  const int levels = static_cast<int>(rng.in(1, 3));
  nlohmann::json out = {{"clock", "1GHz"}, {"levels", nlohmann::json::array()}};
  std::int64_t size = 0;
  for (int l = 0; l < levels; ++l) {
    size = std::max<std::int64_t>(size << rng.in(0, 2), std::int64_t{2048} << rng.in(0, 3));
    const std::int64_t lines = size / 64;
    std::vector<std::int64_t> assocs;
    for (std::int64_t a : {1, 2, 4, 8, 16})
      if (lines % a == 0) assocs.push_back(a);
    std::vector<std::string> inclusion{"non-inclusive", "inclusive"};
    if (allow_exclusive && l > 0) inclusion.push_back("exclusive");
    nlohmann::json level = {
        {"name", "L" + std::to_string(l + 1)},
        {"size", size},
        {"assoc", rng.pick(assocs)},
        {"line", 64},
        {"latency_cycles", rng.in(1, 20)},
        {"shared", l == levels - 1},
        {"policy", rng.pick(std::vector<std::string>{"lru", "tree-plru", "random", "srrip"})},
        {"seed", rng.in(0, 1000)}};
    if (l > 0) level["inclusion"] = rng.pick(inclusion);  // relation to the levels above
    if (rng.chance(20)) level["write_policy"] = "write-through";
    if (rng.chance(20)) level["write_allocate"] = false;
    out["levels"].push_back(level);
  }
  return out;
}

// A machine's "dram" section: a preset with a small random organisation and controller.
inline nlohmann::json random_dram(Rng& rng) {
  nlohmann::json d = {
      {"preset", rng.pick(std::vector<std::string>{"ddr4-3200", "ddr5-4800", "hbm2e", "hbm3"})},
      {"channels", rng.in(1, 4)},
      {"ranks", rng.in(1, 2)},
      {"rows", std::int64_t{256} << rng.in(0, 4)},
      {"scheduler",
       rng.pick(std::vector<std::string>{"fcfs", "frfcfs", "frfcfs-cap", "stream-aware"})},
      {"mapping", rng.pick(std::vector<std::string>{"RoBaRaCoCh", "RoRaBaCoBgCh", "RoCoBaRaCh"})},
      {"xor_bank_hash", rng.chance(30)},
      {"row_policy",
       rng.pick(std::vector<std::string>{"open", "closed", "open-timeout", "open-cap"})},
      {"row_timeout", rng.in(1, 200)},
      {"row_cap", rng.in(1, 16)},
      {"read_queue", rng.in(2, 32)},
      {"write_queue", rng.in(2, 32)}};
  const std::int64_t wq = d["write_queue"];
  const std::int64_t high = rng.in(1, wq);
  d["write_high_watermark"] = high;
  d["write_low_watermark"] = rng.in(0, high - 1);
  d["interleave_bytes"] = std::int64_t{64} << rng.in(0, 4);
  if (rng.chance(30) && d["preset"] != "ddr4-3200") d["refresh"] = "per-bank";
  return d;
}

// A CPU machine of 1-4 cores with a random hierarchy and either a fixed-latency memory of
// a random bandwidth or a random DRAM; only vector FLOPs, so the peak is cores x
// vector_flops_per_cycle x clock.
inline nlohmann::json random_machine(Rng& rng) {
  const std::int64_t cores = rng.in(1, 4);
  auto eff = [&] { return static_cast<double>(rng.in(1, 100)) / 100.0; };
  nlohmann::json m = {{"name", "random"},
                      {"kind", "cpu"},
                      {"compute",
                       {{"cores", cores},
                        {"clock_mhz", 500 * rng.in(1, 8)},
                        {"vector_flops_per_cycle", {{"float32", 2 << rng.in(0, 4)}}},
                        {"efficiency",
                         {{"gemm", eff()},
                          {"conv", eff()},
                          {"elementwise", eff()},
                          {"norm", eff()},
                          {"reduction", eff()},
                          {"pool", eff()},
                          {"attention", eff()}}},
                        {"dispatch_overhead_ns", rng.in(0, 5000)},
                        {"threads_per_op", rng.in(1, cores)}}},
                      {"caches", random_hierarchy(rng, false)}};
  m["caches"]["levels"].back()["name"] = "LLC";  // a CPU machine's last level is the shared LLC
  if (rng.chance(50))
    m["dram"] = {
        {"preset", "fixed"}, {"latency_ns", rng.in(1, 200)}, {"bandwidth_gbps", rng.in(1, 100)}};
  else
    m["dram"] = random_dram(rng);
  return m;
}

// Delta debugging (Zeller & Hildebrandt 2002, ddmin's complement step): removes chunks of
// `items` while `fails` still holds, halving the chunk size down to single items. Returns a
// 1-minimal failing list (no single item can be dropped).
template <class T, class Fails>
std::vector<T> shrink(std::vector<T> items, Fails&& fails) {
  for (std::size_t chunk = items.size() / 2; chunk >= 1; chunk /= 2) {
    for (std::size_t at = 0; at < items.size();) {
      std::vector<T> smaller(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(at));
      smaller.insert(
          smaller.end(),
          items.begin() + static_cast<std::ptrdiff_t>(std::min(at + chunk, items.size())),
          items.end());
      if (!smaller.empty() && fails(smaller))
        items = std::move(smaller);
      else
        at += chunk;
    }
    if (chunk == 1) break;
  }
  return items;
}

}  // namespace fusim::property
