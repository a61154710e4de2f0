#pragma once
// Creates each tensor of a schedule once, keyed by (name, step); step -1 for tensors that
// persist across steps (weights, optimizer state).
#include <map>
#include <string>
#include <utility>

#include "schedule/schedule.h"

namespace fusim::schedule {

class TensorRegistry {
 public:
  explicit TensorRegistry(Schedule& schedule) : schedule_(schedule) {}

  int get(const std::string& name, int step, TensorCategory category, int layer, std::int64_t bytes,
          int param = -1) {
    auto key = std::make_pair(name, step);
    if (auto it = index_.find(key); it != index_.end()) return it->second;
    Tensor t;
    t.id = int(schedule_.tensors.size());
    t.name = name;
    t.category = category;
    t.layer = layer;
    t.bytes = bytes;
    t.step = step;
    t.param = param;
    schedule_.tensors.push_back(t);
    index_.emplace(key, t.id);
    return t.id;
  }

 private:
  Schedule& schedule_;
  std::map<std::pair<std::string, int>, int> index_;
};

}  // namespace fusim::schedule
