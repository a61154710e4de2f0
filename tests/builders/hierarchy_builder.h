#pragma once
// Cache hierarchies for tests, stated by what the test is about: a level is a builder with
// named defaults, a hierarchy a list of them. build() writes the JSON of the "caches" section
// and reads it with the production reader (cache_config.h), so every test hierarchy passes
// the same checks as a machine file's.
//   auto config = HierarchyBuilder{}
//                     .level(defaults::tiny_l1())
//                     .level(defaults::tiny_l2().latency(12).inclusion("inclusive"))
//                     .build();
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/json_view.h"
#include "mem/cache/cache_config.h"

namespace fusim::test {

class LevelBuilder {
 public:
  explicit LevelBuilder(std::string name) { json_["name"] = std::move(name); }
  LevelBuilder& size(std::int64_t bytes) { return set("size", bytes); }
  LevelBuilder& size(const std::string& text) { return set("size", text); }  // "48KiB"
  LevelBuilder& assoc(int ways) { return set("assoc", ways); }
  LevelBuilder& line(int bytes) { return set("line", bytes); }
  LevelBuilder& latency(int cycles) { return set("latency_cycles", cycles); }
  LevelBuilder& policy(const std::string& name) { return set("policy", name); }
  LevelBuilder& shared(bool on = true) { return set("shared", on); }
  LevelBuilder& mshrs(int n) { return set("mshrs", n); }
  LevelBuilder& ports(int n) { return set("ports", n); }
  LevelBuilder& bytes_per_cycle(int n) { return set("bytes_per_cycle", n); }
  LevelBuilder& inclusion(const std::string& how) { return set("inclusion", how); }
  LevelBuilder& write_through() { return set("write_policy", "write-through"); }
  LevelBuilder& write_allocate(bool on) { return set("write_allocate", on); }
  LevelBuilder& write_validate(bool on = true) { return set("write_validate", on); }
  LevelBuilder& clock(const std::string& text) { return set("clock", text); }
  const nlohmann::json& json() const { return json_; }

 private:
  template <class V>
  LevelBuilder& set(const char* key, V value) {
    json_[key] = value;
    return *this;
  }
  nlohmann::json json_;
};

class HierarchyBuilder {
 public:
  HierarchyBuilder& level(const LevelBuilder& l) {
    json_["levels"].push_back(l.json());
    return *this;
  }
  HierarchyBuilder& clock(const std::string& text) {
    json_["clock"] = text;
    return *this;
  }
  HierarchyBuilder& block(std::int64_t bytes) {
    json_["block"] = bytes;
    return *this;
  }
  const nlohmann::json& json() const { return json_; }
  cache::HierarchyConfig build() const {
    return cache::parse_hierarchy_config(JsonView(json_, "test-hierarchy"));
  }

 private:
  nlohmann::json json_ = {{"levels", nlohmann::json::array()}};
};

namespace defaults {
// Hand-worked tests: one set of 4 ways of 64 B (256 B), lookups of 4 and 12 cycles.
inline LevelBuilder tiny_l1() {
  return LevelBuilder("L1").size(256).assoc(4).line(64).latency(4);
}
inline LevelBuilder tiny_l2() {
  return LevelBuilder("L2").size(256).assoc(4).line(64).latency(12);
}
// Timing tests: a 64 KiB 4-way L1 of 64 B lines and 1-cycle lookups, so big that a test's
// few lines never conflict in it.
inline LevelBuilder one_cycle_l1() {
  return LevelBuilder("L1").size("64KiB").assoc(4).line(64).latency(1);
}
// The H100's L2 as models/machines/h100-sxm5.json has it (50 MiB, shared by the SMs).
inline LevelBuilder h100_l2() {
  return LevelBuilder("L2").size("50MiB").assoc(16).line(128).latency(260).mshrs(33792).shared();
}
}  // namespace defaults

}  // namespace fusim::test
