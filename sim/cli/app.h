#pragma once
// The fusim command line, built the same way by both executables: `fusim` (main.cpp) and
// `fusim-backend` (backend_main.cpp, the one that links libtorch and MPI; see
// backend_commands.h). Parses argv, runs the chosen command, maps errors to exit codes
// (2: bad input, one line "fusim: ..."; 3: out of memory).
#include <functional>

#include <CLI/CLI.hpp>

namespace fusim::cli {

// add_backend_commands adds run/validate/calibrate (the real ones, or in `fusim` entries
// that only show in --help: it hands them to fusim-backend before parsing).
int run_fusim(int argc, char** argv, const std::function<void(CLI::App&)>& add_backend_commands);

}  // namespace fusim::cli
