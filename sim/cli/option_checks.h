#pragma once
// Range checks of numeric command-line options, attached where an option is declared, so
// that every command refuses a value out of range the same way, at parse time and before
// any work: "fusim: --block: expected an integer in [1, 100000], got 0" (exit code 2;
// main.cpp prints every parse error as that one line).
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

namespace fusim::cli {

// Integers in [lo, hi]; `meaning` (optional) says what the ends mean, e.g. "0 = libtorch's
// default, at most this host's 16 hardware threads".
CLI::Validator int_range(std::int64_t lo, std::int64_t hi, const std::string& meaning = "");

// Integers >= 1, for sizes whose 0 stands for "the default" inside (NetworkOptions,
// PlanArgs): given explicitly, 0 or a negative value was taken as the default without a word.
CLI::Validator positive_int();

// A file that exists and is not a directory, in the words of every other error: "--profile:
// expected a profile JSON file (fusim profile -o), got the directory /tmp" (CLI11's own
// check says "File is actually a directory: /tmp"). `what`: the kind of file expected.
CLI::Validator existing_file(const std::string& what);

// This host's hardware threads (at least 1): the most intra-op threads worth asking for.
int host_threads();

// An option given where it changes nothing (issue 21, point 2): one line on stderr,
// "fusim: warning: --block has no effect with --fidelity line (...)", and the command goes
// on, so that a mistaken option is never taken silently.
void warn_no_effect(const std::string& option, const std::string& why);

}  // namespace fusim::cli
