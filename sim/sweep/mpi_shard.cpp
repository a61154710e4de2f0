// The only file of fusim that talks MPI (FUSIM_WITH_MPI is set when CMake finds MPI).
#include "sweep/mpi_shard.h"
#include "core/progress.h"

#include <cstdlib>

#include "core/error.h"

#ifdef FUSIM_WITH_MPI
#include <mpi.h>

#include <cstdio>
#include <string>
#include <thread>

#include "sweep/unit_pool.h"
#endif

namespace fusim::sweep {

bool mpi_launcher_environment() {
  // Open MPI's mpirun, MPICH/Hydra and Slurm's PMI-2, and PMIx (srun --mpi=pmix).
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(name)) return true;
  return false;
}

#ifdef FUSIM_WITH_MPI
namespace {

constexpr int kRowsTag = 17;

// A finished unit travels as the JSON text [unit, rows]; nlohmann writes doubles so that
// they read back bit for bit, hence rank 0 renders the same bytes as the rank that ran it.
std::string encode(const FinishedUnit& unit) {
  nlohmann::json message = nlohmann::json::array({unit.unit, unit.rows});
  return message.dump();
}

FinishedUnit decode(const std::string& text) {
  nlohmann::json message = nlohmann::json::parse(text);
  FinishedUnit unit;
  unit.unit = message.at(0).get<std::size_t>();
  for (const nlohmann::json& row : message.at(1)) {
    Cells cells;
    for (const nlohmann::json& cell : row) cells.push_back(cell);
    unit.rows.push_back(std::move(cells));
  }
  return unit;
}

std::optional<FinishedUnit> receive_any() {
  int waiting = 0;
  MPI_Status status;
  MPI_Iprobe(MPI_ANY_SOURCE, kRowsTag, MPI_COMM_WORLD, &waiting, &status);
  if (!waiting) return std::nullopt;
  int bytes = 0;
  MPI_Get_count(&status, MPI_CHAR, &bytes);
  std::string text(static_cast<std::size_t>(bytes), '\0');
  MPI_Recv(text.data(), bytes, MPI_CHAR, status.MPI_SOURCE, kRowsTag, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  return decode(text);
}

}  // namespace

bool launched_as_mpi_ranks() {
  return mpi_launcher_environment();
}

MpiSession::MpiSession() {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() {
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (!finalised) MPI_Finalize();
}

std::size_t MpiSession::broadcast_from_root(std::size_t value) const {
  unsigned long long v = value;
  MPI_Bcast(&v, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  return static_cast<std::size_t>(v);
}

void run_sharded(const MpiSession& session, const Study& study, const Evaluator& evaluator,
                 std::size_t first_unit, const RunOptions& opts, const UnitSink& sink) {
  const std::size_t ranks = static_cast<std::size_t>(session.size());
  const std::size_t me = static_cast<std::size_t>(session.rank());
  // Round-robin: neighbouring grid points cost alike, so every rank gets a fair mix.
  std::vector<std::size_t> mine;
  for (std::size_t u = first_unit; u < study.units(); ++u)
    if ((u - first_unit) % ranks == me) mine.push_back(u);
  try {
    UnitPool pool(mine, opts.jobs,
                  [&](std::size_t unit) { return study.run_unit(evaluator, unit); });
    if (me != 0) {
      while (!pool.all_delivered()) {
        auto done = pool.next(std::chrono::milliseconds(200));
        if (!done) continue;
        std::string text = encode(*done);
        MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, 0, kRowsTag, MPI_COMM_WORLD);
      }
      return;
    }
    Progress bar("sweep", study.units(), first_unit, opts.progress);
    InOrder order(first_unit, study.units());
    while (!order.complete()) {
      std::optional<FinishedUnit> done = receive_any();
      if (!done && !pool.all_delivered()) done = pool.next(std::chrono::milliseconds(2));
      if (!done) {
        if (pool.all_delivered()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        continue;
      }
      bar.advance();
      for (FinishedUnit& unit : order.add(std::move(*done))) sink(unit.unit, unit.rows);
    }
    bar.finish();
  } catch (const std::exception& e) {
    // Other ranks would wait for this one forever: end the whole job.
    std::fprintf(stderr, "fusim: rank %zu: %s\n", me, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

#else  // built without MPI: one process, these are never reached

bool launched_as_mpi_ranks() {
  return false;
}
MpiSession::MpiSession() {}
MpiSession::~MpiSession() {}
std::size_t MpiSession::broadcast_from_root(std::size_t value) const {
  return value;
}
void run_sharded(const MpiSession&, const Study& study, const Evaluator& evaluator,
                 std::size_t first_unit, const RunOptions& opts, const UnitSink& sink) {
  run_local(study, evaluator, first_unit, opts, sink);
}

#endif

}  // namespace fusim::sweep
