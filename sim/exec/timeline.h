#pragma once
// Chrome trace event format (the JSON that chrome://tracing and ui.perfetto.dev open):
// one process per simulated ordering, one thread track per core group / GPU stream with the
// ops as complete ("X") slices, and a "DRAM bandwidth" counter ("C") track in GB/s.
// Format: "Trace Event Format" (Google, docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQ
// tSYZ2xHSqsWA2R8hdO0Y), fields name/ph/ts/dur/pid/tid/args; ts and dur in microseconds.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "exec/simulate.h"
#include "schedule/schedule.h"
#include "workload/trace.h"

namespace fusim::exec {

// Appends one simulated run's events to `events` (a JSON array) under process id `pid`.
// At most `max_counter_points` DRAM samples are written (buckets merged to fit).
void append_timeline(nlohmann::json& events, int pid, const std::string& process_name,
                     const workload::Trace& trace, const schedule::Schedule& schedule,
                     const SimulationDetail& detail, std::size_t max_counter_points = 4000);

// {"traceEvents": events, "displayTimeUnit": "ns", "otherData": {...}}
nlohmann::json timeline_document(nlohmann::json events, const std::string& machine,
                                 const std::string& trace_file);

}  // namespace fusim::exec
