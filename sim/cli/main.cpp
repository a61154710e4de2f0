// fusim: predicts how a training step's time changes when the optimizer update is fused
// into the backward or forward pass, and checks predictions against real execution.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "core/error.h"

int main(int argc, char** argv) {
  CLI::App app{
      "fusim: trace-driven simulator of training-step scheduling.\n"
      "Predicts step time when the optimizer update is fused into the backward or forward\n"
      "pass (vs eager), on models of caches, DRAM and cores/GPUs, and checks the prediction\n"
      "against real execution on libtorch.",
      "fusim"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "fusim 0.1");
  // In the order of DESIGN.md's command line at a glance.
  fusim::cli::add_trace_command(app);
  fusim::cli::add_schedule_command(app);
  fusim::cli::add_simulate_command(app);
  fusim::cli::add_memory_command(app);
#ifdef FUSIM_WITH_TORCH
  fusim::cli::add_run_command(app);
  fusim::cli::add_validate_command(app);
  fusim::cli::add_calibrate_command(app);
#endif
  fusim::cli::add_sweep_command(app);
  fusim::cli::add_cache_command(app);
  fusim::cli::add_dram_command(app);
  fusim::cli::add_bench_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help / --version: CLI11 prints them. Every other parse error (unknown option,
    // missing value, a value out of range) is one line like an InputError's.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "fusim: %s\n", e.what());
    return 2;
  } catch (const fusim::InputError& e) {
    std::fprintf(stderr, "fusim: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "fusim: out of memory\n");
    return 3;
  }
  return 0;
}
