#include "exec/op_profile.h"

#include <fmt/format.h>
#include <algorithm>
#include <map>

#include "compute/op_signature.h"
#include "core/error.h"
#include "core/json_view.h"
#include "exec/compute_solver.h"

namespace fusim::exec {
namespace {
// A measured cold penalty beyond 10x the simulated one is a model that misses the op's
// memory traffic altogether (or a disturbed measurement), not a scale to extrapolate.
constexpr double kMaxPenaltyScale = 10.0;
}  // namespace

const ProfiledOp* OpProfile::find(const std::string& signature) const {
  for (const auto& op : ops)
    if (op.signature == signature) return &op;
  return nullptr;
}

OpProfile parse_op_profile(const nlohmann::json& doc, const std::string& file) {
  JsonView v(doc, file);
  v.require_object();
  v.reject_unknown_keys({"format", "version", "trace", "device", "threads", "optimizer", "impl",
                         "evict_bytes", "ops"});
  if (v.at("format").as_string() != "fusim-profile")
    v.at("format").fail_got("\"fusim-profile\" (a file written by `fusim profile`)");
  if (v.at("version").as_int() != 1) v.at("version").fail_got("1");
  OpProfile p;
  p.file = file;
  p.trace = v.get_string("trace", "");
  p.device = v.at("device").as_nonempty_string();
  if (p.device != "cpu" && p.device != "cuda") v.at("device").fail_got("\"cpu\" or \"cuda\"");
  p.threads = static_cast<int>(v.at("threads").as_int_at_least(0));
  p.optimizer = v.at("optimizer").as_nonempty_string();
  p.impl = v.at("impl").as_nonempty_string();
  if (auto e = v.find("evict_bytes")) p.evict_bytes = e->as_bytes(/*allow_zero=*/true);
  JsonView ops = v.at("ops");
  ops.require_array();
  for (const auto& e : ops.elements()) {
    e.require_object();
    e.reject_unknown_keys({"signature", "kind", "op", "layer", "description", "per_step",
                           "median_ns", "p25_ns", "p75_ns", "repeats", "cold_median_ns",
                           "cold_p25_ns", "cold_p75_ns", "cold_repeats"});
    ProfiledOp o;
    o.signature = e.at("signature").as_nonempty_string();
    o.kind = e.at("kind").as_nonempty_string();
    o.op = e.get_string("op", "");
    o.layer = e.get_string("layer", "");
    o.description = e.get_string("description", "");
    o.per_step = static_cast<int>(e.get_int("per_step", 1));
    o.median = ns(e.at("median_ns").as_number_in(0, 1e12));
    o.p25 = ns(e.get_number("p25_ns", to_ns(o.median)));
    o.p75 = ns(e.get_number("p75_ns", to_ns(o.median)));
    o.repeats = static_cast<int>(e.at("repeats").as_positive_int());
    // Null or absent: not measured cold (profiles written before --evict lack the keys).
    const auto c = e.find("cold_median_ns");
    if (c && !c->raw().is_null()) {
      if (p.evict_bytes <= 0)
        c->fail("no cold time in a profile without a positive top-level \"evict_bytes\"");
      o.cold_median = ns(c->as_number_in(0, 1e12));
      o.cold_p25 = ns(e.get_number("cold_p25_ns", to_ns(o.cold_median)));
      o.cold_p75 = ns(e.get_number("cold_p75_ns", to_ns(o.cold_median)));
      o.cold_repeats = static_cast<int>(e.at("cold_repeats").as_positive_int());
    } else if (p.evict_bytes > 0) {
      e.fail("a \"cold_median_ns\" (the profile has \"evict_bytes\": every op is measured cold)");
    }
    if (p.find(o.signature))
      e.at("signature")
          .fail(fmt::format("a signature not listed before, got \"{}\" again", o.signature));
    p.ops.push_back(std::move(o));
  }
  return p;
}

OpProfile read_op_profile(const std::string& path) {
  return parse_op_profile(load_json_file(path), path);
}

nlohmann::json op_profile_json(const OpProfile& p) {
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& o : p.ops) {
    ops.push_back({{"signature", o.signature},
                   {"kind", o.kind},
                   {"op", o.op},
                   {"layer", o.layer},
                   {"description", o.description},
                   {"per_step", o.per_step},
                   {"median_ns", to_ns(o.median)},
                   {"p25_ns", to_ns(o.p25)},
                   {"p75_ns", to_ns(o.p75)},
                   {"repeats", o.repeats}});
    // Every record has the same keys (docs/output_schema.md): null where not measured.
    auto& j = ops.back();
    const auto cold = [&](Tick t) { return o.has_cold() ? nlohmann::json(to_ns(t)) : nullptr; };
    j["cold_median_ns"] = cold(o.cold_median);
    j["cold_p25_ns"] = cold(o.cold_p25);
    j["cold_p75_ns"] = cold(o.cold_p75);
    j["cold_repeats"] = o.has_cold() ? nlohmann::json(o.cold_repeats) : nullptr;
  }
  nlohmann::json out = {{"format", "fusim-profile"},
                        {"version", 1},
                        {"trace", p.trace},
                        {"device", p.device},
                        {"threads", p.threads},
                        {"optimizer", p.optimizer},
                        {"impl", p.impl},
                        {"evict_bytes", p.evict_bytes},
                        {"ops", ops}};
  return out;
}

