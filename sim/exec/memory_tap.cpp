#include "exec/memory_tap.h"

#include "core/error.h"

namespace fusim::exec {

MemoryTap::MemoryTap(EventQueue& queue, mem::MemoryPort& memory, int requesters, Tick bucket)
    : queue_(queue),
      memory_(memory),
      per_requester_(static_cast<std::size_t>(requesters), 0),
      bucket_(bucket) {
  FUSIM_ASSERT(bucket > 0, "timeline bucket must be positive");
}

void MemoryTap::send(const mem::MemRequest& r) {
  total_ += r.bytes;
  if (r.requester >= 0 && static_cast<std::size_t>(r.requester) < per_requester_.size())
    per_requester_[static_cast<std::size_t>(r.requester)] += r.bytes;
  auto b = static_cast<std::size_t>(queue_.now() / bucket_);
  if (b >= per_bucket_.size()) per_bucket_.resize(b + 1, 0);
  per_bucket_[b] += r.bytes;
  memory_.send(r);
}

std::int64_t MemoryTap::bytes_of(int requester) const {
  if (requester < 0 || static_cast<std::size_t>(requester) >= per_requester_.size()) return 0;
  return per_requester_[static_cast<std::size_t>(requester)];
}

}  // namespace fusim::exec
