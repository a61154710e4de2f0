#pragma once
// The options several commands share, with one meaning each (issue 23, point 1), written
// once: every command's --help ends with the entries of the shared options it takes, and
// README.md's "Shared options" section is the whole list, the same text
// (tests/cli/shared_options_test.cpp compares them and checks each meaning on the outputs).
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace fusim::cli {

struct SharedOption {
  std::string name;     // "--steps"
  std::string meaning;  // one paragraph, wrapped by shared_options_text
};

const std::vector<SharedOption>& shared_options();

// "Shared options (one meaning in every command; README.md, Shared options):" and the
// entries whose name is in `names`, in the table's order, each "  --name  meaning" wrapped
// at 100 columns with a 6-space indent. Empty when none is.
std::string shared_options_text(const std::vector<std::string>& names);

// `fusim --help` ends with the whole list; every command of `app` (recursively) with the
// entries of the shared options it takes.
void add_shared_options_help(CLI::App& app);

}  // namespace fusim::cli
