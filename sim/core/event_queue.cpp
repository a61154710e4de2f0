#include "core/event_queue.h"

#include <fmt/format.h>

#include "core/error.h"

namespace fusim {

void EventQueue::schedule(Tick when, Priority priority, Callback callback) {
  FUSIM_ASSERT(when >= now_, fmt::format("event scheduled at {} ps, before now ({} ps)", when, now_));
  heap_.push(Event{when, static_cast<std::int8_t>(priority), seq_++, std::move(callback)});
}

bool EventQueue::step() {
  if (heap_.empty()) return false;
  // Move the callback out before popping: it may schedule new events.
  Event event = std::move(const_cast<Event&>(heap_.top()));
  heap_.pop();
  now_ = event.when;
  ++executed_;
  event.callback();
  return true;
}

bool EventQueue::run_until(Tick limit) {
  while (!heap_.empty() && heap_.top().when <= limit) step();
  return !heap_.empty();
}

}  // namespace fusim
