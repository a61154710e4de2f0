#include "cli/app.h"

#include <stdlib.h>

#include <cctype>
#include <cstdio>
#include <new>

#include <fmt/format.h>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/shared_options.h"
#include "core/error.h"
#include "core/memory_budget.h"
#include "core/suggest.h"
#include "core/units.h"

namespace fusim::cli {
namespace {

unsigned char uchar(char c) {
  return static_cast<unsigned char>(c);
}

std::vector<std::string> subcommand_names(CLI::App& app) {
  std::vector<std::string> names;
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  return names;
}

bool has_positionals(CLI::App& app) {
  return !app.get_options([](CLI::Option* o) { return o->get_positional(); }).empty();
}

// The commands named by the leading words of argv ("fusim trace gen ..." -> app, trace,
// gen). A word where a command must be (at the top, or under a command that takes no
// positional argument) that names none is refused before parsing, with a did-you-mean:
// CLI11 would say "A subcommand is required" or "arguments were not expected".
std::vector<CLI::App*> command_chain(CLI::App& app, int argc, char** argv) {
  std::vector<CLI::App*> chain{&app};
  std::string path = "fusim";
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-') break;
    const auto names = subcommand_names(*chain.back());
    if (names.empty()) break;
    auto named =
        chain.back()->get_subcommands([&](CLI::App* sub) { return sub->check_name(word); });
    if (!named.empty()) {
      chain.push_back(named.front());
      path += " " + word;
      continue;
    }
    if (chain.back()->get_require_subcommand_min() == 0 && has_positionals(*chain.back())) break;
    throw InputError(fmt::format("unknown command \"{} {}\": expected {} followed by one of {}{}",
                                 path, word, path, fmt::join(names, ", "),
                                 did_you_mean(word, names)));
  }
  return chain;
}

// For an argument CLI11 did not expect: the first --option of argv that no command of the
// chain knows, with a did-you-mean among that command's options ("--step" -> "--steps").
std::string unexpected_argument(const std::vector<CLI::App*>& chain, int argc, char** argv,
                                const std::string& fallback) {
  CLI::App& command = *chain.back();
  for (int i = 1; i < argc; ++i) {
    std::string word = argv[i];
    // --long options, and short ones (-o where the command has none); not "-", "--", "-5".
    const bool is_short = word.size() == 2 && word[0] == '-' && std::isalpha(uchar(word[1]));
    if (!is_short && (word.rfind("--", 0) != 0 || word == "--")) continue;
    word = word.substr(0, word.find('='));
    bool known = false;
    for (CLI::App* app : chain) known = known || app->get_option_no_throw(word) != nullptr;
    if (known) continue;
    std::vector<std::string> names;
    for (const CLI::Option* o : command.get_options()) {
      for (const auto& l : o->get_lnames()) names.push_back("--" + l);
      for (const auto& s : o->get_snames()) names.push_back("-" + s);
    }
    std::string path;
    for (std::size_t k = 1; k < chain.size(); ++k) path += chain[k]->get_name() + " ";
    return fmt::format("{}unknown option {}{}; `fusim {}--help` lists the options",
                       path.empty() ? "" : path.substr(0, path.size() - 1) + ": ", word,
                       did_you_mean(word, names), path);
  }
  return fallback;
}

// CLI11's "Could not convert: --seq = 8k" in the words of every other error:
// "--seq: expected an integer, got \"8k\"" (the option's type from its declaration).
std::string conversion_message(const std::vector<CLI::App*>& chain, const std::string& what) {
  const std::string prefix = "Could not convert: ";
  const auto eq = what.find(" = ");
  if (what.rfind(prefix, 0) != 0 || eq == std::string::npos) return what;
  const std::string name = what.substr(prefix.size(), eq - prefix.size());
  const CLI::Option* option = nullptr;
  for (CLI::App* app : chain)
    if (!option) option = app->get_option_no_throw(name);
  const std::string type = option ? option->get_type_name() : "";
  const std::string expected = type.rfind("UINT", 0) == 0  ? "a non-negative integer"
                               : type.rfind("INT", 0) == 0 ? "an integer"
                               : type.rfind("FLOAT", 0) == 0
                                   ? "a number"
                                   : "a value of type " + (type.empty() ? "?" : type);
  return fmt::format("{}: expected {}, got \"{}\"", name, expected, what.substr(eq + 3));
}

// CLI11 reads "-5" into an unsigned option as 2^64 - 5 (strtoull): every unsigned option of
// every command refuses a leading '-' instead ("--seed: expected a non-negative integer").
void refuse_negative_unsigned(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    for (CLI::Option* o : sub->get_options())
      if (o->get_type_name().rfind("UINT", 0) == 0)
        o->check(CLI::Validator(
            [](std::string& text) -> std::string {
              return text.rfind('-', 0) == 0
                         ? fmt::format("expected a non-negative integer, got {}", text)
                         : "";
            },
            ""));
    refuse_negative_unsigned(*sub);
  }
}

