#pragma once
// Builds hierarchies for tests from a JSON literal, so each test states only its levels.
#include <string>

#include "core/json_view.h"
#include "mem/cache/cache_config.h"
#include "mem/cache/hierarchy.h"

namespace fusim::cache::testing {

inline HierarchyConfig config_from(const std::string& json_text) {
  nlohmann::json doc = parse_json_text(json_text, "test.json");
  return parse_hierarchy_config(JsonView(doc, "test.json"));
}

}  // namespace fusim::cache::testing
