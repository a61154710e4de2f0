#pragma once
// Sharding a sweep over the ranks of an `mpirun` launch. All MPI code is in mpi_shard.cpp,
// behind FUSIM_WITH_MPI; without MPI these report a single process and are never used.
#include <cstddef>

#include "sweep/runner.h"

namespace fusim::sweep {

// True when this process was started by mpirun/srun: the launcher's environment says so
// (built with or without MPI).
bool mpi_launcher_environment();
// True when built with MPI and mpi_launcher_environment(); plain runs never touch MPI.
bool launched_as_mpi_ranks();

// Initialises MPI for the life of the object (funnelled: only the calling thread talks MPI).
class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  // Rank 0's value of `value`, on every rank.
  std::size_t broadcast_from_root(std::size_t value) const;

 private:
  int rank_ = 0, size_ = 1;
};

// Every rank calls this with the same study. Units [first_unit, units) are dealt round-robin
// over ranks, run on opts.jobs threads per rank, and sent to rank 0, whose sink receives
// them in unit order (other ranks' sinks are never called). An error on any rank aborts
// the whole job with exit code 2 after printing it.
void run_sharded(const MpiSession& session, const Study& study, const Evaluator& evaluator,
                 std::size_t first_unit, const RunOptions& opts, const UnitSink& sink);

}  // namespace fusim::sweep
