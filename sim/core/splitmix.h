#pragma once
// One deterministic 64-bit generator for every draw the simulator makes (synthetic DRAM
// traces, the curve probe's addresses, cads' exploration): splitmix64 (Steele, Lea and
// Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014). Library
// distributions are not specified bit for bit across standard libraries, so the same
// seed would not give the same trace, curve or command stream everywhere.
#include <cstdint>

namespace fusim {

// Advances `state` and returns the next value.
inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace fusim
