#include "core/output_file.h"

#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/error.h"

namespace fusim {

void write_file_atomically(const std::string& path, const std::string& text,
                           const std::string& option) {
  // The temporary name carries the process id: two processes writing the same file never
  // share a temporary.
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw InputError(path, "", "a writable file for " + option + " (writing it failed)");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw InputError(path, "",
                     "a writable file for " + option + " (renaming the temporary file failed)");
  }
}

void check_output_path(const std::string& path, const std::string& option) {
  if (path.empty()) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(path);
  if (fs::is_directory(p, ec))
    throw InputError(path, "", "a file for " + option + ", got a directory");
  const fs::path folder = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(folder, ec))
    throw InputError(
        path, "",
        "a writable file for " + option + " (its folder " + folder.string() + " does not exist)");
  // The temporary file and the rename both need the folder writable.
  if (::access(folder.c_str(), W_OK) != 0)
    throw InputError(
        path, "",
        "a writable file for " + option + " (its folder " + folder.string() + " is not writable)");
}

}  // namespace fusim
