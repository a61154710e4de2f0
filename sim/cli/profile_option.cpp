#include "cli/profile_option.h"

#include <fmt/format.h>
#include <algorithm>

namespace fusim::cli {

ProfileOption::ProfileOption(const std::string& path, const exec::Machine& host,
                             const exec::SimOptions& sim) {
  if (!path.empty()) init(exec::read_op_profile(path), host, sim);
}

ProfileOption::ProfileOption(exec::OpProfile profile, const exec::Machine& host,
                             const exec::SimOptions& sim) {
  init(std::move(profile), host, sim);
}

void ProfileOption::init(exec::OpProfile profile, const exec::Machine& host,
                         const exec::SimOptions& sim) {
  profile_ = std::make_unique<exec::OpProfile>(std::move(profile));
  host_ = std::make_unique<exec::Machine>(host);
  if (host_->kind == compute::UnitKind::Cpu && profile_->threads > 0 &&
      profile_->threads != host_->compute.threads_per_op)
    fmt::print(stderr,
               "fusim: warning: {} was measured with {} threads, machine {} models {} per op: "
               "the measured compute times stand for {} threads\n",
               profile_->file, profile_->threads, host_->name, host_->compute.threads_per_op,
               profile_->threads);
  compute_ = std::make_unique<exec::ProfiledCompute>(*profile_, *host_, sim);
}

exec::SimulationDetail ProfileOption::simulate(const workload::Trace& trace,
                                               const schedule::Schedule& schedule,
                                               const exec::Machine& machine,
                                               const exec::SimOptions& sim) {
  return exec::simulate_profiled(trace, schedule, machine, sim, compute_.get());
}

void ProfileOption::report() const {
  if (!compute_) return;
  const auto& inexact = compute_->inexact();
  fmt::print(
      stderr, "profile {}: {} of {} {} on {}{}\n", profile_->file,
      compute_->in_step() ? "residual times" : "compute times", compute_->solved(),
      compute_->in_step() ? "ops of the eager step fitted" : "distinct ops solved", host_->name,
      inexact.empty()
          ? ""
          : fmt::format("; {} slower in the model's memory alone than measured", inexact.size()));
  std::vector<double> k = compute_->penalty_scales();
  if (!k.empty()) {
    std::sort(k.begin(), k.end());
    fmt::print(stderr,
               "profile {}: cold times: the simulated cost of running cold scaled to the "
               "measured one for {} ops, by {:.2f}x (median; quartiles {:.2f}-{:.2f}x)\n",
               profile_->file, k.size(), k[k.size() / 2], k[k.size() / 4], k[3 * k.size() / 4]);
  }
  for (std::size_t i = 0; i < inexact.size() && i < 5; ++i)
    fmt::print(stderr, "  {}: measured {:.4f} ms, memory alone {:.4f} ms\n", inexact[i].description,
               to_ms(inexact[i].measured), to_ms(inexact[i].simulated));
}

}  // namespace fusim::cli
