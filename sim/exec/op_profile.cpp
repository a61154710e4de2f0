#include "exec/op_profile.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>

#include "compute/op_signature.h"
#include "core/error.h"
#include "core/json_view.h"

namespace fusim::exec {

const ProfiledOp* OpProfile::find(const std::string& signature) const {
  for (const auto& op : ops)
    if (op.signature == signature) return &op;
  return nullptr;
}

const ProfiledOp* OpProfile::find_in_step(const std::string& kind, int layer_index) const {
  for (const auto& op : ops)
    if (op.kind == kind && op.layer_index == layer_index) return &op;
  return nullptr;
}

OpProfile parse_op_profile(const nlohmann::json& doc, const std::string& file) {
  JsonView v(doc, file);
  v.require_object();
  v.reject_unknown_keys({"format", "version", "trace", "device", "threads", "optimizer", "impl",
                         "evict_bytes", "context", "execution", "ops"});
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
  p.context = v.get_string("context", "isolated");
  if (p.context != "isolated" && p.context != "step")
    v.at("context").fail_got("\"isolated\" or \"step\"");
  p.execution = v.get_string("execution", "layers");
  if (p.execution != "layers" && p.execution != "graph")
    v.at("execution").fail_got("\"layers\" or \"graph\"");
  if (p.in_step() && p.evict_bytes > 0)
    v.at("evict_bytes").fail("0 in a step profile (cold times are measured in isolation only)");
  JsonView ops = v.at("ops");
  ops.require_array();
  for (const auto& e : ops.elements()) {
    e.require_object();
    e.reject_unknown_keys({"signature", "kind", "op", "layer", "description", "per_step",
                           "median_ns", "p25_ns", "p75_ns", "repeats", "cold_median_ns",
                           "cold_p25_ns", "cold_p75_ns", "cold_repeats", "layer_index"});
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
    if (p.in_step()) {
      // One entry per op of the step: its kind on its trace layer (-1: a whole-model op).
      const auto li = e.find("layer_index");
      if (!li || li->raw().is_null())
        e.fail("a \"layer_index\" (a step profile's ops are keyed by it)");
      o.layer_index = static_cast<int>(li->as_int_at_least(-1));
      if (p.find_in_step(o.kind, o.layer_index))
        e.at("layer_index")
            .fail(fmt::format("one entry per kind and layer, got {} on layer {} again", o.kind,
                              o.layer_index));
    } else if (p.find(o.signature)) {
      e.at("signature")
          .fail(fmt::format("a signature not listed before, got \"{}\" again", o.signature));
    }
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
                   {"repeats", o.repeats},
                   {"layer_index", p.in_step() ? nlohmann::json(o.layer_index) : nullptr}});
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
                        {"context", p.context},
                        {"execution", p.execution},
                        {"ops", ops}};
  return out;
}

OpProfile bracket_profiles(const OpProfile& before, const OpProfile& after) {
  FUSIM_ASSERT(before.ops.size() == after.ops.size() && before.evict_bytes == after.evict_bytes &&
                   before.context == after.context,
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

OpProfile in_step_profile(const workload::Trace& trace, const schedule::Schedule& eager,
                          const RunResult& measured, const std::string& source) {
  // The measured timings in the order the executor ran them, cut into steps: a step's ops are
  // contiguous, and an extension round repeats the last steady step's op ids, so a new step
  // starts where the step index changes or the op ids start over.
  struct Timed {
    std::size_t op = 0, step = 0;
    double time = 0;
  };
  std::vector<Timed> timed;
  std::vector<double> step_totals;
  const OpTiming* prev = nullptr;
  for (const OpTiming& t : measured.per_op) {
    if (!t.measured) continue;
    const auto id = static_cast<std::size_t>(t.id);
    if (id >= eager.ops.size() || schedule::to_string(eager.ops[id].kind) != t.kind ||
        eager.ops[id].layer != t.layer)
      throw InputError(source, "per_op",
                       fmt::format("the timings of a run of the eager schedule of this trace, got "
                                   "op {} ({} on layer {}) that it does not have",
                                   t.id, t.kind, t.layer));
    if (!prev || prev->step != t.step || prev->id >= t.id) step_totals.push_back(0);
    prev = &t;
    timed.push_back({id, step_totals.size() - 1, double(t.end - t.start)});
    step_totals.back() += timed.back().time;
  }
  if (timed.empty())
    throw InputError(source, "per_op",
                     "the op timings of measured steps (run with per-op timings), got none");
  // Each op's representative time is its mean over the quarter of the steps (two at least)
  // whose step time is nearest the median step, not its own median: an op's times are skewed
  // and move together within a step (the machine's speed drifts), so the sum of per-op medians
  // falls 4-11% below the median step (measured on this project's 2-core VM over 23
  // configurations), and a VM's step times can be bimodal (vgg11: ~1.0 s and ~1.9 s), where a
  // middle-half mean lands between the modes. These means add up to about the median step.
  const double median_step = quantile(step_totals, 0.5);
  std::vector<std::size_t> order(step_totals.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::abs(step_totals[a] - median_step) < std::abs(step_totals[b] - median_step);
  });
  const std::size_t nearest =
      std::min(order.size(), std::max<std::size_t>(2, (order.size() + 3) / 4));
  std::vector<bool> central(step_totals.size());
  for (std::size_t k = 0; k < nearest; ++k) central[order[k]] = true;

  OpProfile p;
  p.context = "step";
  p.execution = measured.execution.empty() ? "layers" : measured.execution;
  p.device = measured.executor == "cuda" ? "cuda" : "cpu";
  p.optimizer = eager.optimizer;
  p.impl = std::string(schedule::to_string(eager.impl));
  // Per (kind, layer), in the order of the step's ops.
  std::map<std::pair<std::string, int>, std::size_t> index;
  std::vector<std::size_t> entry_of(eager.ops.size(), SIZE_MAX);
  std::vector<bool> timed_op(eager.ops.size());
  for (const Timed& t : timed) timed_op[t.op] = true;
  for (const auto& op : eager.ops) {
    if (!timed_op[std::size_t(op.id)]) continue;  // an op of an unmeasured step (warm-up)
    const std::string kind(schedule::to_string(op.kind));
    auto [it, fresh] = index.emplace(std::make_pair(kind, op.layer), p.ops.size());
    if (fresh) {
      const compute::OpSignature s = compute::op_signature(trace, eager, op);
      ProfiledOp o;
      o.signature = s.key;
      o.kind = kind;
      o.layer_index = op.layer;
      if (op.layer >= 0) {
        const auto& layer = trace.layers.at(std::size_t(op.layer));
        o.layer = layer.name;
        o.op = std::string(workload::to_string(layer.op));
      }
      o.description = s.description;
      p.ops.push_back(std::move(o));
    }
    entry_of[std::size_t(op.id)] = it->second;
  }
  std::vector<std::vector<double>> all(p.ops.size()), middle(p.ops.size());
  for (const Timed& t : timed) {
    all[entry_of[t.op]].push_back(t.time);
    if (central[t.step]) middle[entry_of[t.op]].push_back(t.time);
  }
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    ProfiledOp& o = p.ops[i];
    const auto& m = middle[i].empty() ? all[i] : middle[i];
    double sum = 0;
    for (double x : m) sum += x;
    o.median = Tick(sum / double(m.size()) + 0.5);
    o.p25 = Tick(quantile(all[i], 0.25) + 0.5);
    o.p75 = Tick(quantile(all[i], 0.75) + 0.5);
    o.repeats = static_cast<int>(all[i].size());
  }
  return p;
}

}  // namespace fusim::exec
