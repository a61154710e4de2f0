#include "core/watchdog.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace fusim {

void Watchdog::watch(std::string name, std::function<bool()> busy,
                     std::function<std::string()> dump) {
  components_.push_back(Component{std::move(name), std::move(busy), std::move(dump)});
}

std::vector<std::string> Watchdog::busy_components() const {
  std::vector<std::string> out;
  for (const auto& c : components_)
    if (c.busy()) out.push_back(c.name);
  return out;
}

std::string Watchdog::report(Tick now) const {
  std::string text =
      fmt::format("watchdog: event queue empty at {} ps with work outstanding in: {}\n", now,
                  fmt::join(busy_components(), ", "));
  for (const auto& c : components_) {
    text += fmt::format("== {} ({})\n", c.name, c.busy() ? "busy" : "idle");
    std::string state = c.dump();
    if (!state.empty() && state.back() != '\n') state += '\n';
    text += state;
  }
  return text;
}

void Watchdog::check(const EventQueue& queue) const {
  if (!queue.empty()) return;
  if (busy_components().empty()) return;
  throw SimulationStall(report(queue.now()));
}

void Watchdog::run_checked(EventQueue& queue, Tick limit) const {
  queue.run_until(limit);
  check(queue);
}

}  // namespace fusim
