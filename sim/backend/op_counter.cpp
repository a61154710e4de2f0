#include "backend/op_counter.h"

#include <ATen/record_function.h>

#include "core/error.h"

namespace fusim::backend {
namespace {
thread_local OpCounter* active = nullptr;  // the callbacks' way to their counter

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  if (!active) return nullptr;
  OpCall call;
  call.name = fn.name();
  for (const auto& v : fn.inputs())
    if (v.isTensor()) {
      call.numel = v.toTensor().numel();
      break;
    }
  call.in_place = !call.name.empty() && call.name.back() == '_';
  active->enter(std::move(call));
  return nullptr;
}

void on_leave(const at::RecordFunction& fn, at::ObserverContext*) {
  if (!active) return;
  std::int64_t out = 0;
  for (const auto& v : fn.outputs())
    if (v.isTensor()) {
      out = v.toTensor().numel();
      break;
    }
  active->leave(out);
}

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}
// An allocation without a kernel (at::empty and friends): a temporary, never a kernel.
bool is_allocation(const std::string& name) {
  return starts_with(name, "aten::empty");
}
}  // namespace

OpCounter::OpCounter() : previous_(active) {
  FUSIM_ASSERT(previous_ == nullptr, "one OpCounter at a time per thread");
  active = this;
  handle_ = at::addThreadLocalCallback(at::RecordFunctionCallback(&on_enter, &on_leave)
                                           .needsInputs(true)
                                           .needsOutputs(true)
                                           .scopes({at::RecordScope::FUNCTION}));
}

OpCounter::~OpCounter() {
  at::removeCallback(handle_);
  active = previous_;
}

void OpCounter::enter(OpCall call) {
  call.depth = int(open_.size());
  open_.push_back(calls_.size());
  calls_.push_back(std::move(call));
}

void OpCounter::leave(std::int64_t out_numel) {
  FUSIM_ASSERT(!open_.empty(), "an op left that was not entered");
  calls_[open_.back()].out_numel = out_numel;
  open_.pop_back();
}

UpdateCount count_update(const std::vector<OpCall>& calls, std::int64_t min_numel) {
  UpdateCount c;
  bool in_foreach = false;  // the last depth-0 call was a _foreach_ op
  for (const auto& call : calls) {
    bool kernel = false;
    if (call.depth == 0 && is_allocation(call.name)) {
      if (call.out_numel >= min_numel) ++c.temporaries;
      continue;
    }
    if (call.depth == 0) {
      in_foreach = starts_with(call.name, "aten::_foreach_");
      if (in_foreach)
        ++c.foreach_calls;
      else
        kernel = true;
    } else if (call.depth == 1 && in_foreach) {
      kernel = true;
    }
    if (!kernel) continue;
    ++c.kernels;
    if (call.numel >= min_numel) ++c.passes;
    if (!call.in_place && call.out_numel >= min_numel) ++c.temporaries;
  }
  return c;
}

}  // namespace fusim::backend
