#pragma once
// --trace (trace show's FILE) wherever a layer trace is read: schedule, simulate, run,
// validate, profile, trace show, as sweep's grid already did: a trace JSON file, or the name
// of a zoo network (models/networks), generated in memory as `fusim trace gen NAME --batch B`
// writes it (B: the command's --batch, default 32; its other sizes the network's defaults).
// One rule everywhere: an existing file is read; a zoo name is generated; anything else is
// refused naming --trace, with a did-you-mean. --batch on a trace file changes nothing and
// says so (one warning line).
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "workload/trace.h"

namespace fusim::cli {

inline constexpr const char* kTraceOptionHelp =
    "Layer trace: a trace JSON file (traces/SCHEMA.md) or a zoo network (mlp, resnet18, "
    "resnet50, vgg16, mobilenet_v2, bert-base, gpt2-small, ...: generated as `fusim trace gen "
    "NAME --batch B` writes it, B from --batch)";

// The batch of a zoo network named by --trace.
struct ZooBatch {
  std::int64_t value = 32;  // `fusim trace gen`'s default
  bool given = false;
};

// Adds --batch (the shared option: cli/shared_options.cpp) to `cmd`.
void add_batch_option(CLI::App* cmd, ZooBatch& batch);

workload::Trace load_trace_option(const std::string& file_or_network, const ZooBatch& batch = {});

}  // namespace fusim::cli
