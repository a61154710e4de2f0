#pragma once
// Set-associativity in the `tensor` fidelity: the fraction of a range that an LRU array of
// `ways`-way sets still holds, from its reuse distance, instead of the all-or-nothing cliff
// of a fully associative LRU of the same size (range_stack.h).
//
// The model (the stack-distance view of set conflicts: Smith, "A comparative study of set
// associative memory mapping algorithms and their use for cache and main memory", IEEE
// TSE 4(2), 1978; Hill & Smith, "Evaluating associativity in CPU caches", IEEE TC 38(12),
// 1989): under LRU a unit survives in a set of W ways exactly when fewer than W other units
// of its set were used since its last use. Smith takes the units since then as placed in
// sets at random (a binomial count); the line model places lines by address (set = line
// mod sets), so a contiguous run of L bytes puts floor(L / span) or one more of its lines in
// each set (span = sets x line = capacity / ways): a single cyclic stream keeps the exact
// cliff of a fully associative LRU, and only the misalignment of different runs spreads the
// count. Here the count a unit of a range sees is
//   N = (n - 1) + X,   X ~ Normal(other / span, sum over runs of f (1 - f)),
// n: the lines of its own run (the range re-read: all of it is used since the unit's last
// use, in order) in its set, floor(own / span) or one more; other: the bytes of every other
// run used since, f = frac(run / span) (a run of random alignment covers a fraction f of
// the sets once more than the others: a Bernoulli(f) count per set, the sum over
// independent runs approximately normal). The hit fraction is P(N <= W - 1) over the
// range's units, with a continuity correction; zero variance gives the exact counts (a
// single stream of R bytes loses exactly the units in the sets it fills beyond W).
//
// Not thread-safe; no global state.
#include <cstdint>
#include <vector>

namespace fusim::residency {

// The geometry an array's stack models. ways == 0: fully associative (exact LRU, no set
// model). span: the bytes that fill each set once (capacity / ways; a private level's stack
// of n cores has n times the sets); unit: the smallest access, for rounding a split.
struct SetGeometry {
  std::uint32_t ways = 0;
  std::uint64_t span = 0;
  std::uint64_t unit = 64;
};

// f (1 - f), f = frac(run_bytes / span): the variance of one run's count in a set.
double run_variance(std::uint64_t run_bytes, std::uint64_t span);

// P(N <= ways - 1) for the count N above, over the units of the own run (own / other in
// bytes, other_var the variance of X).
double hit_probability(std::uint64_t own_bytes, std::uint64_t other_bytes, double other_var,
                       const SetGeometry& g);

// The share of the oldest `piece_bytes` of a run of `own_bytes` (the piece and the more
// recent rest of its run) that the array still holds now, with `other_bytes` of other runs
// (count variance other_var) used since: the lines that have not been evicted yet, where
// hit_probability() is the share a re-read of the whole run finds (the re-read's own
// fills push out more of it). A line with j more recent lines of its own run in its set
// stays while j + X <= ways - 1; a run of R = q span + r bytes has q + 1 lines in r / unit
// of the sets and q in the others, so it holds
//   S(R) = (r / unit) T(q + 1) + (sets - r / unit) T(q),  T(n) = sum_{j < min(n, ways)} P(X <= ways
//   - 1 - j)
// lines, and the piece (the oldest lines of the run: the newest ones never see it) holds
// S(own) - S(own - piece). A dirty line is written back when it is evicted: what this
// share loses between two looks at a dirty piece is written back then (range_stack.h).
double held_fraction(std::uint64_t own_bytes, std::uint64_t piece_bytes, std::uint64_t other_bytes,
                     double other_var, const SetGeometry& g);

// How deep a stack of a set-associative array keeps bytes (beyond its capacity, with the
// probability above): where that probability is negligible for any mix of runs (the count's
// variance is at most its mean, so at depth D = capacity x (1 + m) the hit probability is
// below Phi(-sqrt(ways) m / sqrt(1 + m)): m = max(1, 5 / sqrt(ways)) keeps it under 0.1% for
// 12 to 20 ways, 0.4% for 4).
std::uint64_t keep_depth(std::uint64_t capacity, const SetGeometry& g);

// Sums of bytes and of run variances by recency slot (a Fenwick tree): what lies above a
// slot of the stack (more recently used) in O(log slots).
class RecencySums {
 public:
  explicit RecencySums(std::uint32_t slots = 1024);
  std::uint32_t slots() const { return static_cast<std::uint32_t>(bytes_.size()) - 1; }
  // slot in [1, slots()].
  void add(std::uint32_t slot, std::int64_t bytes, double var);
  std::int64_t bytes_above(std::uint32_t slot) const { return total_bytes_ - prefix_bytes(slot); }
  double var_above(std::uint32_t slot) const;
  double total_var() const { return total_var_; }
  // Empties it, with room for `slots` slots.
  void reset(std::uint32_t slots);

 private:
  std::int64_t prefix_bytes(std::uint32_t slot) const;
  std::vector<std::int64_t> bytes_;
  std::vector<double> var_;
  std::int64_t total_bytes_ = 0;
  double total_var_ = 0;
};

}  // namespace fusim::residency
