#include "run_fusim.h"

#include <sys/wait.h>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fusim::test {

std::string scratch_dir(const std::string& tag) {
  std::filesystem::path dir = std::filesystem::path(FUSIM_BINARY_DIR) / "tests-scratch" / tag;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string write_file(const std::string& dir, const std::string& name, const std::string& bytes) {
  std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string messages(const std::string& err) {
  std::string out, line;
  for (std::size_t i = 0; i <= err.size(); ++i) {
    if (i < err.size() && err[i] != '\n') {
      line += err[i];
      continue;
    }
    // A progress line: "<label> [===>   ] ..." (core/progress.h); every other line is kept.
    const auto open = line.find(" ["), close = line.find("] ");
    const bool progress = open != std::string::npos && close != std::string::npos && close > open &&
                          line.find_first_not_of("=> ", open + 2) == close;
    if (!progress && !line.empty()) out += line + (i < err.size() ? "\n" : "");
    line.clear();
  }
  return out;
}

FusimRun run_fusim(const std::string& cwd, const std::string& args,
                   const std::string& capture_dir) {
  const std::string dir = capture_dir.empty() ? cwd : capture_dir;
  const std::string command = "cd '" + cwd + "' && '" FUSIM_BINARY_DIR "/fusim' " + args + " >'" +
                              dir + "/fusim.out' 2>'" + dir + "/fusim.err' </dev/null";
  int status = std::system(command.c_str());
  FusimRun r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(dir + "/fusim.out");
  r.err = read_file(dir + "/fusim.err");
  return r;
}

void check_one_line_refusal(const FusimRun& r, const std::vector<std::string>& fragments) {
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 2);
  REQUIRE(!r.err.empty());
  CHECK(r.err.rfind("fusim: ", 0) == 0);
  CHECK(r.err.find('\n') == r.err.size() - 1);  // exactly one line
  for (const auto& fragment : fragments) CHECK(r.err.find(fragment) != std::string::npos);
  CHECK(r.out.empty());  // nothing half-printed before the error
}

}  // namespace fusim::test
