#pragma once
// Chooses which queued request the controller serves next. The controller hands over, in
// age order, every request of the active queue (reads, or writes while draining) with the
// cycle its next command could issue; the scheduler returns one (requests of the other
// queue whose rows were activated for them are served by the controller itself, and the
// precharges that would close those rows are not handed over). It never changes the
// queue or bank state; it may keep its own measurements (stream-aware and cads do).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "mem/dram/dram_spec.h"

namespace fusim::dram {

struct DramStats;

struct Candidate {
  Cycle ready = 0;    // earliest cycle its next command can issue
  Cycle arrival = 0;  // cycle the request entered the queue
  int requester = 0;
  bool row_hit = false;  // its next command is a column access to the open row
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  // How pick() chooses, so that the controller may hand over fewer candidates when the
  // choice provably stays the same: Oldest = always c[0] (FCFS); FirstReady = the oldest
  // of the earliest-ready, row hits first (pick_first_ready with prefer_hits). Generic
  // schedulers see every queued request.
  enum class Order { Generic, Oldest, FirstReady };
  virtual Order order() const { return Order::Generic; }
  // `c[0..n)` in age order (oldest first), n >= 1. Returns an index into c.
  virtual std::size_t pick(const Candidate* c, std::size_t n) = 0;
  // Row hits a bank may serve after its activate while an older request waits for another
  // row; 0 = unlimited. The controller stops treating further hits as hits. A Generic
  // scheduler may change it between decisions (cads does, per epoch).
  virtual int row_hit_cap() const { return 0; }
  // Told about every column command (the request's arrival, the command's cycle), for
  // schedulers that measure their requesters.
  virtual void on_column(int /*requester*/, bool /*row_hit*/, Cycle /*arrival*/, Cycle /*now*/) {}
  // Told about every request entering the queue, with its arrival cycle: with on_column
  // (the request leaves the queue at its column command) a scheduler can count each
  // requester's queued requests over time, including those pick() is not handed.
  virtual void on_arrival(int /*requester*/, Cycle /*arrival*/) {}
  // Where a scheduler that learns reports its choices (the controller's statistics).
  virtual void set_stats(DramStats* /*stats*/) {}
};

// Index of the oldest candidate ready at the earliest ready cycle (first-ready), and that
// cycle; `prefer_hits` puts row hits among them first (FR-FCFS).
std::size_t pick_first_ready(const Candidate* c, std::size_t n, bool prefer_hits);

// "fcfs" | "frfcfs" | "frfcfs-cap" | "stream-aware" | "cads"; unknown names throw InputError
// naming `file` and the JSON path "scheduler".
std::unique_ptr<Scheduler> make_scheduler(const ControllerConfig& cfg, const std::string& file);

// The policies cads chooses among, in the order of DramStats::policy_epochs.
inline constexpr const char* kCadsPolicies[] = {"fcfs", "frfcfs", "frfcfs-cap", "stream-aware"};
inline constexpr std::size_t kCadsPolicyCount = sizeof(kCadsPolicies) / sizeof(kCadsPolicies[0]);

// One constructor per file.
std::unique_ptr<Scheduler> make_fcfs_scheduler(const ControllerConfig& cfg);
std::unique_ptr<Scheduler> make_frfcfs_scheduler(const ControllerConfig& cfg);
std::unique_ptr<Scheduler> make_frfcfs_cap_scheduler(const ControllerConfig& cfg);
std::unique_ptr<Scheduler> make_stream_aware_scheduler(const ControllerConfig& cfg);
std::unique_ptr<Scheduler> make_cads_scheduler(const ControllerConfig& cfg);

}  // namespace fusim::dram
