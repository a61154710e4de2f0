#include "mem/cache/replacement.h"

#include "core/error.h"

namespace fusim::cache {
namespace {
struct Entry {
  const char* name;
  std::unique_ptr<ReplacementPolicy> (*make)(const PolicyParams&);
};
// The registry: one line per policy.
const Entry kPolicies[] = {
    {"lru", make_lru},
    {"tree-plru", make_tree_plru},
    {"random", make_random},
    {"srrip", make_srrip},
};
}  // namespace

std::unique_ptr<ReplacementPolicy> make_policy(const std::string& name,
                                               const PolicyParams& params) {
  for (const auto& e : kPolicies)
    if (name == e.name) return e.make(params);
  FUSIM_ASSERT(false, "unknown replacement policy '" + name + "' (config parsing checks names)");
}

bool is_known_policy(const std::string& name) {
  for (const auto& e : kPolicies)
    if (name == e.name) return true;
  return false;
}

std::vector<std::string> policy_names() {
  std::vector<std::string> out;
  for (const auto& e : kPolicies) out.emplace_back(e.name);
  return out;
}

std::string policy_geometry_problem(const std::string& name, std::uint32_t ways) {
  if (name == "tree-plru" && (ways & (ways - 1)) != 0)
    return "a power-of-two associativity for tree-plru (a binary tree over the ways), got " +
           std::to_string(ways);
  return {};
}

}  // namespace fusim::cache
