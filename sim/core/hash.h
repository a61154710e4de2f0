#pragma once
// One stable text hash for keys that outlive a process (profile op keys, cached DRAM
// curve file names): 64-bit FNV-1a (Fowler, Noll, Vo; offset basis and prime from the
// reference at www.isthe.com/chongo/tech/comp/fnv). std::hash is not stable across
// builds, so it cannot name files or keys on disk.
#include <cstdint>
#include <string_view>

namespace fusim {

inline std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace fusim
