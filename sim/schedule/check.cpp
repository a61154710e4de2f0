// check_schedule: proves a schedule correct against its trace. Deliberately separate from
// the builder: it re-derives from the trace alone which ops must exist and which edges
// every correct ordering needs, then checks the schedule's own deps (transitively), its
// issue order, its U ops' tensors and its tensor lifetimes.
#include <fmt/format.h>
#include <map>
#include <set>
#include <tuple>

#include "schedule/op_graph.h"
#include "schedule/schedule.h"

namespace fusim::schedule {
namespace {
using workload::InputRef;

struct LayerFacts {
  bool loss = false, trained = false, grad_out = false, grad_in = false;
  std::vector<int> consumers;
  std::set<std::string> params;  // trained param names (its own: the ones its U updates)
  // Weight tying (issue 20): has_weight_grad also counts trained params tied to another
  // layer's (their Bw adds into the owner's grad; the owner's U waits for it).
  bool has_weight_grad = false;
  std::vector<int> tied_users, tied_owners;
};

std::vector<LayerFacts> layer_facts(const workload::Trace& trace) {
  std::vector<LayerFacts> f(trace.layers.size());
  for (std::size_t i = 0; i < trace.layers.size(); ++i) {
    const auto& l = trace.layers[i];
    f[i].loss = l.op == workload::OpKind::CrossEntropy;
    for (const auto& p : l.params) {
      if (p.requires_grad && p.tied_to.empty()) f[i].params.insert(p.name);
      f[i].has_weight_grad = f[i].has_weight_grad || p.requires_grad;
    }
    // Params of a layer no gradient reaches get no gradient and are never updated
    // (Layer::output_requires_grad).
    f[i].has_weight_grad = f[i].has_weight_grad && l.output_requires_grad;
    f[i].trained = !f[i].params.empty() && l.output_requires_grad;
    for (const auto& in : l.inputs)
      if (in.source == InputRef::Source::Layer) {
        f[std::size_t(in.index)].consumers.push_back(int(i));
        f[i].grad_in = f[i].grad_in || f[std::size_t(in.index)].grad_out;
      }
    // Integer and bool outputs carry no gradient, so nothing flows back through them.
    f[i].grad_out = (f[i].has_weight_grad || f[i].grad_in) && l.output_requires_grad;
    if (!f[i].grad_out) f[i].grad_in = false;
    if (f[i].loss) f[i].grad_in = false;  // L seeds the backward itself
  }
  for (std::size_t i = 0; i < trace.layers.size(); ++i)
    for (const auto& p : trace.layers[i].params) {
      if (p.tied_to.empty() || !p.requires_grad) continue;
      for (std::size_t o = 0; o < trace.layers.size(); ++o)
        if (f[o].params.count(p.tied_to)) {
          f[i].tied_owners.push_back(int(o));
          f[o].tied_users.push_back(int(i));
        }
    }
  return f;
}

class Checker {
 public:
  Checker(const workload::Trace& trace, const Schedule& s)
      : trace_(trace), s_(s), facts_(layer_facts(trace)) {}

  std::vector<std::string> run() {
    if (!structure()) return errors_;
    if (!issue_order()) return errors_;
    completeness();
    reachability();
    required_edges();
    update_math();
    tensor_accesses();
    return errors_;
  }

 private:
  std::string name(int id) const {
    const Op& op = s_.ops[std::size_t(id)];
    return fmt::format("{}#{} ({} {}, step {})", to_string(op.kind), id, to_string(op.kind),
                       trace_.layers[std::size_t(op.layer)].name, op.step);
  }
  std::string key_name(OpKind kind, int layer, int step) const {
    return fmt::format("{} {} (step {})", to_string(kind), trace_.layers[std::size_t(layer)].name,
                       step);
  }
  void fail(std::string message) { errors_.push_back(std::move(message)); }

  bool structure() {
    const int n = int(s_.ops.size()), layers = int(trace_.layers.size());
    if (s_.steps < 1) fail(fmt::format("steps is {}, expected >= 1", s_.steps));
    for (int k = 0; k < n; ++k) {
      const Op& op = s_.ops[std::size_t(k)];
      if (op.id != k) fail(fmt::format("op at position {} has id {}", k, op.id));
      if (op.layer < 0 || op.layer >= layers) {
        fail(fmt::format("op #{} names layer {}, the trace has {} layers", k, op.layer, layers));
        continue;
      }
      if (op.step < 0 || op.step >= s_.steps)
        fail(fmt::format("{}: step outside 0..{}", name(k), s_.steps - 1));
      const auto& f = facts_[std::size_t(op.layer)];
      bool ok = true;
      switch (op.kind) {
        case OpKind::Forward:
          ok = !f.loss;
          break;
        case OpKind::Loss:
          ok = f.loss;
          break;
        case OpKind::BackwardInput:
          ok = f.grad_in;
          break;
        case OpKind::BackwardWeight:
          ok = f.has_weight_grad;
          break;
        case OpKind::Update:
          ok = f.trained;
          break;
      }
      if (!ok)
        fail(fmt::format("{}: layer {} ({}) has no such op", name(k),
                         trace_.layers[std::size_t(op.layer)].name,
                         workload::to_string(trace_.layers[std::size_t(op.layer)].op)));
      for (int d : op.deps)
        if (d < 0 || d >= n)
          fail(fmt::format("{}: dependency #{} is not an op", name(k), d));
        else if (d == k)
          fail(fmt::format("{}: depends on itself", name(k)));
    }
    return errors_.empty();
  }

