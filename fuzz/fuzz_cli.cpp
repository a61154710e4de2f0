// libFuzzer target: whole command lines, parsed and run in-process by the CLI itself
// (cli::run_fusim, what `fusim` runs; issue 21, point 2): no fork per input. The first
// byte picks a command and its fixed, small inputs (the bundled tiny MLP, a tiny
// generated Llama, a preset, the seed traces); the rest, split at newlines, are further
// words of the command line. The expectation of every command line: exit 0, or exit 2 with
// stderr ending in one line "fusim: ..." that is not a warning (InputError or a parse
// error). Anything else is a finding: an uncaught exception, exit 3 (out of memory: a
// resource guard missing), a sanitizer report or leak, a hang (-timeout=1).
//
// Words that would write files (-o, --output, --timeline, --resume) are dropped, and so are
// --trace and --machine (a zoo resnet50 at line fidelity is a long simulation, not a bug):
// the fuzzer is after the options' checks, not after the simulator's speed (nor tensor
// fidelity's first run of a DRAM config, which measures its curves). `run` (the real
// libtorch execution of the tiny MLP, --measured-steps 2, no sampling extension) is here
// only in a fuzz build with libtorch (FUSIM_WITH_TORCH): the CI's sanitized build has none
// (scripts/reliability.sh says why); its options also have rows in
// tests/reliability/option_misuse_test.cpp.
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cli/app.h"
#include "cli/commands.h"
#include "fuzz/fuzz_common.h"

namespace {

struct Template {
  std::vector<std::string> words;
  bool needs_torch = false;
};

const std::string& source_dir() {
  static const std::string src = FUSIM_SOURCE_DIR;
  return src;
}
const std::string tiny_mlp() {
  return source_dir() + "/traces/examples/mlp_tiny.json";
}
// Generated once by LLVMFuzzerInitialize into the scratch folder (the current directory).
constexpr const char* kTinyLlama = "llama_tiny.json";

// Appended only: a corpus file's first byte keeps picking the same command.
const std::vector<Template>& templates() {
  static const std::string src = source_dir();
  static const std::vector<Template> t = {
      {{"simulate", "--trace", tiny_mlp(), "--machine", "xeon-8380-ddr4", "--fidelity", "block"}},
      {{"schedule", "--trace", tiny_mlp()}},
      {{"sweep", "--trace", tiny_mlp(), "--machine", "xeon-8380-ddr4", "--fidelity", "block", "-q",
        "--jobs", "1"}},
      {{"dram", "--config", src + "/models/machines/dram/ddr4-3200.json", "--trace",
        src + "/fuzz/seeds/dram_trace/basic.trc"}},
      {{"cache", "--config", src + "/fuzz/seeds/cache_config/xeon-8380-ddr4.json", "--trace",
        src + "/fuzz/seeds/address_trace/basic.txt"}},
      {{"memory", "--trace", tiny_mlp()}},
      {{"trace", "show", tiny_mlp()}},
      {{"trace", "gen", "-o", "gen.json"}},  // the network and its sizes from the input
      {{"trace", "validate", tiny_mlp()}},
      {{"memory"}},  // --model and the plan from the input (the README's LLM commands)
      {{"schedule", "--trace", kTinyLlama}},  // parallel plans: --tp/--pp/--dp --cluster
      {{"run", "--trace", tiny_mlp(), "--measured-steps", "2", "--max-time", "0"}, true},
  };
  return t;
}

// --search is dropped too: `memory --search` estimates every plan of --gpus GPUs, each by a
// schedule of the whole model (27 s for a 16-GPU search of llama-3.1-8b at load 11): a speed
// matter of the search, not of the options' checks.
bool dropped(const std::string& w) {
  for (const char* prefix :
       {"-o", "--output", "--timeline", "--resume", "--trace", "--machine", "--search"})
    if (w.rfind(prefix, 0) == 0) return true;
  return false;
}

void add_backend_commands(CLI::App& app) {
#ifdef FUSIM_WITH_TORCH
  fusim::cli::add_run_command(app);
#else
  (void)app;
#endif
}

int run_words(std::vector<std::string> words) {
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  return fusim::cli::run_fusim(static_cast<int>(words.size()), argv.data(), add_backend_commands);
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
  // are cached in a scratch folder, not in ~/.cache, and so are the files written.
  if (!std::freopen("/dev/null", "w", stdout)) return 0;
  char dir[] = "/tmp/fuzz-cli-XXXXXX";
  if (mkdtemp(dir)) {
    setenv("FUSIM_CACHE_DIR", dir, 1);
    if (chdir(dir) != 0) return 0;
  }
  // A Llama of two small blocks, as the README's plan example generates its llama8.json.
  const int code = run_words({"fusim",    "trace", "gen",     "llama",   "--layers",   "2",
                              "--hidden", "64",    "--heads", "4",       "--kv-heads", "2",
                              "--ffn",    "128",   "--vocab", "256",     "--seq",      "16",
                              "--batch",  "1",     "-o",      kTinyLlama});
  FUSIM_ASSERT(code == 0, "trace gen of the tiny Llama failed");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fusim;
  if (size == 0) return 0;
  const auto& t = templates()[data[0] % templates().size()];
#ifndef FUSIM_WITH_TORCH
  if (t.needs_torch) return -1;  // not in this build: keep the input out of the corpus
#endif
  // --max-memory sets the budget for the process: every input starts from the same one.
  setenv("FUSIM_MEMORY_BUDGET", "256MiB", 1);
  std::vector<std::string> words{"fusim"};
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

  CapturedStderr err;
  const int code = run_words(std::move(words));
  const std::string text = err.finish();
  // Help and the version print on stdout and exit 0, like a successful command.
  FUSIM_ASSERT(code == 0 || code == 2,
               "exit code " + std::to_string(code) + " (0 or 2 expected): " + text);
  if (code == 2) {
    // The error is the last line, "fusim: ..." (warnings may come before it).
    FUSIM_ASSERT(!text.empty() && text.back() == '\n', "exit 2 without a message line");
    const auto start = text.rfind('\n', text.size() - 2);
    const std::string last = text.substr(start == std::string::npos ? 0 : start + 1);
    FUSIM_ASSERT(last.rfind("fusim: ", 0) == 0 && last.rfind("fusim: warning:", 0) != 0,
                 "the error line lacks 'fusim: ' or is a warning: " + last);
  }
  return 0;
}
