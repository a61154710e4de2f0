#include "mem/cache/address_trace.h"

#include <fmt/format.h>
#include <cctype>
#include <charconv>
#include <fstream>
#include <string_view>

#include "core/error.h"

namespace fusim::cache {
namespace {
constexpr const char* kForm = "\"R|W 0xADDR [BYTES]\"";
constexpr std::uint64_t kMaxAccessBytes = std::uint64_t{1} << 20;
constexpr std::size_t kMaxLineBytes = 4096;

std::string_view next_token(std::string_view& rest) {
  std::size_t b = 0;
  while (b < rest.size() && std::isspace(static_cast<unsigned char>(rest[b]))) ++b;
  std::size_t e = b;
  while (e < rest.size() && !std::isspace(static_cast<unsigned char>(rest[e]))) ++e;
  std::string_view token = rest.substr(b, e - b);
  rest.remove_prefix(e);
  return token;
}

std::string shown(std::string_view line) {
  std::string s(line.substr(0, 40));
  return line.size() > 40 ? s + "..." : s;
}
}  // namespace

std::uint64_t read_address_trace(std::istream& in, const std::string& name,
                                 const std::function<void(const TraceAccess&)>& visit) {
  std::uint64_t line_no = 0, count = 0;
  // Lines of at most kMaxLineBytes: a longer one is no access, and reading it whole from an
  // endless source (/dev/zero) never ended.
  std::string buffer(kMaxLineBytes + 1, '\0');
  while (true) {
    in.getline(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (in.bad() || (got == 0 && in.eof())) break;
    ++line_no;
    if (in.fail() && !in.eof())
      throw InputError(
          name, fmt::format("line {}", line_no),
          fmt::format("{} in at most {} bytes, got a longer line", kForm, kMaxLineBytes));
    // gcount() counts the '\n' that getline extracted (all lines but an unterminated last).
    const std::string_view text(buffer.data(), in.eof() ? got : got - 1);
    std::string_view rest(text);
    if (!rest.empty() && rest.back() == '\r') rest.remove_suffix(1);
    std::string_view line = rest;
    std::string_view op = next_token(rest);
    if (op.empty() || op.front() == '#') continue;
    auto fail = [&](const std::string& what) {
      throw InputError(name, fmt::format("line {}", line_no),
                       fmt::format("{} ({}), got \"{}\"", kForm, what, shown(line)));
    };
    TraceAccess a;
    if (op == "R")
      a.is_write = false;
    else if (op == "W")
      a.is_write = true;
    else
      fail("the access must be R or W");
    std::string_view addr = next_token(rest);
    if (addr.size() < 3 || addr[0] != '0' || (addr[1] != 'x' && addr[1] != 'X'))
      fail("the address must be hexadecimal with 0x");
    auto [p, ec] = std::from_chars(addr.data() + 2, addr.data() + addr.size(), a.addr, 16);
    if (ec != std::errc() || p != addr.data() + addr.size())
      fail("the address must be hexadecimal with 0x, at most 64 bits");
    std::string_view bytes = next_token(rest);
    if (!bytes.empty()) {
      auto [q, ec2] = std::from_chars(bytes.data(), bytes.data() + bytes.size(), a.bytes);
      if (ec2 != std::errc() || q != bytes.data() + bytes.size() || a.bytes == 0)
        fail("BYTES must be a positive decimal integer");
      // One trace line is one access (Dinero: one instruction's reference). Unbounded, a line
      // such as "R 0x10 18446744073709551600" walked 2^60 lines: a hang (fuzz_address_trace).
      if (a.bytes > kMaxAccessBytes) fail("BYTES must be at most 1048576 (1 MiB) per access");
      if (a.addr + (a.bytes - 1) < a.addr)
        fail("the access runs past the end of the address space");
    }
    if (!next_token(rest).empty()) fail("nothing may follow BYTES");
    visit(a);
    ++count;
  }
  if (in.bad()) throw InputError(name, "", "a readable file (read failed)");
  return count;
}

std::uint64_t read_address_trace_file(const std::string& path,
                                      const std::function<void(const TraceAccess&)>& visit) {
  std::ifstream in(path);
  if (!in) throw InputError(path, "", "a readable address trace (cannot open it)");
  return read_address_trace(in, path, visit);
}

}  // namespace fusim::cache
