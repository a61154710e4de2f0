#pragma once
// What makes two schedule ops the same op for a measurement (`fusim profile`): the same
// kind (F, Bx, Bw, U, L) of the same layer op with the same attrs, input, output and
// parameter shapes, dtypes and requires_grad flags, and the same work as the schedule
// describes it (kernels, and per pass the bytes and access modes of its tensors and its
// FLOPs); updates also by optimizer and implementation. The 32 ResNet blocks of one shape
// are then one measurement; any change in what an op does makes a new one.
#include <cstdint>
#include <string>

#include "schedule/schedule.h"
#include "workload/trace.h"

namespace fusim::compute {

struct OpSignature {
  std::string key;          // 16 hex digits, stable across runs and machines (FNV-1a 64)
  std::string description;  // "conv2d F [8,64,16,16] -> [8,64,16,16]" for people
};

OpSignature op_signature(const workload::Trace& trace, const schedule::Schedule& schedule,
                         const schedule::Op& op);

}  // namespace fusim::compute
