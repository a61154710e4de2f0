#pragma once
// Machines for executor tests, stated by what the test is about. defaults::tiny_cpu() is one
// CPU core at 1 GHz doing 2 FLOP/cycle at 100% of peak (2 GFLOP/s), no dispatch cost; a
// private L1 and a shared LLC (64 B lines, LRU, 1-cycle lookups, 16 MSHRs); an ideal main
// memory of 10 ns and unlimited bandwidth. build() writes the machine JSON and reads it with
// exec::parse_machine, so a test machine passes the checks a machine file does.
//   auto m = defaults::tiny_cpu().l1("32KiB").llc("2MiB").memory(80, 25).build();
#include <nlohmann/json.hpp>
#include <string>

#include "exec/machine.h"

namespace fusim::test {

class MachineBuilder {
 public:
  MachineBuilder& cores(int n) { return compute("cores", n); }
  MachineBuilder& flops_per_cycle(double fp32) {
    json_["compute"]["vector_flops_per_cycle"]["float32"] = fp32;
    return *this;
  }
  MachineBuilder& dispatch_ns(double ns) { return compute("dispatch_overhead_ns", ns); }
  MachineBuilder& threads_per_op(int n) { return compute("threads_per_op", n); }
  MachineBuilder& l1(const std::string& size) { return level(0, "size", size); }
  MachineBuilder& llc(const std::string& size) { return level(1, "size", size); }
  MachineBuilder& mshrs(int n) {  // every level
    for (auto& l : json_["caches"]["levels"]) l["mshrs"] = n;
    return *this;
  }
  // The ideal memory: latency, and bandwidth in GB/s (0: unlimited).
  MachineBuilder& memory(double latency_ns, double bandwidth_gbps = 0) {
    json_["dram"] = {
        {"preset", "fixed"}, {"latency_ns", latency_ns}, {"bandwidth_gbps", bandwidth_gbps}};
    return *this;
  }
  // A DRAM preset of models/machines/dram instead ("ddr4-3200"), with `channels`.
  MachineBuilder& dram(const std::string& preset, int channels = 1) {
    json_["dram"] = {{"preset", preset}, {"channels", channels}};
    return *this;
  }
  const nlohmann::json& json() const { return json_; }
  exec::Machine build() const { return exec::parse_machine(json_, "test-machine.json"); }

 private:
  template <class V>
  MachineBuilder& compute(const char* key, V v) {
    json_["compute"][key] = v;
    return *this;
  }
  MachineBuilder& level(std::size_t i, const char* key, const std::string& v) {
    json_["caches"]["levels"][i][key] = v;
    return *this;
  }
  nlohmann::json json_ = {
      {"name", "tiny"},
      {"kind", "cpu"},
      {"compute",
       {{"cores", 1},
        {"clock_mhz", 1000},
        {"vector_flops_per_cycle", {{"float32", 2}}},
        {"efficiency",
         {{"gemm", 1},
          {"conv", 1},
          {"elementwise", 1},
          {"norm", 1},
          {"reduction", 1},
          {"pool", 1},
          {"attention", 1}}},
        {"dispatch_overhead_ns", 0},
        {"threads_per_op", 1}}},
      {"caches",
       {{"clock", "1GHz"},
        {"levels",
         {{{"name", "L1"},
           {"size", "1KiB"},
           {"assoc", 4},
           {"line", 64},
           {"latency_cycles", 1},
           {"mshrs", 16},
           {"shared", false}},
          {{"name", "LLC"},
           {"size", "4KiB"},
           {"assoc", 8},
           {"line", 64},
           {"latency_cycles", 1},
           {"mshrs", 16},
           {"shared", true}}}}}},
      {"dram", {{"preset", "fixed"}, {"latency_ns", 10}, {"bandwidth_gbps", 0}}}};
};

namespace defaults {
inline MachineBuilder tiny_cpu() {
  return MachineBuilder{};
}
}  // namespace defaults

}  // namespace fusim::test
