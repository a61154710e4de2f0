// fusim-backend: the whole fusim command line, with the commands that need libtorch
// (run, profile, validate, calibrate) and MPI sharding of sweeps. `fusim` hands those to this
// executable with the same arguments (main.cpp); it can also be run directly.
#include "cli/app.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
  return fusim::cli::run_fusim(argc, argv, [](CLI::App& app) {
#ifdef FUSIM_WITH_TORCH
    fusim::cli::add_run_command(app);
    fusim::cli::add_profile_command(app);
    fusim::cli::add_validate_command(app);
    fusim::cli::add_calibrate_command(app);
#else
    (void)app;
#endif
  });
}
