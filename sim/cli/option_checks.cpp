#include "cli/option_checks.h"

#include <fmt/format.h>
#include <charconv>
#include <filesystem>
#include <system_error>
#include <thread>

namespace fusim::cli {

CLI::Validator int_range(std::int64_t lo, std::int64_t hi, const std::string& meaning) {
  std::string expected = fmt::format("an integer in [{}, {}]", lo, hi);
  if (!meaning.empty()) expected += " (" + meaning + ")";
  // CLI11 prefixes the option's name: "--steps: expected an integer in [1, 1000], got 0".
  return CLI::Validator(
      [lo, hi, expected](std::string& text) -> std::string {
        std::int64_t value = 0;
        const char* end = text.data() + text.size();
        auto [ptr, ec] = std::from_chars(text.data(), end, value);
        if (ec != std::errc() || ptr != end)
          return fmt::format("expected {}, got \"{}\"", expected, text);
        if (value < lo || value > hi) return fmt::format("expected {}, got {}", expected, value);
        return "";
      },
      expected);
}

CLI::Validator existing_file(const std::string& what) {
  return CLI::Validator(
      [what](std::string& text) -> std::string {
        std::error_code ec;
        const auto status = std::filesystem::status(text, ec);
        if (ec || !std::filesystem::exists(status))
          return fmt::format("expected {}, got \"{}\": no such file", what, text);
        if (std::filesystem::is_directory(status))
          return fmt::format("expected {}, got the directory \"{}\"", what, text);
        return "";
      },
      "FILE");
}

CLI::Validator positive_int() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::int64_t value = 0;
        const char* end = text.data() + text.size();
        auto [ptr, ec] = std::from_chars(text.data(), end, value);
        if (ec != std::errc() || ptr != end)
          return fmt::format("expected a positive integer, got \"{}\"", text);
        return value < 1 ? fmt::format("expected a positive integer, got {}", value) : "";
      },
      "POSITIVE");
}

void warn_no_effect(const std::string& option, const std::string& why) {
  fmt::print(stderr, "fusim: warning: {} has no effect {}\n", option, why);
}

int host_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

}  // namespace fusim::cli
