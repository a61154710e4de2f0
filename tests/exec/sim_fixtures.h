#pragma once
// Small machines and traces for the executor tests, stated in a few lines each.
#include <nlohmann/json.hpp>
#include <string>

#include "exec/machine.h"
#include "workload/trace.h"

namespace fusim::test {

// One CPU core at 1 GHz doing 2 FLOP/cycle at 100% of peak (2 GFLOP/s), no dispatch cost;
// a private L1 and a shared LLC of the given sizes (64 B lines, LRU, 1-cycle lookups, 16
// MSHRs); an ideal main memory with a fixed latency and bandwidth (0 = unlimited).
inline nlohmann::json tiny_cpu(const std::string& l1, const std::string& llc,
                               double latency_ns = 10, double bandwidth_gbps = 0) {
  return {{"name", "tiny"},
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
               {"size", l1},
               {"assoc", 4},
               {"line", 64},
               {"latency_cycles", 1},
               {"mshrs", 16},
               {"shared", false}},
              {{"name", "LLC"},
               {"size", llc},
               {"assoc", 8},
               {"line", 64},
               {"latency_cycles", 1},
               {"mshrs", 16},
               {"shared", true}}}}}},
          {"dram",
           {{"preset", "fixed"}, {"latency_ns", latency_ns}, {"bandwidth_gbps", bandwidth_gbps}}}};
}

inline exec::Machine machine(const nlohmann::json& doc) {
  return exec::parse_machine(doc, "tiny.json");
}

}  // namespace fusim::test
