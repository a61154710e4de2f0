#include "compute/units.h"

#include <fmt/format.h>
#include <algorithm>

#include "core/error.h"

namespace fusim::compute {

ComputeUnits::ComputeUnits(const ComputeConfig& config, const schedule::Schedule& schedule)
    : config_(config), gpu_(config.kind == UnitKind::Gpu) {
  const auto& ops = schedule.ops;
  const int groups = gpu_ ? 0 : std::max(1, config.units / config.threads_per_op);
  int max_stream = 0;
  for (const auto& op : ops) max_stream = std::max(max_stream, op.stream);
  const int lanes = gpu_ ? max_stream + 1 : std::min(groups, max_stream + 1);
  lanes_.resize(static_cast<std::size_t>(lanes));
  head_.assign(lanes_.size(), 0);
  running_.assign(lanes_.size(), -1);
  lane_of_.resize(ops.size());
  earliest_start_.assign(ops.size(), 0);
  earliest_end_.assign(ops.size(), 0);
  Tick host = 0;  // GPU: the launching host thread, in issue order
  const Tick d = config.dispatch_overhead, L = config.launch_latency;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& op = ops[i];
    const int lane = gpu_ ? op.stream : op.stream % lanes;
    lane_of_[i] = lane;
    lanes_[static_cast<std::size_t>(lane)].push_back(static_cast<int>(i));
    if (gpu_ && op.kernels > 0) {
      earliest_start_[i] = host + d + L;
      host += op.kernels * d;
      earliest_end_[i] = host + L;
    }
  }
  if (gpu_) {
    sm_free_.assign(static_cast<std::size_t>(config.units), true);
    free_sms_ = config.units;
  }
}

int ComputeUnits::next(int lane) const {
  const auto l = static_cast<std::size_t>(lane);
  if (running_[l] >= 0 || head_[l] >= lanes_[l].size()) return -1;
  return lanes_[l][head_[l]];
}

bool ComputeUnits::can_place(const schedule::Op& op) const {
  if (!gpu_ || op.kernels == 0) return true;
  return free_sms_ > 0 && running_kernels_ < config_.max_concurrent_kernels;
}

void ComputeUnits::start(const schedule::Op& op) {
  const auto l = static_cast<std::size_t>(lane_of(op.id));
  FUSIM_ASSERT(next(static_cast<int>(l)) == op.id, "ops start in their lane's issue order");
  running_[l] = op.id;
  ++head_[l];
}

std::vector<int> ComputeUnits::take_units(const schedule::Op& op, std::int64_t grid_blocks,
                                          bool contended) {
  std::vector<int> units;
  if (gpu_) {
    // The block scheduler shares SMs with kernels of other streams that are ready now.
    std::int64_t want = std::min<std::int64_t>(grid_blocks, free_sms_);
    if (contended) want = std::max<std::int64_t>(1, (want + 1) / 2);
    for (std::size_t sm = 0; sm < sm_free_.size() && want > 0; ++sm) {
      if (!sm_free_[sm]) continue;
      sm_free_[sm] = false;
      units.push_back(static_cast<int>(sm));
      --want;
      --free_sms_;
    }
    ++running_kernels_;
  } else {
    const int first = lane_of(op.id) * config_.threads_per_op;
    for (int c = 0; c < config_.threads_per_op; ++c) units.push_back(first + c);
  }
  return units;
}

void ComputeUnits::finish(const schedule::Op& op, const std::vector<int>& units) {
  if (gpu_ && !units.empty()) {
    for (int sm : units) sm_free_[static_cast<std::size_t>(sm)] = true;
    free_sms_ += static_cast<int>(units.size());
    --running_kernels_;
  }
  running_[static_cast<std::size_t>(lane_of(op.id))] = -1;
}

Tick ComputeUnits::dispatch_time(const schedule::Op& op) const {
  return gpu_ ? 0 : op.kernels * config_.dispatch_overhead;
}

int ComputeUnits::working_units(int held, int max_threads) const {
  return gpu_ || max_threads <= 0 ? held : std::min(held, max_threads);
}

Tick ComputeUnits::compute_time(OpClass op_class, workload::DType dtype, int units,
                                std::int64_t flops) const {
  if (flops <= 0) return 0;
  const double rate = config_.flops_per_second(op_class, dtype, units);
  FUSIM_ASSERT(rate > 0, "a positive FLOP rate");
  return static_cast<Tick>(static_cast<double>(flops) / rate * 1e12 + 0.5);
}

bool ComputeUnits::busy() const {
  for (std::size_t l = 0; l < lanes_.size(); ++l)
    if (running_[l] >= 0 || head_[l] < lanes_[l].size()) return true;
  return false;
}

std::string ComputeUnits::describe() const {
  std::string text;
  for (std::size_t l = 0; l < lanes_.size(); ++l) {
    const std::string what =
        gpu_ ? fmt::format("stream {}", l)
             : fmt::format("cores {}-{}", l * static_cast<std::size_t>(config_.threads_per_op),
                           (l + 1) * static_cast<std::size_t>(config_.threads_per_op) - 1);
    text += fmt::format("lane {} ({}): {}, {} of {} ops started\n", l, what,
                        running_[l] >= 0 ? fmt::format("running op {}", running_[l]) : "idle",
                        head_[l], lanes_[l].size());
  }
  if (gpu_)
    text += fmt::format("SMs free {} of {}, kernels running {} (at most {})\n", free_sms_,
                        sm_free_.size(), running_kernels_, config_.max_concurrent_kernels);
  return text;
}

}  // namespace fusim::compute
