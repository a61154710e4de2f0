#include "core/output_file.h"

#include <unistd.h>
#include <cstdio>
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

}  // namespace fusim
