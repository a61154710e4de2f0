// Graph-level checks of a trace (ids, edges, acyclicity, the loss as the only sink) on a
// Boost.Graph of the layers, the per-layer checks in topological order, then the sort.
#include "workload/validate.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/depth_first_search.hpp>
#include <map>
#include <optional>

#include "core/error.h"
#include "workload/shape_rules.h"

namespace fusim::workload {
namespace {

// Edges point from a consumer to its producers, so a depth-first search's finishing order
// lists every producer before its consumers: a topological order that, with roots tried
// in file order, keeps a file that is already sorted exactly as it is.
using LayerGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
using Vertex = LayerGraph::vertex_descriptor;
using Edge = LayerGraph::edge_descriptor;

struct TopoVisitor : boost::default_dfs_visitor {
  std::vector<Vertex>* finished;
  std::vector<Vertex>* parent;
  std::optional<std::pair<Vertex, Vertex>>* back_edge_found;

  void tree_edge(Edge e, const LayerGraph& g) const {
    (*parent)[boost::target(e, g)] = boost::source(e, g);
  }
  void back_edge(Edge e, const LayerGraph& g) const {
    if (!*back_edge_found)
      *back_edge_found = std::make_pair(boost::source(e, g), boost::target(e, g));
  }
  void finish_vertex(Vertex v, const LayerGraph&) const { finished->push_back(v); }
};

class GraphCheck {
 public:
  explicit GraphCheck(Trace& trace) : t_(trace), file_(trace_display_name(trace)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& expected) const {
    throw InputError(file_, where, expected);
  }
  std::string at(std::size_t i, std::string_view rest = "") const {
    return fmt::format("layers[{}]{}{}", i, rest.empty() ? "" : ".", rest);
  }

  void ids_and_edges() const {
    std::map<int, std::size_t> seen;
    for (std::size_t i = 0; i < t_.layers.size(); ++i) {
      auto [it, fresh] = seen.emplace(t_.layers[i].id, i);
      if (!fresh)
        fail(at(i, "id"), fmt::format("a unique layer id, got {} (also layers[{}].id)",
                                      t_.layers[i].id, it->second));
    }
    for (std::size_t i = 0; i < t_.layers.size(); ++i) {
      const Layer& l = t_.layers[i];
      // Every layer has an input, so in an acyclic graph following inputs backwards always
      // ends at a model input or at a source: a parameter layer (a view of its parameter)
      // or a generic_data_movement with no input (a tensor the forward makes: zeros, a
      // random mask). Nothing else can start a path.
      if (l.inputs.empty() && !is_source(l.op))
        fail(at(i, "inputs"),
             fmt::format("at least one input for {} (only parameter and generic_data_movement "
                         "layers are sources), got []",
                         to_string(l.op)));
      for (std::size_t j = 0; j < l.inputs.size(); ++j) {
        const InputRef& r = l.inputs[j];
        std::size_t limit =
            r.source == InputRef::Source::Layer ? t_.layers.size() : t_.inputs.size();
        if (r.index < 0 || static_cast<std::size_t>(r.index) >= limit)
          fail(at(i, fmt::format("inputs[{}]", j)),
               fmt::format("a layer or model input that exists, got index {}", r.index));
      }
    }
  }

  std::vector<std::size_t> topological_order() const {
    LayerGraph g(t_.layers.size());
    for (std::size_t i = 0; i < t_.layers.size(); ++i)
      for (const InputRef& r : t_.layers[i].inputs)
        if (r.source == InputRef::Source::Layer)
          boost::add_edge(i, static_cast<Vertex>(r.index), g);
    std::vector<Vertex> finished, parent(t_.layers.size());
    std::optional<std::pair<Vertex, Vertex>> back;
    TopoVisitor visitor;
    visitor.finished = &finished;
    visitor.parent = &parent;
    visitor.back_edge_found = &back;
    boost::depth_first_search(g, boost::visitor(visitor));
    if (back) {
      // back edge u -> v: u reads v, and v reaches u along tree edges (each "reads").
      // In data-flow order the cycle is v feeds u feeds parent(u) ... feeds v.
      auto [u, v] = *back;
      std::vector<int> ids{t_.layers[v].id};
      for (Vertex w = u; w != v; w = parent[w]) ids.push_back(t_.layers[w].id);
      ids.push_back(t_.layers[v].id);
      fail(at(v, "inputs"), fmt::format("an acyclic layer graph, got a cycle through layer ids {}",
                                        fmt::join(ids, " -> ")));
    }
    return {finished.begin(), finished.end()};
  }