// --max-memory on every command that does its own work (not the entries that fusim hands to
// fusim-backend): the budget of core/memory_budget.h, set as FUSIM_MEMORY_BUDGET for this
// process when parsed, i.e. before the command runs; checked as a size at parse time.
void add_max_memory_option(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_allow_extras()) continue;
    sub->add_option_function<std::string>(
           "--max-memory",
           [](const std::string& size) { ::setenv("FUSIM_MEMORY_BUDGET", size.c_str(), 1); },
           fmt::format("Refuse, before allocating, a configuration whose simulated state "
                       "(caches, DRAM banks, traces) would need more host memory than SIZE "
                       "(default {} or $FUSIM_MEMORY_BUDGET), naming the field and the need",
                       format_bytes(kDefaultMemoryBudgetBytes)))
        ->type_name("SIZE")
        ->check(CLI::Validator(
            [](std::string& text) -> std::string {
              const auto bytes = parse_bytes(text);
              return bytes && *bytes > 0
                         ? ""
                         : fmt::format("expected a byte size such as 16GiB, got \"{}\"", text);
            },
            "SIZE"));
    add_max_memory_option(*sub);
  }
}

}  // namespace

int run_fusim(int argc, char** argv, const std::function<void(CLI::App&)>& add_backend_commands) {
  CLI::App app{
      "fusim: trace-driven simulator of training-step scheduling.\n"
      "Predicts step time when the optimizer update is fused into the backward or forward\n"
      "pass (vs eager), on models of caches, DRAM and cores/GPUs, and checks the prediction\n"
      "against real execution on libtorch. Help on a command: fusim help COMMAND.",
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
  add_max_memory_option(app);
  refuse_negative_unsigned(app);
  add_shared_options_help(app);  // last: it lists the shared options each command took

  // `fusim help [COMMAND...]` is `fusim [COMMAND...] --help` (as git and cargo have it).
  std::vector<std::string> help_words;
  std::vector<char*> help_argv;
  if (argc >= 2 && std::string(argv[1]) == "help") {
    help_words.assign(argv, argv + argc);
    help_words.erase(help_words.begin() + 1);
    help_words.push_back("--help");
    for (auto& w : help_words) help_argv.push_back(w.data());
    help_argv.push_back(nullptr);
    argc = int(help_words.size());
    argv = help_argv.data();
  }
  std::vector<CLI::App*> chain;
  try {
    chain = command_chain(app, argc, argv);
    // A group named without its command ("fusim", "fusim bench"): say which there are
    // (CLI11: "A subcommand is required"), unless help or the version is asked for.
    bool asks_help = false;
    for (int i = 1; i < argc; ++i) {
      const std::string word = argv[i];
      asks_help = asks_help || word == "--help" || word == "-h" || word == "--version";
    }
    if (chain.back()->get_require_subcommand_min() > 0 && !asks_help) {
      std::string path;
      for (std::size_t k = 1; k < chain.size(); ++k) path += chain[k]->get_name() + " ";
      throw InputError(fmt::format("{}expected a command: one of {} (`fusim {}--help` says more)",
                                   path.empty() ? "" : path.substr(0, path.size() - 1) + ": ",
                                   fmt::join(subcommand_names(*chain.back()), ", "), path));
    }
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help / --version: CLI11 prints them. Every other parse error (unknown option,
    // missing value, a value out of range) is one line like an InputError's.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::string message = e.what();
    if (dynamic_cast<const CLI::ExtrasError*>(&e))
      message = unexpected_argument(chain, argc, argv, message);
    if (dynamic_cast<const CLI::ConversionError*>(&e)) message = conversion_message(chain, message);
    // CLI11 messages may hold line breaks: one line, like every other error.
    for (char& c : message)
      if (c == '\n') c = ' ';
    std::fprintf(stderr, "fusim: %s\n", message.c_str());
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