OpProfile bracket_profiles(const OpProfile& before, const OpProfile& after) {
  FUSIM_ASSERT(before.ops.size() == after.ops.size() && before.evict_bytes == after.evict_bytes,
               "bracket_profiles of two profiles of one trace, measured alike");
  OpProfile out = before;
  const auto mean = [](Tick a, Tick b) { return (a + b + 1) / 2; };
  for (std::size_t i = 0; i < out.ops.size(); ++i) {
    ProfiledOp& o = out.ops[i];
    const ProfiledOp& b = after.ops[i];
    FUSIM_ASSERT(o.signature == b.signature, "bracket_profiles: the same ops in the same order");
    o.median = mean(o.median, b.median);
    o.p25 = std::min(o.p25, b.p25);
    o.p75 = std::max(o.p75, b.p75);
    o.repeats += b.repeats;
    if (o.has_cold() && b.has_cold()) {
      o.cold_median = mean(o.cold_median, b.cold_median);
      o.cold_p25 = std::min(o.cold_p25, b.cold_p25);
      o.cold_p75 = std::max(o.cold_p75, b.cold_p75);
      o.cold_repeats += b.cold_repeats;
    }
  }
  return out;
}

double profile_drift(const OpProfile& before, const OpProfile& after) {
  const auto total = [](const OpProfile& p) {
    double t = 0;
    for (const auto& o : p.ops) t += double(o.median) * o.per_step;
    return t;
  };
  const double a = total(before);
  return a > 0 ? total(after) / a - 1.0 : 0.0;
}

std::vector<DistinctOp> distinct_ops(const workload::Trace& trace,
                                     const schedule::Schedule& schedule) {
  std::vector<DistinctOp> out;
  std::map<std::string, std::size_t> index;
  for (const auto& op : schedule.ops) {
    if (op.kernels == 0) continue;
    const compute::OpSignature s = compute::op_signature(trace, schedule, op);
    auto [it, fresh] = index.emplace(s.key, out.size());
    if (fresh) out.push_back({op.id, 0, s.key, s.description});
    ++out[it->second].count;
  }
  return out;
}

ProfiledCompute::ProfiledCompute(const OpProfile& profile, const Machine& host,
                                 const SimOptions& options)
    : profile_(profile), host_(host), options_(options) {
  // A CPU op's time depends on its intra-op threads: measured on other threads than the
  // simulated op runs on, the solved compute would be the wrong op's.
  if (host.compute.kind == compute::UnitKind::Cpu && profile.device == "cpu" &&
      profile.threads != host.compute.threads_per_op)
    throw InputError(profile.file, "threads",
                     fmt::format("{} (compute.threads_per_op of machine {}, the threads each "
                                 "simulated op runs on: measure with `fusim profile --threads "
                                 "{}`), got {}",
                                 host.compute.threads_per_op, host.name,
                                 host.compute.threads_per_op, profile.threads));
  options_.progress = nullptr;
  options_.op_compute.clear();
}

