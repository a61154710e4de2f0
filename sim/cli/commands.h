#pragma once
// Each subcommand lives in its own file and adds itself to the app here; main.cpp calls them.
#include <CLI/CLI.hpp>

namespace fusim::cli {

void add_trace_command(CLI::App& app);         // trace show|validate|gen
void add_trace_gen_command(CLI::App& trace);   // trace gen (sim/cli/trace_gen_cmd.cpp)
void add_schedule_command(CLI::App& app);      // schedule
void add_simulate_command(CLI::App& app);      // simulate
void add_memory_command(CLI::App& app);        // memory (sim/cli/memory_cmd.cpp, issue 20)
void add_run_command(CLI::App& app);           // run (real backend)
void add_validate_command(CLI::App& app);      // validate
void add_calibrate_command(CLI::App& app);     // calibrate
void add_profile_command(CLI::App& app);       // profile (per-op measurements for --profile)
void add_sweep_command(CLI::App& app);         // sweep
void add_cache_command(CLI::App& app);         // cache (address-trace replay)
void add_dram_command(CLI::App& app);          // dram (request-trace replay), dram gen
void add_bench_command(CLI::App& app);         // bench caches|dram|...
void add_bench_dram_command(CLI::App& bench);  // bench dram (sim/cli/bench_dram_cmd.cpp)
// bench simulate (sim/cli/bench_simulate_cmd.cpp)
void add_bench_simulate_command(CLI::App& bench);

}  // namespace fusim::cli
