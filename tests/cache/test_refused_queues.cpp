// RefusedQueues: a refused head holds up only its own queue; within a queue requests leave
// in arrival order, and a request never overtakes others waiting in its queue.
#include <catch2/catch.hpp>

#include <set>
#include <vector>

#include "mem/refused_queues.h"

using fusim::mem::MemRequest;
using fusim::mem::RefusedQueues;

namespace {
// Accepts any request whose address is not in `full` (a channel that is full).
struct FakePort : fusim::mem::MemoryPort {
  std::set<fusim::mem::Addr> full;
  bool will_accept(const MemRequest& r) const override { return full.count(r.addr) == 0; }
  void send(const MemRequest&) override {}
  void set_completion(Completion) override {}
  void set_retry(std::function<void()>) override {}
  void request_retry() override {}
};
MemRequest req(fusim::mem::Addr addr, std::uint64_t id) {
  MemRequest r;
  r.addr = addr;
  r.id = id;
  return r;
}
}  // namespace

TEST_CASE("a refused head holds up only its own queue, the others drain in order") {
  RefusedQueues q;
  q.reset(3);
  q.push(2, req(200, 1));
  q.push(0, req(100, 2));  // head of queue 0: refused below
  q.push(0, req(101, 3));  // would be accepted, but waits behind it
  q.push(2, req(201, 4));
  q.push(1, req(300, 5));
  CHECK(q.size() == 5);
  FakePort port;
  port.full = {100};
  std::vector<std::uint64_t> sent;
  q.drain(port, [&](const MemRequest& r) { sent.push_back(r.id); });
  // Queues in the order they began to wait (2, 0, 1); queue 0 sends nothing.
  CHECK(sent == std::vector<std::uint64_t>{1, 4, 5});
  CHECK(q.size() == 2);
  CHECK_FALSE(q.empty(0));
  CHECK(q.empty(1));
  CHECK(q.empty(2));
  port.full.clear();
  q.drain(port, [&](const MemRequest& r) { sent.push_back(r.id); });
  CHECK(sent == std::vector<std::uint64_t>{1, 4, 5, 2, 3});
  CHECK(q.size() == 0);
}

TEST_CASE("a queue emptied and refilled waits behind the queues already waiting") {
  RefusedQueues q;
  q.reset(2);
  FakePort port;
  port.full = {10};
  q.push(0, req(10, 1));
  q.push(1, req(20, 2));
  std::vector<std::uint64_t> sent;
  q.drain(port, [&](const MemRequest& r) { sent.push_back(r.id); });
  CHECK(sent == std::vector<std::uint64_t>{2});
  q.push(1, req(21, 3));  // queue 1 begins to wait again, after queue 0
  port.full.clear();
  q.drain(port, [&](const MemRequest& r) { sent.push_back(r.id); });
  CHECK(sent == std::vector<std::uint64_t>{2, 1, 3});
}

namespace {
// Refuses requests at addresses in `full`, naming queue addr / 100 as the refusing one,
// counts how often it is asked, and keeps a freed-entry count per queue.
struct TrackingPort : FakePort {
  mutable int asked = 0;
  std::vector<std::uint64_t> freed = {0, 0, 0};
  int refused_by(const MemRequest& r) const override {
    ++asked;
    return full.count(r.addr) != 0 ? static_cast<int>(r.addr / 100) : -1;
  }
  std::uint64_t room_freed(int queue) const override { return freed[queue]; }
};
}  // namespace

TEST_CASE("a head refused by a port queue that freed nothing since is not asked about again") {
  RefusedQueues q;
  q.reset(2);
  TrackingPort port;
  port.full = {100, 200};
  q.push(0, req(100, 1));  // refused by port queue 1
  q.push(1, req(200, 2));  // refused by port queue 2
  std::vector<std::uint64_t> sent;
  const auto send = [&](const MemRequest& r) { sent.push_back(r.id); };
  q.drain(port, send);
  CHECK(port.asked == 2);
  q.drain(port, send);  // nothing freed: neither head is asked about
  CHECK(port.asked == 2);
  port.full.clear();
  q.drain(port, send);  // would fit now, but no count moved: the port promised otherwise
  CHECK(port.asked == 2);
  CHECK(sent.empty());
  port.freed[2] = 1;  // queue 2 freed an entry: only its head is asked, and leaves
  q.drain(port, send);
  CHECK(port.asked == 3);
  CHECK(sent == std::vector<std::uint64_t>{2});
  q.push(1, req(201, 3));  // a new head of an emptied queue is asked about at once
  q.drain(port, send);
  CHECK(port.asked == 4);
  CHECK(sent == std::vector<std::uint64_t>{2, 3});
  port.freed[1] = 5;
  q.drain(port, send);
  CHECK(sent == std::vector<std::uint64_t>{2, 3, 1});
  CHECK(q.size() == 0);
}
