#pragma once
// Byte sizes written by people: "48KiB", "2MiB", "1GiB", "64B", "64", "1.5MiB".
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fusim {

// Binary units (KiB = 1024). Also accepts KB/MB/GB as binary (how cache sizes are spoken of).
// nullopt when malformed, negative, fractional bytes, or overflowing int64.
std::optional<std::int64_t> parse_bytes(std::string_view text);

// A size given on the command line (--block 4KiB, --footprint 1GiB): a positive byte count,
// else InputError "--block: expected a size such as 64, 4KiB or 1GiB, got \"x\"".
std::int64_t parse_size_option(const std::string& option, const std::string& text);

// "48KiB" for 49152; exact binary unit when divisible, else plain bytes.
std::string format_bytes(std::int64_t bytes);

}  // namespace fusim
