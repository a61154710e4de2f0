#pragma once
// Output files are written whole or not at all: into a temporary file next to the target,
// then renamed over it (rename(2) is atomic within a file system), so that an interrupted
// run never leaves half a timeline or report where a complete one is expected.
#include <string>

namespace fusim {

// Writes `text` to `path`; when it cannot, InputError naming the option ("out/t.json:
// expected a writable file for --timeline (writing it failed)").
void write_file_atomically(const std::string& path, const std::string& text,
                           const std::string& option);

// Before any work (a command checks its output paths first, so that a typo in -o fails in
// milliseconds, not after the measurement): `path` must not be a directory and its folder
// must exist and be writable; else InputError naming the option:
//   "out/x.json: expected a writable file for -o (its folder out does not exist)"
// Empty paths (an option not given) pass. Nothing is created.
void check_output_path(const std::string& path, const std::string& option);

}  // namespace fusim
