#include "backend/device_timer.h"

#include <torch/cuda.h>

#include "core/error.h"
#ifdef FUSIM_TORCH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <optional>
#include <unordered_map>
#endif

namespace fusim::backend {
namespace {
Tick since(std::chrono::steady_clock::time_point from) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                              from)
             .count() *
         kTicksPerNs;
}
}  // namespace

Tick DeviceTimer::ticks_at(std::chrono::steady_clock::time_point t) const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t - origin_).count() * kTicksPerNs;
}

#ifdef FUSIM_TORCH_CUDA
struct DeviceTimer::Cuda {
  c10::cuda::CUDAStream main = c10::cuda::getCurrentCUDAStream();
  c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
  std::optional<c10::cuda::CUDAStreamGuard> guard;
  at::cuda::CUDAEvent start{cudaEventDefault};
  std::vector<std::pair<at::cuda::CUDAEvent, at::cuda::CUDAEvent>> ops;
  std::unordered_map<int, at::cuda::CUDAEvent> side_done;  // op id -> its end on the side
};
#else
struct DeviceTimer::Cuda {};
#endif

DeviceTimer::DeviceTimer(bool cuda) : origin_(std::chrono::steady_clock::now()) {
#ifdef FUSIM_TORCH_CUDA
  if (cuda) cuda_ = std::make_unique<Cuda>();
#else
  FUSIM_ASSERT(!cuda, "CUDA timing needs a CUDA libtorch (check_device rejects this first)");
#endif
}

DeviceTimer::~DeviceTimer() = default;

void DeviceTimer::begin_iteration() {
  current_ = IterationTimes{};
#ifdef FUSIM_TORCH_CUDA
  if (cuda_) {
    torch::cuda::synchronize();
    cuda_->ops.clear();
    cuda_->side_done.clear();
    cuda_->start.record(cuda_->main);
  }
#endif
  iteration_start_ = std::chrono::steady_clock::now();
}

void DeviceTimer::begin_op(const schedule::Op& op) {
#ifdef FUSIM_TORCH_CUDA
  if (cuda_) {
    auto& c = *cuda_;
    auto& stream = op.stream == 1 ? c.side : c.main;
    if (op.stream == 1) {
      // Everything issued on main so far (the op's B and its grads) precedes the update.
      at::cuda::CUDAEvent issued;
      issued.record(c.main);
      issued.block(c.side);
    } else {
      for (int dep : op.deps) {  // e.g. F_i of step t+1 reads w_i written by U_i on the side
        auto it = c.side_done.find(dep);
        if (it != c.side_done.end()) it->second.block(c.main);
      }
    }
    c.guard.emplace(stream);
    c.ops.emplace_back(at::cuda::CUDAEvent(cudaEventDefault),
                       at::cuda::CUDAEvent(cudaEventDefault));
    c.ops.back().first.record(stream);
    return;
  }
#endif
  (void)op;
  current_.ops.emplace_back(since(origin_), 0);
}

void DeviceTimer::end_op(const schedule::Op& op) {
#ifdef FUSIM_TORCH_CUDA
  if (cuda_) {
    auto& c = *cuda_;
    auto& stream = op.stream == 1 ? c.side : c.main;
    c.ops.back().second.record(stream);
    if (op.stream == 1) {
      at::cuda::CUDAEvent done;
      done.record(stream);
      c.side_done.emplace(op.id, std::move(done));
    }
    c.guard.reset();
    return;
  }
#endif
  (void)op;
  current_.ops.back().second = since(origin_);
}

IterationTimes DeviceTimer::end_iteration() {
#ifdef FUSIM_TORCH_CUDA
  if (cuda_) {
    torch::cuda::synchronize();
    const Tick base =
        std::chrono::duration_cast<std::chrono::nanoseconds>(iteration_start_ - origin_).count() *
        kTicksPerNs;
    for (auto& [s, e] : cuda_->ops) {
      // elapsed_time: milliseconds between two completed events (cudaEventElapsedTime).
      current_.ops.emplace_back(base + us(1000.0 * cuda_->start.elapsed_time(s)),
                                base + us(1000.0 * cuda_->start.elapsed_time(e)));
    }
  }
#endif
  current_.iteration = since(iteration_start_);
  return std::move(current_);
}

}  // namespace fusim::backend
