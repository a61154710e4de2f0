// The controller's request queue: slots stay put while entries come and go, the age-order
// walk and each bank's walk see exactly the queued entries oldest first, and freed slots
// are reused (so a queue never grows past its peak occupancy).
#include <catch2/catch.hpp>
#include <vector>

#include "mem/dram/request_queue.h"

using namespace fusim::dram;

namespace {

QueueEntry entry(std::uint64_t seq, int bank) {
  QueueEntry e;
  e.seq = seq;
  e.flat_bank = static_cast<std::uint16_t>(bank);
  e.row = static_cast<std::int64_t>(100 + seq);
  return e;
}

std::vector<std::uint64_t> ages(const RequestQueue& q) {
  std::vector<std::uint64_t> out;
  for (int s = q.first(); s != RequestQueue::kEnd; s = q.next(s)) out.push_back(q[s].seq);
  return out;
}

std::vector<std::uint64_t> bank_ages(const RequestQueue& q, int bank) {
  std::vector<std::uint64_t> out;
  for (int s = q.bank_first(bank); s != RequestQueue::kEnd; s = q.bank_next(s))
    out.push_back(q[s].seq);
  return out;
}

}  // namespace

TEST_CASE("request queue: slots, age order and per-bank order through erases") {
  RequestQueue q(4, 3);
  CHECK(q.empty());
  CHECK(q.first() == RequestQueue::kEnd);
  CHECK(q.bank_first(0) == RequestQueue::kEnd);
  // seq 0..4 to banks 0, 1, 0, 2, 0
  const int s0 = q.push_back(entry(0, 0));
  const int s1 = q.push_back(entry(1, 1));
  const int s2 = q.push_back(entry(2, 0));
  const int s3 = q.push_back(entry(3, 2));
  const int s4 = q.push_back(entry(4, 0));
  CHECK(s0 == 0);
  CHECK(s1 == 1);
  CHECK(s2 == 2);
  CHECK(s3 == 3);
  CHECK(s4 == 4);  // a block may overfill the queue: the pool grows
  CHECK(q.size() == 5);
  CHECK(q.front().seq == 0);
  CHECK(ages(q) == std::vector<std::uint64_t>{0, 1, 2, 3, 4});
  CHECK(bank_ages(q, 0) == std::vector<std::uint64_t>{0, 2, 4});
  CHECK(bank_ages(q, 1) == std::vector<std::uint64_t>{1});
  CHECK(bank_ages(q, 2) == std::vector<std::uint64_t>{3});

  // Out of the middle of both lists: the others keep their slots.
  q.erase(s2);
  CHECK(q.size() == 4);
  CHECK(ages(q) == std::vector<std::uint64_t>{0, 1, 3, 4});
  CHECK(bank_ages(q, 0) == std::vector<std::uint64_t>{0, 4});
  CHECK(q[s4].seq == 4);
  CHECK(q[s4].row == 104);

  // The oldest, and the only one of bank 1.
  q.erase(s0);
  q.erase(s1);
  CHECK(q.front().seq == 3);
  CHECK(ages(q) == std::vector<std::uint64_t>{3, 4});
  CHECK(bank_ages(q, 0) == std::vector<std::uint64_t>{4});
  CHECK(q.bank_first(1) == RequestQueue::kEnd);

  // Freed slots are reused, most recently freed first, and join the tails.
  const int s5 = q.push_back(entry(5, 1));
  const int s6 = q.push_back(entry(6, 0));
  CHECK(s5 == s1);
  CHECK(s6 == s0);
  CHECK(ages(q) == std::vector<std::uint64_t>{3, 4, 5, 6});
  CHECK(bank_ages(q, 0) == std::vector<std::uint64_t>{4, 6});
  CHECK(bank_ages(q, 1) == std::vector<std::uint64_t>{5});

  // The youngest, then everything.
  q.erase(s6);
  CHECK(bank_ages(q, 0) == std::vector<std::uint64_t>{4});
  q.erase(s3);
  q.erase(s4);
  q.erase(s5);
  CHECK(q.empty());
  CHECK(q.first() == RequestQueue::kEnd);
  for (int b = 0; b < 3; ++b) CHECK(q.bank_first(b) == RequestQueue::kEnd);
}
