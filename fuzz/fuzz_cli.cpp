// libFuzzer target: whole command lines, parsed and run in-process by the CLI itself
// (cli::run_fusim, what `fusim` runs; issue 21, point 2). The first byte picks a command
// and its fixed, small inputs (the bundled tiny MLP, a preset, the seed traces); the rest,
// split at newlines, are further words of the command line. The expectation of every
// command line: exit 0, or exit 2 with stderr ending in one line "fusim: ..." (InputError
// or a parse error). Anything else is a finding: an uncaught exception, exit 3 (out of
// memory: a resource guard missing), a sanitizer report, a hang (-timeout=1).
//
// Words that would write files (-o, --output, --timeline, --resume) are dropped, and so are
// --trace and --machine (a zoo resnet50 at line fidelity is a long simulation, not a bug):
// the fuzzer is after the options' checks, not after the simulator's speed (nor tensor
// fidelity's first run of a DRAM config, which measures its curves). `run --steps 1`
// and the other libtorch commands are not here: the fuzz build has no libtorch
// (tests/reliability/option_misuse_test.cpp covers their options).
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cli/app.h"
#include "fuzz/fuzz_common.h"

namespace {

struct Template {
  std::vector<std::string> words;
};

const std::vector<Template>& templates() {
  static const std::string src = FUSIM_SOURCE_DIR;
  static const std::string tiny = src + "/traces/examples/mlp_tiny.json";
  static const std::vector<Template> t = {
      {{"simulate", "--trace", tiny, "--machine", "xeon-8380-ddr4", "--fidelity", "block"}},
      {{"schedule", "--trace", tiny}},
      {{"sweep", "--trace", tiny, "--machine", "xeon-8380-ddr4", "--fidelity", "block", "-q",
        "--jobs", "1"}},
      {{"dram", "--config", src + "/models/machines/dram/ddr4-3200.json", "--trace",
        src + "/fuzz/seeds/dram_trace/basic.trc"}},
      {{"cache", "--config", src + "/fuzz/seeds/cache_config/xeon-8380-ddr4.json", "--trace",
        src + "/fuzz/seeds/address_trace/basic.txt"}},
      {{"memory", "--trace", tiny}},
      {{"trace", "show", tiny}},
  };
  return t;
}

bool dropped(const std::string& w) {
  for (const char* prefix : {"-o", "--output", "--timeline", "--resume", "--trace", "--machine"})
    if (w.rfind(prefix, 0) == 0) return true;
  return false;
}

// stderr of one call, captured in a temporary file (a pipe could fill up and block).
class CapturedStderr {
 public:
  CapturedStderr() : file_(std::tmpfile()), saved_(dup(STDERR_FILENO)) {
    std::fflush(stderr);
    dup2(fileno(file_), STDERR_FILENO);
  }
  std::string finish() {
    std::fflush(stderr);
    dup2(saved_, STDERR_FILENO);
    close(saved_);
    std::string text;
    std::rewind(file_);
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, file_)) > 0;) text.append(buf, n);
    std::fclose(file_);
    return text;
  }

 private:
  std::FILE* file_;
  int saved_;
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Nothing the commands print to stdout matters here; the tensor fidelity's DRAM curves
  // are cached in a scratch folder, not in ~/.cache.
  if (!std::freopen("/dev/null", "w", stdout)) return 0;
  char dir[] = "/tmp/fuzz-cli-XXXXXX";
  if (mkdtemp(dir)) {
    setenv("FUSIM_CACHE_DIR", dir, 1);
    if (chdir(dir) != 0) return 0;
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fusim;
  if (size == 0) return 0;
  // --max-memory sets the budget for the process: every input starts from the same one.
  setenv("FUSIM_MEMORY_BUDGET", "256MiB", 1);
  std::vector<std::string> words{"fusim"};
  const auto& t = templates()[data[0] % templates().size()];
  words.insert(words.end(), t.words.begin(), t.words.end());
  std::string word;
  const std::string_view rest = fuzz::as_text(data + 1, size - 1);
  for (std::size_t i = 0; i <= rest.size() && words.size() < 40; ++i) {
    if (i < rest.size() && rest[i] != '\n') {
      word += rest[i];
      continue;
    }
    if (!dropped(word)) words.push_back(word);
    word.clear();
  }
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);

  CapturedStderr err;
  const int code = cli::run_fusim(static_cast<int>(words.size()), argv.data(), [](CLI::App&) {});
  const std::string text = err.finish();
  // Help and the version print on stdout and exit 0, like a successful command.
  FUSIM_ASSERT(code == 0 || code == 2,
               "exit code " + std::to_string(code) + " (0 or 2 expected): " + text);
  if (code == 2) {
    // The error is the last line, "fusim: ..." (warnings may come before it).
    FUSIM_ASSERT(!text.empty() && text.back() == '\n', "exit 2 without a message line");
    const auto start = text.rfind('\n', text.size() - 2);
    const std::string last = text.substr(start == std::string::npos ? 0 : start + 1);
    FUSIM_ASSERT(last.rfind("fusim: ", 0) == 0, "the error line lacks 'fusim: ': " + last);
  }
  return 0;
}