  void loss_is_only_sink() const {
    std::optional<std::size_t> loss;
    for (std::size_t i = 0; i < t_.layers.size(); ++i) {
      if (t_.layers[i].op != OpKind::CrossEntropy) continue;
      if (loss)
        fail(at(i, "op"), fmt::format("exactly one cross_entropy layer (the loss), got a second "
                                      "one (also layers[{}])",
                                      *loss));
      loss = i;
    }
    if (!loss) fail("layers", "exactly one cross_entropy layer (the loss), got none");
    std::vector<int> consumers(t_.layers.size(), 0);
    std::vector<int> input_uses(t_.inputs.size(), 0);
    for (std::size_t i = 0; i < t_.layers.size(); ++i)
      for (std::size_t j = 0; j < t_.layers[i].inputs.size(); ++j) {
        const InputRef& r = t_.layers[i].inputs[j];
        auto idx = static_cast<std::size_t>(r.index);
        if (r.source == InputRef::Source::ModelInput) {
          ++input_uses[idx];
          continue;
        }
        if (idx == *loss)
          fail(at(i, fmt::format("inputs[{}]", j)),
               fmt::format("a layer other than the loss (layer {} is the only sink), got it",
                           t_.layers[idx].id));
        ++consumers[idx];
      }
    for (std::size_t i = 0; i < t_.layers.size(); ++i)
      if (i != *loss && consumers[i] == 0)
        fail(at(i),
             fmt::format("its output to be used by another layer (the loss, layer {}, must be "
                         "the only sink), got no consumer of layer {}",
                         t_.layers[*loss].id, t_.layers[i].id));
    for (std::size_t k = 0; k < t_.inputs.size(); ++k)
      if (input_uses[k] == 0)
        fail(fmt::format("inputs[{}]", k),
             fmt::format("a model input used by some layer, got \"{}\" unused", t_.inputs[k].name));
  }

  void model_inputs() const {
    if (t_.inputs.empty()) fail("inputs", "at least one model input, got []");
    std::map<std::string, std::size_t> names;
    for (std::size_t k = 0; k < t_.inputs.size(); ++k) {
      auto [it, fresh] = names.emplace(t_.inputs[k].name, k);
      if (!fresh)
        fail(fmt::format("inputs[{}].name", k),
             fmt::format("a unique input name, got \"{}\" (also inputs[{}])", it->first,
                         it->second));
    }
    const Shape& data = t_.inputs[0].shape;
    if (data.empty() || data[0] != t_.batch)
      fail("inputs[0].shape", fmt::format("a shape whose first dim is the batch {}, got {}",
                                          t_.batch, to_string(data)));
  }

  void params_unique() const {
    std::map<std::string, std::string> names;
    for (std::size_t i = 0; i < t_.layers.size(); ++i)
      for (std::size_t j = 0; j < t_.layers[i].params.size(); ++j) {
        auto where = at(i, fmt::format("params[{}].name", j));
        auto [it, fresh] = names.emplace(t_.layers[i].params[j].name, where);
        if (!fresh)
          fail(where, fmt::format("a parameter name used once (tie weights with \"tied_to\"), "
                                  "got \"{}\" (also {})",
                                  it->first, it->second));
      }
    tied_params();
  }

