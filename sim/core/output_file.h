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

}  // namespace fusim
