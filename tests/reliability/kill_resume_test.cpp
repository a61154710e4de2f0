// Nothing lost when a run is killed (issue 21, point 4): the real binary is killed with
// SIGKILL at seeded random moments (by the size its output has reached, so the kills land
// inside the run whatever the machine's load), then rerun; the files end byte-identical to an
// uninterrupted run.
//  - sweep -o rows.csv|json: killed, resumed with --resume (and that run killed again), until
//    it finishes: the bytes of a run never killed.
//  - simulate --timeline: written through a temporary file and a rename, so after a kill the
//    timeline is either absent or whole, never a prefix.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "run_fusim.h"

using namespace fusim::test;

namespace {

const std::string kTrace = FUSIM_SOURCE_DIR "/traces/examples/mlp_tiny.json";

// 4 x 3 points x 2 optimizers = 24 units of 2 rows: long enough (hundreds of ms) for kills
// to land between and inside rows, short enough for a test.
std::vector<std::string> sweep_args(const std::string& output) {
  return {"sweep",
          "--trace",
          kTrace,
          "--machine",
          "xeon-8380-ddr4",
          "--set",
          "dram.channels=1,2,4,8",
          "--set",
          "caches.LLC.size=3MiB,6MiB,12MiB",
          "--ordering",
          "eager,backward-fused",
          "--optimizer",
          "sgd,adam",
          "--jobs",
          "2",
          "-q",
          "-o",
          output};
}

// splitmix64 (as the DRAM trace generator): the kill points are the same on every run.
std::uint64_t next_random(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::int64_t file_size(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::int64_t>(st.st_size) : -1;
}

pid_t spawn_fusim(const std::string& dir, const std::vector<std::string>& args) {
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0) ::_exit(127);
    int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0), ::dup2(null, 1), ::dup2(null, 2);
    std::vector<char*> argv;
    static std::string binary = FUSIM_BINARY_DIR "/fusim";
    argv.push_back(binary.data());
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  return pid;
}

struct Outcome {
  bool killed = false;  // false: it finished before the kill point
  int exit_code = -1;
};

// Runs fusim and kills it with SIGKILL once `watched` holds at least `kill_at_bytes` bytes
// (< 0: never), polling every 100 us.
Outcome run_and_kill(const std::string& dir, const std::vector<std::string>& args,
                     const std::string& watched, std::int64_t kill_at_bytes) {
  pid_t pid = spawn_fusim(dir, args);
  int status = 0;
  for (;;) {
    pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done < 0) FAIL("waitpid failed");
    if (done == pid) break;
    if (kill_at_bytes >= 0 && file_size(watched) >= kill_at_bytes) {
      ::kill(pid, SIGKILL);
      REQUIRE(::waitpid(pid, &status, 0) == pid);
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  Outcome o;
  o.killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

}  // namespace

TEST_CASE("a sweep killed with SIGKILL at random moments and resumed ends with the same bytes") {
  for (const std::string ext : {".csv", ".json"}) {
    const std::string name = "rows" + ext;
    const std::string ref_dir = scratch_dir("kill-resume-reference" + ext);
    REQUIRE(run_and_kill(ref_dir, sweep_args(name), "", -1).exit_code == 0);
    const std::string reference = read_file(ref_dir + "/" + name);
    // CSV: header + 48 rows; JSON: "[", 48 rows, "]".
    REQUIRE(std::count(reference.begin(), reference.end(), '\n') == (ext == ".csv" ? 49 : 50));

    std::uint64_t seed = ext == ".csv" ? 21 : 42;
    int landed = 0;  // kills that cut the file strictly inside the run
    for (int trial = 0; trial < 6; ++trial) {
      const std::string dir = scratch_dir("kill-resume-" + std::to_string(trial) + ext);
      const std::string path = dir + "/" + name;
      // The first run is killed at a random size in [0, 90%) of the full file; every resumed
      // run until the third is killed again once it has grown by another random amount.
      std::int64_t at = static_cast<std::int64_t>(next_random(seed) % (reference.size() * 9 / 10));
      Outcome first = run_and_kill(dir, sweep_args(name), path, at);
      const std::int64_t cut = file_size(path);
      if (first.killed && cut >= 0 && cut < static_cast<std::int64_t>(reference.size())) {
        ++landed;
        // What the kill left is a prefix of the full file (rows are appended in order).
        CHECK(reference.compare(0, cut, read_file(path)) == 0);
      }
      std::vector<std::string> resume = sweep_args(name);
      resume.push_back("--resume");
      for (int again = 0; again < 3; ++again) {
        const std::int64_t now = std::max<std::int64_t>(file_size(path), 0);
        const std::int64_t left = static_cast<std::int64_t>(reference.size()) - now;
        if (left <= 1) break;
        Outcome o = run_and_kill(
            dir, resume, path,
            now + static_cast<std::int64_t>(next_random(seed) % static_cast<std::uint64_t>(left)));
        if (!o.killed) break;
      }
      Outcome last = run_and_kill(dir, resume, path, -1);
      INFO(name << " trial " << trial << ", first kill at " << at << " bytes, cut " << cut);
      REQUIRE(last.exit_code == 0);
      CHECK(read_file(path) == reference);
    }
    // The kills must have tested something: most land inside the run.
    INFO(name << ": " << landed << " of 6 first kills landed inside the run");
    CHECK(landed >= 3);
  }
}

TEST_CASE("a timeline is absent or whole after a SIGKILL, never half written") {
  const std::vector<std::string> args = {"simulate",  "--trace",        kTrace,
                                         "--machine", "xeon-8380-ddr4", "--ordering",
                                         "all",       "--timeline",     "timeline.json"};
  const std::string ref_dir = scratch_dir("kill-timeline-reference");
  REQUIRE(run_and_kill(ref_dir, args, "", -1).exit_code == 0);
  const std::string reference = read_file(ref_dir + "/timeline.json");
  REQUIRE(reference.size() > 1000);
  std::uint64_t seed = 7;
  for (int trial = 0; trial < 8; ++trial) {
    const std::string dir = scratch_dir("kill-timeline-" + std::to_string(trial));
    // Killed after a random 0-40 ms: while simulating, or while writing the timeline.
    pid_t pid = spawn_fusim(dir, args);
    std::this_thread::sleep_for(std::chrono::microseconds(next_random(seed) % 40000));
    ::kill(pid, SIGKILL);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    const std::string path = dir + "/timeline.json";
    if (std::filesystem::exists(path)) CHECK(read_file(path) == reference);
  }
}
