#include "cli/app.h"

#include <cstdio>
#include <new>

#include "cli/commands.h"
#include "core/error.h"

namespace fusim::cli {

int run_fusim(int argc, char** argv, const std::function<void(CLI::App&)>& add_backend_commands) {
  CLI::App app{
      "fusim: trace-driven simulator of training-step scheduling.\n"
      "Predicts step time when the optimizer update is fused into the backward or forward\n"
      "pass (vs eager), on models of caches, DRAM and cores/GPUs, and checks the prediction\n"
      "against real execution on libtorch.",
      "fusim"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "fusim 0.1");
  // In the order of DESIGN.md's command line at a glance.
  add_trace_command(app);
  add_schedule_command(app);
  add_simulate_command(app);
  add_memory_command(app);
  add_backend_commands(app);
  add_sweep_command(app);
  add_cache_command(app);
  add_dram_command(app);
  add_bench_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help / --version: CLI11 prints them. Every other parse error (unknown option,
    // missing value, a value out of range) is one line like an InputError's.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "fusim: %s\n", e.what());
    return 2;
  } catch (const InputError& e) {
    std::fprintf(stderr, "fusim: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "fusim: out of memory\n");
    return 3;
  }
  return 0;
}

}  // namespace fusim::cli
