#include "schedule/mixed.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/json_view.h"

namespace fusim::schedule {
namespace {
LayerMode read_mode(const JsonView& v) {
  auto mode = parse_layer_mode(v.as_string());
  if (!mode) v.fail_got("one of \"eager\", \"backward\", \"forward\"");
  return *mode;
}
}  // namespace

MixedOrdering parse_mixed_ordering(const nlohmann::json& document, const std::string& name,
                                   const workload::Trace& trace) {
  JsonView root(document, name);
  root.require_object();
  root.reject_unknown_keys({"layers", "default"});
  MixedOrdering mixed;
  mixed.file = name;
  mixed.fallback = read_mode(root.at("default"));
  JsonView layers = root.at("layers");
  layers.require_object();
  for (const auto& key : layers.keys()) {
    const workload::Layer* found = nullptr;
    for (const auto& layer : trace.layers)
      if (layer.name == key) found = &layer;
    JsonView entry = layers.at(key);
    if (!found)
      entry.fail(
          fmt::format("a layer name of trace {}, got unknown layer \"{}\"", trace.model, key));
    bool trained = false;
    for (const auto& p : found->params) trained = trained || p.requires_grad;
    if (!trained)
      entry.fail(fmt::format("a layer with trained params, got \"{}\" ({}) which has none", key,
                             workload::to_string(found->op)));
    mixed.layers[key] = read_mode(entry);
  }
  return mixed;
}

MixedOrdering load_mixed_ordering(const std::string& path, const workload::Trace& trace) {
  return parse_mixed_ordering(load_json_file(path), path, trace);
}

}  // namespace fusim::schedule
