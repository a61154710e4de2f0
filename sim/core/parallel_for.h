#pragma once
// Independent jobs on the host's cores: each index of `order` handed to `job` once, the
// next free index to the next free thread (so `order` should put the longest jobs first:
// left to the end, one thread runs them alone while the others idle). `done(i)` runs after
// job i, one call at a time (progress lines), in completion order. The first exception a
// job throws stops the handing out of indices and is rethrown once every thread has
// stopped. Jobs must not share mutable state; results go to slots the caller indexes by i,
// so the outcome does not depend on the threads' interleaving.
#include <cstddef>
#include <functional>
#include <vector>

namespace fusim {

void parallel_for(const std::vector<std::size_t>& order, int threads,
                  const std::function<void(std::size_t)>& job,
                  const std::function<void(std::size_t)>& done = {});

}  // namespace fusim