  // Every dependency must be issued before its dependent; the deps must form a DAG.
  bool issue_order() {
    auto graph = make_op_graph(s_);
    auto cycle = find_cycle(graph);
    if (!cycle.empty()) {
      std::string path;
      for (int v : cycle) path += name(v) + " -> ";
      fail("dependency cycle: " + path + name(cycle.front()));
      return false;
    }
    for (const auto& op : s_.ops)
      for (int d : op.deps)
        if (d > op.id)
          fail(fmt::format("edge {} -> {} points backwards in the issue order: {} is issued first",
                           name(d), name(op.id), name(op.id)));
    return errors_.empty();
  }

  void completeness() {
    for (const auto& op : s_.ops) ops_[{op.kind, op.layer, op.step}].push_back(op.id);
    for (int t = 0; t < s_.steps; ++t)
      for (std::size_t i = 0; i < facts_.size(); ++i) {
        const auto& f = facts_[i];
        std::vector<std::pair<OpKind, const char*>> expected;
        expected.push_back({f.loss ? OpKind::Loss : OpKind::Forward, "every layer runs forward"});
        if (f.grad_in) expected.push_back({OpKind::BackwardInput, "its input needs a gradient"});
        if (f.has_weight_grad)
          expected.push_back({OpKind::BackwardWeight, "it has trained params"});
        if (f.trained)
          expected.push_back({OpKind::Update, "each param is updated exactly once per step"});
        for (auto [kind, why] : expected) {
          auto it = ops_.find({kind, int(i), t});
          int count = it == ops_.end() ? 0 : int(it->second.size());
          if (count == 0)
            fail(fmt::format("missing op {}: {}", key_name(kind, int(i), t), why));
          else if (count > 1)
            fail(fmt::format("{} issued {} times ({} and {}): {}", key_name(kind, int(i), t), count,
                             name(it->second[0]), name(it->second[1]), why));
        }
      }
  }

  void reachability() {
    const std::size_t n = s_.ops.size(), words = (n + 63) / 64;
    ancestors_.assign(n, std::vector<std::uint64_t>(words, 0));
    for (std::size_t k = 0; k < n; ++k)
      for (int d : s_.ops[k].deps) {  // deps precede k (issue_order passed)
        auto& a = ancestors_[k];
        const auto& b = ancestors_[std::size_t(d)];
        for (std::size_t w = 0; w < words; ++w) a[w] |= b[w];
        a[std::size_t(d) / 64] |= std::uint64_t(1) << (std::size_t(d) % 64);
      }
  }
  bool reaches(int from, int to) const {
    return (ancestors_[std::size_t(to)][std::size_t(from) / 64] >> (std::size_t(from) % 64)) & 1;
  }
  int op_of(OpKind kind, int layer, int step) const {
    if (kind == OpKind::Forward && facts_[std::size_t(layer)].loss) kind = OpKind::Loss;
    auto it = ops_.find({kind, layer, step});
    return it == ops_.end() ? -1 : it->second.front();
  }
  void need(int from, int to, const std::string& why) {
    if (from < 0 || to < 0) return;  // reported as missing ops
    if (!reaches(from, to))
      fail(fmt::format("missing edge {} -> {}: {}", name(from), name(to), why));
  }

