#include <algorithm>

#include "schedule/schedule.h"

namespace fusim::schedule {

std::vector<int> step_openers(const Schedule& s) {
  std::vector<int> first(static_cast<std::size_t>(std::max(1, s.steps)), -1);
  for (const Op& op : s.ops) {
    if (op.kind != OpKind::Forward || op.step < 0 || op.step >= static_cast<int>(first.size()))
      continue;
    int& f = first[static_cast<std::size_t>(op.step)];
    if (f < 0) f = op.id;
  }
  return first;
}

}  // namespace fusim::schedule
