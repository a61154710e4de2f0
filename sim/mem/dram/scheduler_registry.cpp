#include <fmt/format.h>

#include "core/error.h"
#include "mem/dram/scheduler.h"

namespace fusim::dram {
namespace {

struct Entry {
  const char* name;
  std::unique_ptr<Scheduler> (*make)(const ControllerConfig&);
};
// Adding a policy: one file with its make_*_scheduler and one line here.
constexpr Entry kSchedulers[] = {
    {"fcfs", make_fcfs_scheduler},
    {"frfcfs", make_frfcfs_scheduler},
    {"frfcfs-cap", make_frfcfs_cap_scheduler},
    {"stream-aware", make_stream_aware_scheduler},
    {"cads", make_cads_scheduler},
};

}  // namespace

std::size_t pick_first_ready(const Candidate* c, std::size_t n, bool prefer_hits) {
  Cycle first = kNoCycle;
  for (std::size_t i = 0; i < n; ++i) first = std::min(first, c[i].ready);
  std::size_t best = n;
  for (std::size_t i = 0; i < n; ++i) {
    if (c[i].ready > first) continue;
    if (!prefer_hits || c[i].row_hit) return i;  // age order: the first is the oldest
    if (best == n) best = i;
  }
  return best;
}

std::unique_ptr<Scheduler> make_scheduler(const ControllerConfig& cfg, const std::string& file) {
  for (const auto& e : kSchedulers) {
    if (cfg.scheduler == e.name) return e.make(cfg);
  }
  throw InputError(file, "scheduler",
                   fmt::format("one of \"fcfs\", \"frfcfs\", \"frfcfs-cap\", \"stream-aware\", "
                               "\"cads\", got \"{}\"",
                               cfg.scheduler));
}

}  // namespace fusim::dram
