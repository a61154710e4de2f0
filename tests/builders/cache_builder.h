#pragma once
// One cache array for policy tests in a line: sizes in bytes, policy by name.
//   auto cache = CacheBuilder{}.size(4 * 64).assoc(4).line(64).policy("lru").build();
#include <cstdint>
#include <string>

#include "core/error.h"
#include "mem/cache/cache.h"
#include "mem/cache/replacement.h"

namespace fusim::test {

class CacheBuilder {
 public:
  CacheBuilder& size(std::uint64_t bytes) { return set(size_, bytes); }
  CacheBuilder& assoc(std::uint32_t ways) { return set(assoc_, ways); }
  CacheBuilder& line(std::uint64_t bytes) { return set(line_, bytes); }
  CacheBuilder& policy(std::string name) { return set(policy_, std::move(name)); }
  CacheBuilder& seed(std::uint64_t seed) { return set(seed_, seed); }

  cache::Cache build() const {
    FUSIM_ASSERT(size_ % (line_ * assoc_) == 0,
                 "CacheBuilder: size must be a multiple of line * assoc");
    const auto sets = static_cast<std::uint32_t>(size_ / (line_ * assoc_));
    return cache::Cache(line_, sets, assoc_,
                        cache::make_policy(policy_, cache::PolicyParams{sets, assoc_, seed_}));
  }

 private:
  template <class T, class V>
  CacheBuilder& set(T& field, V value) {
    field = std::move(value);
    return *this;
  }
  std::uint64_t size_ = 32 * 1024, line_ = 64, seed_ = 1;
  std::uint32_t assoc_ = 8;
  std::string policy_ = "lru";
};

}  // namespace fusim::test
