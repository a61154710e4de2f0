#include "core/event_queue.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"

namespace fusim {

namespace {
constexpr std::size_t kArity = 4;
constexpr int kSequenceBits = 56;
}  // namespace

void EventQueue::schedule(Tick when, Priority priority, Callback callback) {
  FUSIM_ASSERT(when >= now_,
               fmt::format("event scheduled at {} ps, before now ({} ps)", when, now_));
  FUSIM_ASSERT(seq_ < (std::uint64_t{1} << kSequenceBits), "event sequence number overflow");
  std::uint32_t slot;
  if (free_slots_.empty()) {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.push_back(std::move(callback));
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
    slots_[slot] = std::move(callback);
  }
  // Biased so that the priority's signed order is the unsigned order of the top byte.
  const auto rank = static_cast<std::uint64_t>(static_cast<int>(priority) + 128);
  heap_.emplace_back();
  sift_up(heap_.size() - 1, Item{when, (rank << kSequenceBits) | seq_++, slot});
}

void EventQueue::sift_up(std::size_t hole, Item item) {
  while (hole > 0) {
    const std::size_t parent = (hole - 1) / kArity;
    if (!before(item, heap_[parent])) break;
    heap_[hole] = heap_[parent];
    hole = parent;
  }
  heap_[hole] = item;
}

// Places `item` from the root down, the root's old item having been taken out.
void EventQueue::sift_down(Item item) {
  const std::size_t size = heap_.size();
  std::size_t hole = 0;
  for (;;) {
    const std::size_t first = hole * kArity + 1;
    if (first >= size) break;
    const std::size_t last = std::min(first + kArity, size);
    std::size_t best = first;
    for (std::size_t c = first + 1; c < last; ++c)
      if (before(heap_[c], heap_[best])) best = c;
    if (!before(heap_[best], item)) break;
    heap_[hole] = heap_[best];
    hole = best;
  }
  heap_[hole] = item;
}

bool EventQueue::step() {
  if (heap_.empty()) return false;
  const Item top = heap_.front();
  const Item tail = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(tail);
  // Moved out before running: the callback may schedule events that reuse or grow the slab.
  Callback callback = std::move(slots_[top.slot]);
  slots_[top.slot] = nullptr;
  free_slots_.push_back(top.slot);
  now_ = top.when;
  ++executed_;
  callback();
  return true;
}

bool EventQueue::run_until(Tick limit) {
  while (!heap_.empty() && heap_.front().when <= limit) step();
  return !heap_.empty();
}

}  // namespace fusim
