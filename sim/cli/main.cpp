// fusim: predicts how a training step's time changes when the optimizer update is fused
// into the backward or forward pass, and checks predictions against real execution.
// This executable links neither libtorch nor MPI (start-up in milliseconds); the commands
// that need them run in fusim-backend, which this one becomes (execv, same arguments)
// before parsing anything (backend_commands.h).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "cli/app.h"
#include "cli/backend_commands.h"
#include "sweep/mpi_shard.h"

namespace {

// Whether `command` (argv[1]) runs in fusim-backend.
bool needs_backend(const std::string& command) {
#ifdef FUSIM_WITH_TORCH
  if (command == "run" || command == "profile" || command == "validate" || command == "calibrate")
    return true;
#endif
#ifdef FUSIM_WITH_MPI
  // Under mpirun/srun a sweep talks MPI; a plain one never loads it.
  if (command == "sweep" && fusim::sweep::mpi_launcher_environment()) return true;
#endif
  (void)command;
  return false;
}

// $FUSIM_BACKEND, else fusim-backend next to this executable.
std::string backend_path() {
  if (const char* p = std::getenv("FUSIM_BACKEND"); p && *p) return p;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "fusim-backend";
  return (self.parent_path() / "fusim-backend").string();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && needs_backend(argv[1])) {
    const std::string path = backend_path();
    execv(path.c_str(), argv);  // returns only when it could not be started
    std::fprintf(stderr,
                 "fusim: %s: needs fusim-backend (the executable built with libtorch and MPI "
                 "beside fusim), which could not be started from %s: %s\n",
                 argv[1], path.c_str(), std::strerror(errno));
    return 2;
  }
  return fusim::cli::run_fusim(argc, argv, [](CLI::App& app) {
#ifdef FUSIM_WITH_TORCH
    // Listed in --help; never parsed here (needs_backend hands them over first).
    app.add_subcommand("run", fusim::cli::kRunDescription)->allow_extras();
    app.add_subcommand("profile", fusim::cli::kProfileDescription)->allow_extras();
    app.add_subcommand("validate", fusim::cli::kValidateDescription)->allow_extras();
    app.add_subcommand("calibrate", fusim::cli::kCalibrateDescription)->allow_extras();
#else
    (void)app;
#endif
  });
}
