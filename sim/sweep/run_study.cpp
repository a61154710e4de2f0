#include "sweep/run_study.h"

#include <exception>
#include <limits>
#include <memory>

#include "core/error.h"
#include "sweep/mpi_shard.h"
#include "sweep/result_file.h"

namespace fusim::sweep {
namespace {

// Rank 0's verdict on the earlier file, sent to every rank; "failed" makes them all stop.
constexpr std::size_t kResumeFailed = std::numeric_limits<std::size_t>::max();

struct OutputState {
  std::unique_ptr<ResultWriter> writer;
  std::size_t first_unit = 0;
};

OutputState open_output(const Study& study, const SweepOutput& output) {
  OutputState state;
  if (output.path.empty()) return state;
  RowFormat format(format_for_path(output.path), study.columns());
  ResumeState resume = output.resume ? scan_for_resume(output.path, format, study) : ResumeState{};
  state.writer = std::make_unique<ResultWriter>(output.path, format, resume);
  state.first_unit = resume.units_done;
  return state;
}

}  // namespace

SweepSummary run_study(const Study& study, const Evaluator& evaluator, const SweepOutput& output,
                       const RunOptions& opts,
                       const std::function<void(const UnitRows&)>& on_rows) {
  SweepSummary summary;
  auto sink_into = [&](OutputState& state) {
    return [&](std::size_t, const UnitRows& rows) {
      if (state.writer) state.writer->append(rows);
      if (on_rows) on_rows(rows);
    };
  };
  if (!launched_as_mpi_ranks()) {
    OutputState state = open_output(study, output);
    summary.units_resumed = state.first_unit;
    run_local(study, evaluator, state.first_unit, opts, sink_into(state));
    if (state.writer) state.writer->finish();
    return summary;
  }

  MpiSession session;
  summary.ranks = static_cast<std::size_t>(session.size());
  summary.writes_output = session.rank() == 0;
  OutputState state;
  std::exception_ptr error;
  std::size_t first_unit = 0;
  if (session.rank() == 0) {
    try {
      state = open_output(study, output);
      first_unit = state.first_unit;
    } catch (...) {
      error = std::current_exception();
      first_unit = kResumeFailed;
    }
  }
  first_unit = session.broadcast_from_root(first_unit);
  if (first_unit == kResumeFailed) {
    if (error) std::rethrow_exception(error);
    throw InputError(output.path, "", "a usable output file (rank 0 says why)");
  }
  summary.units_resumed = first_unit;
  run_sharded(session, study, evaluator, first_unit, opts, sink_into(state));
  if (state.writer) state.writer->finish();
  return summary;
}

}  // namespace fusim::sweep
