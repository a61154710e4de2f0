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

// This host's hardware threads (at least 1): the most intra-op threads worth asking for.
int host_threads();

}  // namespace fusim::cli