  void required_edges() {
    for (const auto& op : s_.ops) {
      const auto& layer = trace_.layers[std::size_t(op.layer)];
      const auto& f = facts_[std::size_t(op.layer)];
      const int t = op.step;
      switch (op.kind) {
        case OpKind::Forward:
        case OpKind::Loss:
          for (const auto& in : layer.inputs)
            if (in.source == InputRef::Source::Layer)
              need(op_of(OpKind::Forward, in.index, t), op.id,
                   fmt::format("it reads {}.out before its producer ran",
                               trace_.layers[std::size_t(in.index)].name));
          if (f.trained && t > 0)
            need(op_of(OpKind::Update, op.layer, t - 1), op.id,
                 fmt::format("F reads the params of {} while their update from step {} is "
                             "pending",
                             layer.name, t - 1));
          for (int o : f.tied_owners)
            if (t > 0)
              need(op_of(OpKind::Update, o, t - 1), op.id,
                   fmt::format("F reads the param of {} tied to {} while its update from step {} "
                               "is pending",
                               layer.name, trace_.layers[std::size_t(o)].name, t - 1));
          break;
        case OpKind::BackwardInput:
        case OpKind::BackwardWeight:
          need(op_of(OpKind::Forward, op.layer, t), op.id,
               "backward reads activations its forward saves");
          for (int c : f.consumers) {
            // A consumer with an untracked (integer, bool) result sends no gradient back.
            if (!facts_[std::size_t(c)].loss && !facts_[std::size_t(c)].grad_in) continue;
            need(op_of(facts_[std::size_t(c)].loss ? OpKind::Loss : OpKind::BackwardInput, c, t),
                 op.id,
                 fmt::format("it reads the gradient of {}.out, which {} produces", layer.name,
                             trace_.layers[std::size_t(c)].name));
          }
          if (op.kind == OpKind::BackwardWeight && t > 0)
            need(op_of(OpKind::Update, op.layer, t - 1), op.id,
                 fmt::format("Bw overwrites the grads of {} before the update of step {} read them",
                             layer.name, t - 1));
          if (op.kind == OpKind::BackwardWeight)
            for (int o : f.tied_owners)
              if (t > 0)
                need(op_of(OpKind::Update, o, t - 1), op.id,
                     fmt::format("Bw of {} adds into the grad of {} before its update of step {} "
                                 "read it",
                                 layer.name, trace_.layers[std::size_t(o)].name, t - 1));
          break;
        case OpKind::Update:
          need(op_of(OpKind::BackwardWeight, op.layer, t), op.id,
               fmt::format("the grads of {} are not final before U reads them", layer.name));
          if (f.grad_in)
            need(
                op_of(OpKind::BackwardInput, op.layer, t), op.id,
                fmt::format("Bx reads the step-{} weights of {} that U overwrites", t, layer.name));
          for (int u : f.tied_users) {
            const auto& user = trace_.layers[std::size_t(u)].name;
            need(op_of(OpKind::BackwardWeight, u, t), op.id,
                 fmt::format("the grad of {} tied in {} is not final before U reads it", layer.name,
                             user));
            if (facts_[std::size_t(u)].grad_in)
              need(op_of(OpKind::BackwardInput, u, t), op.id,
                   fmt::format("Bx of {} reads the step-{} tied weight of {} that U overwrites",
                               user, t, layer.name));
          }
          break;
      }
    }
  }

  // Same math as eager: U_i(t) updates exactly layer i's trained params, from step t's grads.
  void update_math() {
    for (const auto& op : s_.ops) {
      if (op.kind != OpKind::Update) continue;
      std::set<std::string> written, grads;
      for (const auto& pass : op.passes)
        for (auto a : pass.accesses) {
          if (a.tensor < 0 || a.tensor >= int(s_.tensors.size())) continue;
          const Tensor& t = s_.tensors[std::size_t(a.tensor)];
          if (t.category == TensorCategory::Weights && a.mode != AccessMode::Read)
            written.insert(t.name);
          if (t.category == TensorCategory::Grads) {
            grads.insert(t.name);
            // (step -1: a persistent grad buffer, one tensor for every step)
            if (t.step >= 0 && t.step != op.step)
              fail(fmt::format(
                  "{} reads {} of step {}: the update of step {} must use that step's grads",
                  name(op.id), t.name, t.step, op.step));
          }
        }
      const auto& params = facts_[std::size_t(op.layer)].params;
      if (written != params)
        fail(fmt::format("{} writes params {{{}}}, layer {} trains {{{}}}", name(op.id),
                         fmt::join(written, ", "), trace_.layers[std::size_t(op.layer)].name,
                         fmt::join(params, ", ")));
      for (const auto& p : params)
        if (!grads.count(p + ".grad")) fail(fmt::format("{} never reads {}.grad", name(op.id), p));
    }
  }

  // No op reads a per-step tensor before some op wrote it, or outside its lifetime.
  void tensor_accesses() {
    std::set<int> written;
    for (const auto& op : s_.ops)
      for (const auto& pass : op.passes)
        for (auto a : pass.accesses) {
          if (a.tensor < 0 || a.tensor >= int(s_.tensors.size())) {
            fail(
                fmt::format("{} accesses tensor #{}, which does not exist", name(op.id), a.tensor));
            continue;
          }
          const Tensor& t = s_.tensors[std::size_t(a.tensor)];
          if (t.step < 0 || t.category == TensorCategory::Inputs) continue;
          if (op.id < t.alloc_op || (t.free_op >= 0 && op.id > t.free_op))
            fail(fmt::format("{} accesses {} (step {}) outside its lifetime #{}..#{}", name(op.id),
                             t.name, t.step, t.alloc_op, t.free_op));
          if (a.mode != AccessMode::Write && !written.count(t.id))
            fail(fmt::format("{} reads {} (step {}) before any op wrote it", name(op.id), t.name,
                             t.step));
          if (a.mode != AccessMode::Read) written.insert(t.id);
        }
  }

  const workload::Trace& trace_;
  const Schedule& s_;
  std::vector<LayerFacts> facts_;
  std::vector<std::string> errors_;
  std::map<std::tuple<OpKind, int, int>, std::vector<int>> ops_;
  std::vector<std::vector<std::uint64_t>> ancestors_;
};
}  // namespace

std::vector<std::string> check_schedule(const workload::Trace& trace, const Schedule& schedule) {
  return Checker(trace, schedule).run();
}

}  // namespace fusim::schedule
