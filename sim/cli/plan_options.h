#pragma once
// The parallel-plan options (sim/parallel/plan.h), defined once for every command that
// takes a plan: `fusim memory` now, `simulate`, `sweep` and `schedule` with issue 19.
#include <CLI/CLI.hpp>
#include <string>

#include "parallel/plan.h"

namespace fusim::cli {

// --tp --pp --dp --cp --microbatch --global-batch --pipeline-schedule --virtual-stages
// --recompute --sequence-parallel --distributed-optimizer (issue 19 adds --bucket-size and
// --stage-layers on the commands that simulate communication).
void add_plan_options(CLI::App* command, parallel::PlanArgs& args);

// The options of the commands that place communication on a cluster (issue 19):
// --bucket-size BYTES, --stage-layers N,N,..., --cluster PRESET.
void add_cluster_options(CLI::App* command, parallel::PlanArgs& args, std::string& cluster);

// Whether the command line asked for a parallel plan (any plan or cluster option given).
bool plan_requested(const CLI::App& command);

}  // namespace fusim::cli
