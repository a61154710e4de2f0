#pragma once
// Runs the fusim binary of this build folder in a scratch folder and captures its exit code,
// stdout and stderr (tests of the whole program, as users run it).
#include <string>
#include <vector>

namespace fusim::test {

struct FusimRun {
  int exit_code = -1;
  std::string out, err;
};

// A fresh, empty folder under the build tree, named after `tag`; removed and re-created.
std::string scratch_dir(const std::string& tag);
// Writes `bytes` to dir/name (binary-safe) and returns the path.
std::string write_file(const std::string& dir, const std::string& name, const std::string& bytes);
std::string read_file(const std::string& path);
// `args` is a shell word list (paths must not need quoting); runs `fusim args` in `cwd`,
// capturing stdout and stderr into files in `capture_dir` (default: cwd).
FusimRun run_fusim(const std::string& cwd, const std::string& args,
                   const std::string& capture_dir = "");

// `err` without the progress lines a run longer than a second adds on a loaded machine
// ("simulate eager [===>      ] 40% ..."): fusim's messages, every other line kept.
std::string messages(const std::string& err);

// The contract of a refused command line (DESIGN.md, "Principles"): exit code 2, stderr one
// line "fusim: ..." holding every fragment, nothing on stdout (Catch2 checks).
void check_one_line_refusal(const FusimRun& run, const std::vector<std::string>& fragments);

}  // namespace fusim::test