  // Weight tying (issue 20): "tied_to" names a param of another layer that is not tied
  // itself, with the same shape, dtype and requires_grad: the two are one tensor.
  void tied_params() const {
    std::map<std::string, std::pair<std::size_t, const TensorSpec*>> owners;
    for (std::size_t i = 0; i < t_.layers.size(); ++i)
      for (const auto& p : t_.layers[i].params)
        if (p.tied_to.empty()) owners[p.name] = {i, &p};
    for (std::size_t i = 0; i < t_.layers.size(); ++i)
      for (std::size_t j = 0; j < t_.layers[i].params.size(); ++j) {
        const TensorSpec& p = t_.layers[i].params[j];
        if (p.tied_to.empty()) continue;
        auto where = at(i, fmt::format("params[{}].tied_to", j));
        auto it = owners.find(p.tied_to);
        if (it == owners.end())
          fail(where,
               fmt::format("the name of an untied param of another layer, got \"{}\"", p.tied_to));
        const TensorSpec& o = *it->second.second;
        if (it->second.first == i)
          fail(where, fmt::format("a param of another layer, got \"{}\" of this layer", p.tied_to));
        if (o.shape != p.shape || o.dtype != p.dtype || o.requires_grad != p.requires_grad)
          fail(where, fmt::format("a param of the same shape, dtype and requires_grad ({} {}{}), "
                                  "got \"{}\" ({} {}{})",
                                  to_string(p.shape), to_string(p.dtype),
                                  p.requires_grad ? "" : " frozen", p.tied_to, to_string(o.shape),
                                  to_string(o.dtype), o.requires_grad ? "" : " frozen"));
      }
  }

  void shapes(const std::vector<std::size_t>& order) const {
    for (std::size_t i : order) {
      const Layer& l = t_.layers[i];
      InferredOutput out = check_layer(t_, l, i);
      if (out.shape != l.output)
        fail(at(i, "output"), fmt::format("{} ({}), got {}", to_string(out.shape), out.formula,
                                          to_string(l.output)));
      if (out.dtype != l.output_dtype)
        fail(at(i, "output_dtype"),
             fmt::format("{} (what {} produces here), got {}", to_string(out.dtype),
                         to_string(l.op), to_string(l.output_dtype)));
    }
  }

 private:
  Trace& t_;
  std::string file_;
};

}  // namespace

void validate_and_sort(Trace& trace) {
  GraphCheck check(trace);
  if (trace.batch < 1)
    throw InputError(trace_display_name(trace), "batch",
                     fmt::format("a positive integer, got {}", trace.batch));
  check.model_inputs();
  check.ids_and_edges();
  std::vector<std::size_t> order = check.topological_order();
  check.loss_is_only_sink();
  check.params_unique();
  check.shapes(order);

  // Reorder and remap producer positions.
  std::vector<int> new_position(trace.layers.size());
  for (std::size_t k = 0; k < order.size(); ++k) new_position[order[k]] = static_cast<int>(k);
  std::vector<Layer> sorted;
  sorted.reserve(order.size());
  for (std::size_t i : order) sorted.push_back(std::move(trace.layers[i]));
  for (Layer& l : sorted) {
    for (InputRef& r : l.inputs)
      if (r.source == InputRef::Source::Layer)
        r.index = new_position[static_cast<std::size_t>(r.index)];
  }
  // Autograd tracks a floating-point tensor when any of its inputs is tracked or it is made
  // from a parameter with requires_grad (torch.autograd semantics: integer and bool results,
  // a comparison's, are never tracked).
  for (Layer& l : sorted) {
    bool tracked = false;
    for (const TensorSpec& p : l.params) tracked = tracked || p.requires_grad;
    for (const InputRef& r : l.inputs) {
      auto idx = static_cast<std::size_t>(r.index);
      tracked = tracked || (r.source == InputRef::Source::Layer ? sorted[idx].output_requires_grad
                                                                : trace.inputs[idx].requires_grad);
    }
    l.output_requires_grad = tracked && is_floating(l.output_dtype);
  }
  // Backward runs only between the loss and the leaves along tracked tensors (torch.autograd
  // executes the nodes the loss reaches): a tracked layer read only by untracked ones (a
  // comparison, an integer cast) gets no gradient, so its backward and its params' update
  // never run. Consumers come after their producers, so one pass from the end settles it.
  std::vector<bool> reached(sorted.size(), false);
  for (std::size_t k = sorted.size(); k-- > 0;) {
    Layer& l = sorted[k];
    if (l.op != OpKind::CrossEntropy) l.output_requires_grad = l.output_requires_grad && reached[k];
    if (!l.output_requires_grad) continue;
    for (const InputRef& r : l.inputs)
      if (r.source == InputRef::Source::Layer) reached[static_cast<std::size_t>(r.index)] = true;
  }
  trace.layers = std::move(sorted);
}

}  // namespace fusim::workload
