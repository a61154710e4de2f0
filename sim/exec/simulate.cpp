// simulate(): checks the options, runs the Simulator and turns its record into the
// steady-state RunResult (steady_state.h).
#include "exec/simulate.h"

#include <fmt/format.h>

#include "core/error.h"
#include "exec/simulator.h"

namespace fusim::exec {

Fidelity parse_fidelity_name(const std::string& name) {
  if (name == "line") return Fidelity::Line;
  if (name == "block") return Fidelity::Block;
  if (name == "tensor") return Fidelity::Tensor;
  throw InputError(
      fmt::format("--fidelity: expected \"line\", \"block\" or \"tensor\", got \"{}\"", name));
}

const char* to_string(Fidelity fidelity) {
  switch (fidelity) {
    case Fidelity::Line:
      return "line";
    case Fidelity::Block:
      return "block";
    case Fidelity::Tensor:
      return "tensor";
  }
  return "?";
}

SimulationDetail simulate_detailed(const workload::Trace& trace, const schedule::Schedule& schedule,
                                   const Machine& machine, const SimOptions& options) {
  if (options.block_bytes < 64 || (options.block_bytes & (options.block_bytes - 1)) != 0)
    throw InputError(fmt::format("block size: expected a power of two >= 64 bytes, got {}",
                                 options.block_bytes));
  if (options.chunk_bytes != 0 && options.chunk_bytes < 64)
    throw InputError(
        fmt::format("chunk size: expected at least 64 bytes, got {}", options.chunk_bytes));
  SimOptions resolved = options;
  if (resolved.chunk_bytes == 0) resolved.chunk_bytes = machine.default_chunk_bytes();
  Simulator sim(trace, schedule, machine, resolved);
  return steady_state(schedule, sim.run(), options.warmup_steps);
}

RunResult simulate(const workload::Trace& trace, const schedule::Schedule& schedule,
                   const Machine& machine, const SimOptions& options) {
  return simulate_detailed(trace, schedule, machine, options).result;
}

}  // namespace fusim::exec
