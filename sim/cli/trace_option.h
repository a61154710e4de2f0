#pragma once
// --trace (trace show's FILE) wherever a layer trace is read: schedule, simulate, run,
// validate, profile, trace show, as sweep's grid already did: a trace JSON file, or the name
// of a zoo network (models/networks), generated in memory as `fusim trace gen NAME` writes it
// (batch 32, its default sizes). One rule everywhere: an existing file is read; a zoo name
// is generated; anything else is refused naming --trace, with a did-you-mean.
#include <string>

#include "workload/trace.h"

namespace fusim::cli {

inline constexpr const char* kTraceOptionHelp =
    "Layer trace: a trace JSON file (traces/SCHEMA.md) or a zoo network (mlp, resnet18, "
    "resnet50, vgg16, mobilenet_v2, bert-base, gpt2-small, ...: generated as `fusim trace gen "
    "NAME` writes it, batch 32)";

workload::Trace load_trace_option(const std::string& file_or_network);

}  // namespace fusim::cli
