// build_schedule: issue order, dependencies and streams of each ordering; then the
// tensors and passes (layer_passes, update_passes) and memory (allocator).
//
// Per step t, with U_i placed by the layer's mode:
//   eager     F_1..F_n L | Bx_n Bw_n .. Bx_1 Bw_1 | U_1..U_n
//   backward  F_1..F_n L | Bx_n Bw_n U_n .. Bx_1 Bw_1 U_1
//   forward   U_1(t-1) F_1 .. U_n(t-1) F_n L | Bx_n Bw_n .. Bx_1 Bw_1   (+ flush U(K-1))
#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <tuple>

#include "core/error.h"
#include "core/suggest.h"
#include "schedule/allocator.h"
#include "schedule/layer_passes.h"
#include "schedule/mixed.h"
#include "schedule/optimizer.h"
#include "schedule/update_passes.h"

namespace fusim::schedule {
namespace {
using OpKey = std::tuple<OpKind, int, int>;  // kind, layer, step

std::vector<LayerMode> layer_modes(const workload::Trace& trace, const ScheduleOptions& options) {
  std::vector<LayerMode> modes(trace.layers.size(), LayerMode::Eager);
  switch (options.ordering) {
    case Ordering::Eager:
      break;
    case Ordering::BackwardFused:
      std::fill(modes.begin(), modes.end(), LayerMode::Backward);
      break;
    case Ordering::ForwardFused:
      std::fill(modes.begin(), modes.end(), LayerMode::Forward);
      break;
    case Ordering::Mixed: {
      MixedOrdering mixed;
      if (options.mixed)
        mixed = *options.mixed;
      else if (!options.mixed_file.empty())
        mixed = load_mixed_ordering(options.mixed_file, trace);
      else
        throw InputError("ordering mixed needs a per-layer file (--mixed FILE)");
      for (std::size_t i = 0; i < trace.layers.size(); ++i) {
        auto it = mixed.layers.find(trace.layers[i].name);
        modes[i] = it != mixed.layers.end() ? it->second : mixed.fallback;
      }
      break;
    }
  }
  return modes;
}

class OrderBuilder {
 public:
  OrderBuilder(const workload::Trace& trace, const std::vector<LayerRole>& roles,
               const std::vector<LayerMode>& modes, Schedule& s)
      : trace_(trace), roles_(roles), modes_(modes), s_(s) {}

  void emit(OpKind kind, int layer, int step) {
    Op op;
    op.id = int(s_.ops.size());
    op.kind = kind;
    op.layer = layer;
    op.step = step;
    op.layer_op = trace_.layers[std::size_t(layer)].op;
    op.stream = kind == OpKind::Update && s_.gpu_streams &&
                        modes_[std::size_t(layer)] == LayerMode::Backward
                    ? 1
                    : 0;
    index_[{kind, layer, step}] = op.id;
    s_.ops.push_back(op);
    if (kind == OpKind::BackwardInput || kind == OpKind::BackwardWeight)
      last_backward_[step] = op.id;
  }

  void order(int steps) {
    const int n = int(trace_.layers.size());
    auto has_u = [&](int i) { return roles_[std::size_t(i)].has_update; };
    auto mode = [&](int i) { return modes_[std::size_t(i)]; };
    for (int t = 0; t < steps; ++t) {
      for (int i = 0; i < n; ++i) {
        if (t > 0 && has_u(i) && mode(i) == LayerMode::Forward) emit(OpKind::Update, i, t - 1);
        emit(roles_[std::size_t(i)].is_loss ? OpKind::Loss : OpKind::Forward, i, t);
      }
      for (int i = n - 1; i >= 0; --i) {
        const auto& r = roles_[std::size_t(i)];
        if (r.is_loss || !r.requires_grad) continue;
        if (r.has_bx) emit(OpKind::BackwardInput, i, t);
        if (r.has_bw) emit(OpKind::BackwardWeight, i, t);
        if (has_u(i) && mode(i) == LayerMode::Backward) emit(OpKind::Update, i, t);
      }
      for (int i = 0; i < n; ++i)
        if (has_u(i) && mode(i) == LayerMode::Eager) emit(OpKind::Update, i, t);
    }
    for (int i = 0; i < n; ++i)  // flush: the updates of the last step
      if (has_u(i) && mode(i) == LayerMode::Forward) emit(OpKind::Update, i, steps - 1);
  }

