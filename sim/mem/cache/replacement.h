#pragma once
// Replacement policies: which way of a full set to evict. Each policy is one file beside
// this one and owns its per-line state in flat arrays indexed set * ways + way. The cache
// handles invalid ways itself (they are filled first) and calls victim() only on a full set.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fusim::cache {

class ReplacementPolicy {
 public:
  virtual ~ReplacementPolicy() = default;
  virtual void on_hit(std::uint32_t set, std::uint32_t way) = 0;
  virtual void on_fill(std::uint32_t set, std::uint32_t way) = 0;
  virtual void on_invalidate(std::uint32_t /*set*/, std::uint32_t /*way*/) {}
  // Every way of `set` is valid; returns the one to evict.
  virtual std::uint32_t victim(std::uint32_t set) = 0;
};

struct PolicyParams {
  std::uint32_t sets = 1, ways = 1;
  std::uint64_t seed = 1;
};

// The registry: "lru" | "tree-plru" | "random" | "srrip". Adding a policy is one file and
// one line in replacement.cpp.
std::unique_ptr<ReplacementPolicy> make_policy(const std::string& name, const PolicyParams& params);
bool is_known_policy(const std::string& name);
std::vector<std::string> policy_names();
// Empty when the geometry suits the policy, else what it needs ("a power-of-two
// associativity for tree-plru").
std::string policy_geometry_problem(const std::string& name, std::uint32_t ways);

// Constructors, one per file.
std::unique_ptr<ReplacementPolicy> make_lru(const PolicyParams& params);
std::unique_ptr<ReplacementPolicy> make_tree_plru(const PolicyParams& params);
std::unique_ptr<ReplacementPolicy> make_random(const PolicyParams& params);
std::unique_ptr<ReplacementPolicy> make_srrip(const PolicyParams& params);

}  // namespace fusim::cache
