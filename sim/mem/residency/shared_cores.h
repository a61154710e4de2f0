#pragma once
// Private cache levels whose stacks share cores: on a GPU a kernel runs on whichever SMs
// are free, so the SM sets of kernels overlap, and one stack of every SM's L1 together
// (an op on 8 SMs holding 108 SMs' worth) kept what 8 L1s cannot: the bundled MLP on the
// A100, whose kernels run on 8 to 108 SMs, was 11% faster than line fidelity (a linear's
// 4 MiB weight read again by its backward on the same 8 SMs hit in that 20 MiB stack; line
// fidelity's 8 x 192 KiB L1s miss it all).
//
// So each set of cores gets its own stacks of a private level (ResidencyHierarchy::
// add_bin: its cores x the level's size), and what other sets fill into its cores ages
// it: each core counts the bytes filled into its instance of the level (a set's fills
// spread evenly over its cores, as the executor splits every range), and before a set's
// next access its stack takes, as nobody's bytes (RangeStack::age), what its cores were
// filled with by other sets since its last access. Per core that is LRU by fill count:
// exact for streams (a core's instance holds its last `size` bytes of fills), leaving
// out that a hit of another set on a shared core also moves that set's bytes above ours
// (hits evict nothing, so it changes order, not what is held, until the next fill).
// Copies held for one set are never hits for another (they would not be either under
// the Owner rule of range_stack.h: only an identical split finds its bytes).
//
// Cost: O(cores of the set) per access and private level. Deterministic; not thread-safe.
#include <cstdint>
#include <vector>

namespace fusim::residency {

class SharedCores {
 public:
  SharedCores(int levels, int cores);
  // A new set of cores (ids in [0, cores)); returns its index (0, 1, ...).
  int add(std::vector<int> cores);
  int sets() const { return static_cast<int>(cores_.size()); }
  // Bytes (whole units) other sets filled into set `set`'s cores at `level` since it last
  // took them; taken now.
  std::uint64_t take_foreign(int level, int set, std::uint64_t unit);
  // Set `set` filled `bytes` into its cores' instances of `level` (evenly).
  void filled(int level, int set, std::uint64_t bytes);

 private:
  double sum(int level, int set) const;
  std::vector<std::vector<int>> cores_;     // per set
  std::vector<std::vector<double>> fills_;  // per level, per core: bytes filled
  std::vector<std::vector<double>> taken_;  // per level, per set: sum of its cores' fills seen
};

}  // namespace fusim::residency
