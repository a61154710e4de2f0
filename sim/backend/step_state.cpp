#include "backend/step_state.h"

#include "backend/graph_state.h"
#include "backend/training_state.h"
#include "core/error.h"

namespace fusim::backend {

void StorageTally::add(const at::Tensor& t) {
  if (!t.defined() || !t.has_storage()) return;
  const c10::Storage& s = t.storage();
  if (seen_.insert(s.unsafeGetStorageImpl()).second)
    bytes_ += static_cast<std::int64_t>(s.nbytes());
}

void StorageTally::add(const std::vector<at::Tensor>& ts) {
  for (const auto& t : ts) add(t);
}

std::unique_ptr<StepState> make_step_state(const workload::Trace& trace,
                                           const schedule::Schedule& schedule,
                                           const OptimizerConfig& optimizer, at::Device device,
                                           std::uint64_t seed) {
  if (schedule.execution == schedule::Execution::Layers)
    return std::make_unique<TrainingState>(trace, schedule, optimizer, device, seed);
  if (!device.is_cpu())
    throw InputError(
        "--execution graph: CPU only (on CUDA, hooks would time the host's launches of "
        "asynchronous kernels, not the kernels); use --execution layers on a GPU");
  return std::make_unique<GraphState>(trace, schedule, optimizer, device, seed);
}

}  // namespace fusim::backend
