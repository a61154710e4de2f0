#pragma once
// Timelines of RunResults, simulated or measured, in the Chrome trace event format (the
// JSON that chrome://tracing and ui.perfetto.dev open). Both executors' runs of the same
// schedule give the same tracks, names, units and op slices, so that a prediction and a
// measurement can be opened side by side or written into one file:
//  - one process per run (pid), named by the caller;
//  - one thread track per schedule stream, "stream 0", "stream 1" (tid = stream);
//  - one complete ("X") slice per op that launches a kernel (views are left out), named
//    "<kind> <layer>" ("F fc1", "U model"), category the kind, args {op, step, stream,
//    units, kernels, flops, dram_bytes} (null where the executor does not know);
//  - simulated runs add a "DRAM bandwidth" counter ("C") track in GB/s.
// ts and dur in microseconds on the executor's clock (simulated: from the start of the
// simulation; measured: from the start of the run, warm-up included); displayTimeUnit "ns".
// Format: "Trace Event Format" (Google, docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQ
// tSYZ2xHSqsWA2R8hdO0Y), fields name/ph/ts/dur/pid/tid/args.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "exec/run_result.h"
#include "schedule/schedule.h"
#include "workload/trace.h"

namespace fusim::exec {

struct TimelineRun {
  std::string name;                              // the process name
  const RunResult* result = nullptr;             // per_op in schedule order or a subset
  const schedule::Schedule* schedule = nullptr;  // the schedule it ran
  const DramSeries* dram = nullptr;              // simulated runs; null for measured ones
};

// Appends one run's events under process id `pid`. At most `max_counter_points` DRAM
// samples are written (buckets merged to fit).
void append_timeline(nlohmann::json& events, int pid, const workload::Trace& trace,
                     const TimelineRun& run, std::size_t max_counter_points = 4000);

// {"traceEvents": events, "displayTimeUnit": "ns", "otherData": {generator, machine, trace}}
nlohmann::json timeline_document(nlohmann::json events, const std::string& generator,
                                 const std::string& machine, const std::string& trace_file);

// The name of run `r`'s process: "eager (adam, foreach) sim", "eager (adam, foreach) cpu".
std::string timeline_process_name(const RunResult& r);

}  // namespace fusim::exec