  // Data edges from what each op reads; control edges for the ordering's sequencing.
  void link() {
    for (auto& op : s_.ops) {
      const auto& layer = trace_.layers[std::size_t(op.layer)];
      const auto& role = roles_[std::size_t(op.layer)];
      const int t = op.step;
      auto data = [&](OpKind k, int l, int step) { add(op, find(k, l, step), DepKind::Data); };
      switch (op.kind) {
        case OpKind::Forward:
        case OpKind::Loss:
          for (const auto& in : layer.inputs)
            if (in.source == workload::InputRef::Source::Layer) data(OpKind::Forward, in.index, t);
          // w_i is read only once the previous step's update of it has landed (for a tied
          // param: its owner's update, issue 20).
          if (role.has_update && t > 0) data(OpKind::Update, op.layer, t - 1);
          for (int o : role.tied_owners)
            if (t > 0) data(OpKind::Update, o, t - 1);
          break;
        case OpKind::BackwardInput:
        case OpKind::BackwardWeight:
          data(OpKind::Forward, op.layer, t);  // saved activations
          for (int c : role.consumers) {       // the gradient of the output
            const auto& rc = roles_[std::size_t(c)];
            // A consumer with an untracked (integer, bool) result sends no gradient back.
            if (rc.is_loss || rc.has_bx)
              data(rc.is_loss ? OpKind::Loss : OpKind::BackwardInput, c, t);
          }
          break;
        case OpKind::Update:
          data(OpKind::BackwardWeight, op.layer, t);  // grad_i is final
          // Write-after-read: Bx_i reads w_i of this step before U_i overwrites it.
          if (role.has_bx) data(OpKind::BackwardInput, op.layer, t);
          // A tied param's grad is final once every user's Bw added into it, and its users'
          // Bx read w before U overwrites it (issue 20).
          for (int u : role.tied_users) {
            data(OpKind::BackwardWeight, u, t);
            if (roles_[std::size_t(u)].has_bx) data(OpKind::BackwardInput, u, t);
          }
          // eager: optimizer.step() after loss.backward(); forward: the update runs in the
          // next step's forward, which starts after this step's backward.
          if (modes_[std::size_t(op.layer)] != LayerMode::Backward)
            add(op, last_backward_.at(t), DepKind::Control);
          break;
      }
    }
  }

 private:
  int find(OpKind kind, int layer, int step) const {
    // A Forward edge into the loss layer's op resolves to L.
    if (kind == OpKind::Forward && roles_[std::size_t(layer)].is_loss) kind = OpKind::Loss;
    auto it = index_.find({kind, layer, step});
    FUSIM_ASSERT(it != index_.end(),
                 fmt::format("op {} of layer {} step {} exists", to_string(kind), layer, step));
    return it->second;
  }
  static void add(Op& op, int dep, DepKind kind) {
    FUSIM_ASSERT(dep < op.id, "dependencies are issued first");
    auto it = std::find(op.deps.begin(), op.deps.end(), dep);
    if (it != op.deps.end()) return;
    op.deps.push_back(dep);
    op.dep_kinds.push_back(kind);
  }

  const workload::Trace& trace_;
  const std::vector<LayerRole>& roles_;
  const std::vector<LayerMode>& modes_;
  Schedule& s_;
  std::map<OpKey, int> index_;
  std::map<int, int> last_backward_;
};
}  // namespace

Schedule build_schedule(const workload::Trace& trace, const ScheduleOptions& options) {
  const OptimizerSpec* spec = find_optimizer(options.optimizer);
  if (!spec)
    throw InputError(
        fmt::format("unknown optimizer \"{}\": expected one of {}{}", options.optimizer,
                    optimizer_names(), did_you_mean(options.optimizer, optimizer_name_list())));
  Schedule s;
  s.ordering = options.ordering;
  s.optimizer = options.optimizer;
  s.impl = options.impl;
  s.gpu_streams = options.gpu_streams;
  s.device = options.device;
  s.execution = options.execution;
  s.memory = options.memory;
  if (s.memory.optimizer_shards < 1)
    throw InputError(fmt::format("optimizer shards: expected an integer >= 1, got {}",
                                 s.memory.optimizer_shards));
  s.layer_modes = layer_modes(trace, options);
  const auto roles = layer_roles(trace);
  bool any_forward = false;
  for (std::size_t i = 0; i < roles.size(); ++i)
    any_forward = any_forward || (roles[i].has_update && s.layer_modes[i] == LayerMode::Forward);
  s.steps = options.steps != 0 ? options.steps : any_forward ? 2 : 1;
  if (s.steps < 1)
    throw InputError(fmt::format("--steps: expected an integer >= 1, got {}", options.steps));
  if (any_forward && s.steps < 2)
    throw InputError(fmt::format(
        "--steps: expected >= 2 for {} (updates fused into the next step's forward need a "
        "second step to land in; the last one is flushed), got {}",
        to_string(options.ordering), s.steps));

  OrderBuilder builder(trace, roles, s.layer_modes, s);
  builder.order(s.steps);
  builder.link();
  TensorRegistry registry(s);
  attach_layer_passes(trace, roles, registry, s);
  attach_update_passes(trace, roles, *spec, options.impl, registry, s);
  assign_memory(s);
  return s;
}

}  // namespace fusim::schedule
