#pragma once
// Dinero-style address traces for `fusim cache`: one access per line,
//   R 0x7ffd1000 8        read 8 bytes (BYTES optional, default 8)
//   W 0x7ffd1040          write
// Blank lines and lines starting with '#' are skipped. Anything else is an InputError naming
// the file and the line number.
#include <cstdint>
#include <functional>
#include <istream>
#include <string>

#include "mem/memory_port.h"

namespace fusim::cache {

struct TraceAccess {
  mem::Addr addr = 0;
  std::uint64_t bytes = 8;
  bool is_write = false;
};

// Calls visit for every access, in order, streaming (traces may be large).
// Returns the number of accesses.
std::uint64_t read_address_trace(std::istream& in, const std::string& name,
                                 const std::function<void(const TraceAccess&)>& visit);
std::uint64_t read_address_trace_file(const std::string& path,
                                      const std::function<void(const TraceAccess&)>& visit);

}  // namespace fusim::cache
