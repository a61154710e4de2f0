// The backend's memory guards (backend/memory_guard.h; issue 21, point 3): the need of a run
// from its schedules, and libtorch's out-of-memory errors turned into one input-error line.
#include <c10/util/Exception.h>
#include <torch/torch.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "backend/memory_guard.h"
#include "core/error.h"
#include "workload/trace_io.h"

using namespace fusim;

namespace {

// One 1024 x 1024 linear without bias, batch 1: 4 MiB of weights, 8 MiB of Adam state
// (exp_avg, exp_avg_sq), a 4 MiB gradient, foreach Adam's two 4 MiB temporaries (torch
// 1.13's _multi_tensor_adam: exp_avg_sq_sqrt = _foreach_sqrt(v), then denom =
// _foreach_add(exp_avg_sq_sqrt, eps), both alive at the addcdiv) and 4 KiB activations.
workload::Trace square_linear() {
  return workload::parse_trace(nlohmann::json::parse(R"({
    "format": "fusim-trace", "version": 1, "model": "square", "batch": 1, "dtype": "float32",
    "source": "test",
    "inputs": [{"name": "input", "shape": [1, 1024]},
               {"name": "target", "shape": [1], "dtype": "int64"}],
    "layers": [
      {"id": 0, "name": "fc", "op": "linear", "attrs": {"bias": false}, "inputs": ["input"],
       "output": [1, 1024], "params": [{"name": "fc.weight", "shape": [1024, 1024]}]},
      {"id": 1, "name": "loss", "op": "cross_entropy", "attrs": {}, "inputs": [0, "target"],
       "output": []}]})"),
                               "square.json");
}

std::vector<schedule::Schedule> eager_and_backward_fused(const workload::Trace& trace) {
  std::vector<schedule::Schedule> out;
  for (auto ordering : {schedule::Ordering::Eager, schedule::Ordering::BackwardFused}) {
    schedule::ScheduleOptions so;
    so.ordering = ordering;
    so.optimizer = "adam";
    so.steps = 2;
    out.push_back(schedule::build_schedule(trace, so));
  }
  return out;
}

constexpr std::int64_t kMiB = 1 << 20;

}  // namespace

TEST_CASE("the need of a run: every ordering's weights and state, one step's gradients") {
  const auto schedules = eager_and_backward_fused(square_linear());
  const std::int64_t need = backend::run_memory_need(schedules);
  // 2 x (4 MiB weights + 8 MiB Adam state) + one step's 4 MiB gradient and 2 x 4 MiB
  // temporaries = 36 MiB, plus the activations and loss of one step (a few KiB at batch 1).
  CHECK(need >= 36 * kMiB);
  CHECK(need < 36 * kMiB + 64 * 1024);
  // One schedule alone: 12 + 12 MiB.
  const std::int64_t one = backend::run_memory_need({schedules[0]});
  CHECK(one >= 24 * kMiB);
  CHECK(one < 24 * kMiB + 64 * 1024);
}

TEST_CASE("an allocation libtorch refuses ends in one line naming the need, not a terminate") {
  const auto schedules = eager_and_backward_fused(square_linear());
  // 2^50 floats (4 PiB): more than any address space, refused by the CPU allocator itself
  // (DefaultCPUAllocator's c10::Error, or std::bad_alloc where the backend's counting
  // allocator is installed).
  const auto refused = [] { (void)torch::empty({std::int64_t(1) << 50}, torch::kFloat32); };
  try {
    backend::guard_out_of_memory(schedules, "cpu", refused);
    FAIL("the 4 PiB tensor was allocated");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.find('\n') == std::string::npos);
    CHECK_THAT(what, Catch::Contains("--trace: expected a model whose training step fits this "
                                     "host's available memory, but it ran out of memory on "
                                     "--device cpu (the 2 schedule(s) run need 36.0 MiB at "
                                     "least): "));
  }
}

TEST_CASE("CUDA's out-of-memory error (c10::OutOfMemoryError) becomes the same line") {
  const auto schedules = eager_and_backward_fused(square_linear());
  // As the CUDA caching allocator raises it (c10/cuda/CUDACachingAllocator.cpp).
  const auto cuda_oom = [] {
    TORCH_CHECK_WITH(OutOfMemoryError, false, "CUDA out of memory. Tried to allocate 2.00 GiB");
  };
  CHECK_THROWS_MATCHES(
      backend::guard_out_of_memory(schedules, "cuda", cuda_oom), InputError,
      Catch::Message("--trace: expected a model whose training step fits CUDA device 0's free "
                     "memory, but it ran out of memory on --device cuda (the 2 schedule(s) run "
                     "need 36.0 MiB at least): CUDA out of memory. Tried to allocate 2.00 GiB"));
  // Other libtorch errors are not renamed.
  const auto shape_error = [] { TORCH_CHECK(false, "mat1 and mat2 shapes cannot be multiplied"); };
  CHECK_THROWS_AS(backend::guard_out_of_memory(schedules, "cpu", shape_error), c10::Error);
}
