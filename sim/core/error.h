#pragma once
// One error type for bad input, caught once in main (exit code 2). Internal invariant
// failures are bugs: they use FUSIM_ASSERT and abort with context instead.
#include <stdexcept>
#include <string>

namespace fusim {

class InputError : public std::runtime_error {
 public:
  // file: the input's path; where: a JSON path ("layers[12].attrs.stride") or "line 17";
  // expected: what should have been there, ideally with what was found.
  InputError(std::string file, std::string where, std::string expected);
  // For errors not tied to one place in a file (e.g. a command-line value).
  explicit InputError(std::string message);

  const std::string& file() const { return file_; }
  const std::string& where() const { return where_; }

 private:
  std::string file_, where_;
};

[[noreturn]] void assertion_failed(const char* expr, const char* file, int line,
                                   const std::string& context);

}  // namespace fusim

#define FUSIM_ASSERT(cond, context)                                              \
  do {                                                                           \
    if (!(cond)) ::fusim::assertion_failed(#cond, __FILE__, __LINE__, (context)); \
  } while (0)
