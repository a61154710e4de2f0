#include "core/error.h"

#include <cstdio>
#include <cstdlib>

namespace fusim {
namespace {
// An input error is one line (the contract, and what scripts grep). Parts of it echo
// user text (a JSON key, a file name, a command-line value), which may hold a newline or a
// terminal escape: print those as C escapes so the message stays one printable line.
std::string one_line(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string compose(const std::string& file, const std::string& where,
                    const std::string& expected) {
  std::string msg = file;
  if (!where.empty()) msg += (msg.empty() ? "" : ": ") + where;
  if (!msg.empty()) msg += ": ";
  return one_line(msg + "expected " + expected);
}
}  // namespace

InputError::InputError(std::string file, std::string where, std::string expected)
    : std::runtime_error(compose(file, where, expected)),
      file_(std::move(file)),
      where_(std::move(where)) {}

InputError::InputError(std::string message) : std::runtime_error(one_line(message)) {}

void assertion_failed(const char* expr, const char* file, int line, const std::string& context) {
  std::fprintf(stderr, "fusim: internal error (a bug): %s:%d: %s failed: %s\n", file, line, expr,
               context.c_str());
  std::abort();
}

}  // namespace fusim
