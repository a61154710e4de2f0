#include "exec/memory_tap.h"

#include "core/error.h"

namespace fusim::exec {

MemoryTap::MemoryTap(EventQueue& queue, mem::MemoryPort& memory, int requesters, Tick bucket)
    : queue_(queue),
      memory_(memory),
      per_requester_(static_cast<std::size_t>(requesters), 0),
      bucket_(bucket) {
  FUSIM_ASSERT(bucket >= 0, "timeline bucket must not be negative");
}

void MemoryTap::count_only(int requester, std::int64_t bytes) {
  total_ += bytes;
  if (requester >= 0 && static_cast<std::size_t>(requester) < per_requester_.size())
    per_requester_[static_cast<std::size_t>(requester)] += bytes;
  if (bucket_ == 0) return;
  auto b = static_cast<std::size_t>(queue_.now() / bucket_);
  if (b >= per_bucket_.size()) per_bucket_.resize(b + 1, 0);
  per_bucket_[b] += bytes;
}

void MemoryTap::send(const mem::MemRequest& r) {
  count_only(r.requester, r.bytes);
  memory_.send(r);
}

std::int64_t MemoryTap::bytes_of(int requester) const {
  if (requester < 0 || static_cast<std::size_t>(requester) >= per_requester_.size()) return 0;
  return per_requester_[static_cast<std::size_t>(requester)];
}

}  // namespace fusim::exec
