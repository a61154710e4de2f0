#include "core/error.h"

#include <cstdio>
#include <cstdlib>

namespace fusim {
namespace {
std::string compose(const std::string& file, const std::string& where,
                    const std::string& expected) {
  std::string msg = file;
  if (!where.empty()) msg += (msg.empty() ? "" : ": ") + where;
  if (!msg.empty()) msg += ": ";
  return msg + "expected " + expected;
}
}  // namespace

InputError::InputError(std::string file, std::string where, std::string expected)
    : std::runtime_error(compose(file, where, expected)),
      file_(std::move(file)),
      where_(std::move(where)) {}

InputError::InputError(std::string message) : std::runtime_error(std::move(message)) {}

void assertion_failed(const char* expr, const char* file, int line, const std::string& context) {
  std::fprintf(stderr, "fusim: internal error (a bug): %s:%d: %s failed: %s\n", file, line, expr,
               context.c_str());
  std::abort();
}

}  // namespace fusim
