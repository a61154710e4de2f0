#pragma once
// Shared pieces of the libFuzzer targets. A target feeds the bytes to one reader the way the
// CLI does; InputError is the expected, correct answer to bad bytes and is swallowed. Any
// other exception escapes and libFuzzer reports it as a crash ("uncaught exception"): the
// readers promise InputError for all bad input (DESIGN.md, "Principles").
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/json_view.h"

namespace fusim::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The name messages use for the fuzzed "file".
inline constexpr const char* kFile = "fuzz-input";

// Runs `body`; bad input must come back as InputError (a one-line message naming kFile).
template <class Body>
int expect_input_error_or_success(Body&& body) {
  try {
    body();
  } catch (const InputError& e) {
    std::string_view what = e.what();
    // Every message names the input and is one line (the CLI prints it as such).
    FUSIM_ASSERT(what.find('\n') == std::string_view::npos,
                 "an InputError message spans several lines: " + std::string(what));
  }
  return 0;
}

}  // namespace fusim::fuzz