std::vector<Tick> ProfiledCompute::op_compute(const workload::Trace& trace,
                                              const schedule::Schedule& schedule) {
  if (schedule.optimizer != profile_.optimizer)
    throw InputError(profile_.file, "optimizer",
                     fmt::format("\"{}\" (the --optimizer it is used with), got \"{}\"",
                                 schedule.optimizer, profile_.optimizer));
  if (schedule::to_string(schedule.impl) != profile_.impl)
    throw InputError(profile_.file, "impl",
                     fmt::format("\"{}\" (the --impl it is used with), got \"{}\"",
                                 schedule::to_string(schedule.impl), profile_.impl));
  std::vector<Tick> out(schedule.ops.size(), -1);
  std::vector<std::string> missing;
  for (const auto& op : schedule.ops) {
    if (op.kernels == 0) continue;
    const compute::OpSignature s = compute::op_signature(trace, schedule, op);
    auto it = compute_.find(s.key);
    if (it == compute_.end()) {
      const ProfiledOp* measured = profile_.find(s.key);
      if (!measured) {
        if (missing.size() < 3) missing.push_back(fmt::format("{} ({})", s.description, s.key));
        continue;
      }
      const SolvedCompute c =
          solve_compute_time(trace, schedule, op.id, host_, options_, measured->median);
      if (!c.exact) inexact_.push_back({s.description, measured->median, c.simulated});
      Solved solved{c.compute, c.simulated};
      if (measured->has_cold()) {
        // The first run of the op alone is the cold one: nothing cached, nothing dirty.
        const Tick sim_cold = simulate_isolated(trace, isolated_schedule(schedule, op.id, 1), host_,
                                                options_, c.compute);
        const double simulated = double(sim_cold - c.simulated);
        const double penalty = double(measured->cold_median - measured->median);
        if (simulated > std::max(double(ns(1)), 0.01 * double(measured->median))) {
          solved.scale = std::clamp(penalty / simulated, 0.0, kMaxPenaltyScale);
          solved.scaled = true;
        }
      }
      it = compute_.emplace(s.key, solved).first;
    }
    out[std::size_t(op.id)] = it->second.compute;
  }
  if (!missing.empty())
    throw InputError(profile_.file, "ops",
                     fmt::format("a measurement of every op of the schedule ({} {}, impl {}), "
                                 "missing {}; measure this trace with `fusim profile --trace ... "
                                 "--optimizer {} --impl {}`",
                                 schedule.optimizer, schedule::to_string(schedule.ordering),
                                 schedule::to_string(schedule.impl), fmt::join(missing, "; "),
                                 schedule.optimizer, schedule::to_string(schedule.impl)));
  return out;
}

ProfiledCompute::OpTimes ProfiledCompute::in_context(const workload::Trace& trace,
                                                     const schedule::Schedule& schedule,
                                                     const std::vector<Tick>& compute,
                                                     const RunResult& first) const {
  OpTimes out{compute, std::vector<Tick>(compute.size(), 0)};
  for (const OpTiming& t : first.per_op) {
    const auto id = static_cast<std::size_t>(t.id);
    if (id >= compute.size() || compute[id] < 0) continue;
    const auto& op = schedule.ops.at(id);
    const auto it = compute_.find(compute::op_signature(trace, schedule, op).key);
    FUSIM_ASSERT(it != compute_.end(), "in_context after op_compute solved the schedule");
    const Solved& s = it->second;
    if (!s.scaled) continue;
    const double penalty = double(std::max<Tick>(0, (t.end - t.start) - s.sim_warm));
    const Tick extra = Tick((s.scale - 1.0) * penalty + (s.scale >= 1.0 ? 0.5 : -0.5));
    if (extra >= 0) {
      out.delay[id] = extra;
    } else {
      out.compute[id] = std::max<Tick>(0, compute[id] + extra);
    }
  }
  return out;
}

std::vector<double> ProfiledCompute::penalty_scales() const {
  std::vector<double> out;
  for (const auto& [key, s] : compute_)
    if (s.scaled) out.push_back(s.scale);
  return out;
}

SimulationDetail simulate_profiled(const workload::Trace& trace, const schedule::Schedule& schedule,
                                   const Machine& machine, SimOptions options,
                                   const ProfiledCompute& compute,
                                   const std::vector<Tick>& op_compute) {
  options.op_compute = op_compute;
  if (!compute.scales_penalties()) return simulate_detailed(trace, schedule, machine, options);
  // The first pass only finds each op's time in context: no progress for it.
  SimOptions first = options;
  first.progress = nullptr;
  ProfiledCompute::OpTimes times =
      compute.in_context(trace, schedule, op_compute, simulate(trace, schedule, machine, first));
  options.op_compute = std::move(times.compute);
  options.op_delay = std::move(times.delay);
  return simulate_detailed(trace, schedule, machine, options);
}

SimulationDetail simulate_profiled(const workload::Trace& trace, const schedule::Schedule& schedule,
                                   const Machine& machine, SimOptions options,
                                   ProfiledCompute* compute) {
  if (!compute) {
    options.op_compute.clear();
    return simulate_detailed(trace, schedule, machine, options);
  }
  const std::vector<Tick> c = compute->op_compute(trace, schedule);
  return simulate_profiled(trace, schedule, machine, std::move(options), *compute, c);
}

}  // namespace fusim::exec
