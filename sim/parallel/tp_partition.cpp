#include "parallel/tp_partition.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "workload/cost.h"

namespace fusim::parallel {
namespace {
using workload::InputRef;
using workload::Layer;
using K = workload::OpKind;

// "<stem>.<i>." of a layer name, and i; nullopt when the name has no numbered part.
std::optional<std::pair<std::string, int>> block_key(const std::string& name) {
  std::size_t start = 0;
  while (true) {
    std::size_t dot = name.find('.', start);
    if (dot == std::string::npos) return std::nullopt;
    std::size_t end = name.find('.', dot + 1);
    if (end == std::string::npos) return std::nullopt;
    const std::string part = name.substr(dot + 1, end - dot - 1);
    if (!part.empty() && part.size() < 7 &&
        std::all_of(part.begin(), part.end(), [](char c) { return std::isdigit(c) != 0; }))
      return std::make_pair(name.substr(0, end + 1), std::stoi(part));
    start = dot + 1;
  }
}

// The vocabulary: the width of the logits the loss reads (through views), 0 without a loss.
std::int64_t vocabulary(const workload::Trace& trace) {
  for (const auto& l : trace.layers)
    if (l.op == K::CrossEntropy) return workload::input_shape(trace, l.inputs.at(0)).back();
  return 0;
}
}  // namespace

std::vector<TransformerBlock> transformer_blocks(const workload::Trace& trace) {
  // Layers without a numbered name (fx's "add_3") between two layers of a run belong to the
  // block before them (a block's residual add); after the run's last block they do not.
  std::vector<TransformerBlock> best, run;
  std::string stem;
  auto close = [&] {
    if (run.size() > best.size()) best = run;
    run.clear();
  };
  for (int i = 0; i < int(trace.layers.size()); ++i) {
    auto key = block_key(trace.layers[std::size_t(i)].name);
    if (!key) continue;
    auto& [prefix, index] = *key;
    if (!run.empty() && run.back().prefix == prefix) {
      run.back().last = i;
      continue;
    }
    const std::string this_stem = prefix.substr(0, prefix.rfind('.', prefix.size() - 2) + 1);
    if (!run.empty() && this_stem == stem && index == int(run.size())) {
      run.back().last = i - 1;  // the unnumbered layers since belong to the block before
      run.push_back({prefix, i, i});
      continue;
    }
    close();
    if (index != 0) continue;
    stem = this_stem;
    run.push_back({prefix, i, i});
  }
  close();
  return best;
}

std::vector<int> chunk_first_layers(const workload::Trace& trace, const ParallelPlan& plan) {
  std::vector<int> starts{0};
  if (plan.chunks() == 1) return starts;
  const auto blocks = transformer_blocks(trace);
  const auto counts = blocks_per_chunk(plan, int(blocks.size()));
  int block = 0;
  for (std::size_t k = 0; k + 1 < counts.size(); ++k) {
    block += counts[k];
    starts.push_back(blocks.at(std::size_t(block)).first);
  }
  return starts;
}

TpPartition tp_partition(const workload::Trace& trace) {
  const std::size_t n = trace.layers.size();
  TpPartition tp;
  tp.output_split.assign(n, false);
  tp.param_split.resize(n);
  const std::int64_t vocab = vocabulary(trace);
  auto split_in = [&](const InputRef& r) {
    return r.source == InputRef::Source::Layer && tp.output_split[std::size_t(r.index)];
  };
  for (std::size_t i = 0; i < n; ++i) {
    const Layer& l = trace.layers[i];
    tp.param_split[i].assign(l.params.size(), false);
    bool any = false, all = !l.inputs.empty();
    for (const auto& in : l.inputs) {
      any = any || split_in(in);
      all = all && split_in(in);
    }
    switch (l.op) {
      case K::Linear:
        if (!any) {  // column-parallel: weight rows and bias split, output split
          tp.output_split[i] = true;
          std::fill(tp.param_split[i].begin(), tp.param_split[i].end(), true);
        } else if (!l.params.empty()) {  // row-parallel: weight columns split, bias whole
          tp.param_split[i][0] = true;
        }
        break;
      case K::Embedding:  // vocabulary-parallel when its rows are the logits' width
        if (!l.params.empty() && vocab > 0 && l.params[0].shape.at(0) == vocab)
          tp.param_split[i][0] = true;
        break;
      case K::ScaledDotProductAttention:
      case K::Rope:
      case K::Swiglu:
      case K::Gelu:
      case K::Silu:
      case K::Relu:
      case K::Relu6:
      case K::Sigmoid:
      case K::Tanh:
      case K::Dropout:
      case K::Reshape:
      case K::Flatten:
      case K::Add:
      case K::Mul:
        tp.output_split[i] = all;  // a split operand with a whole one: replicated (gathered)
        break;
      case K::CrossEntropy:
        tp.output_split[i] = any;  // vocabulary-parallel cross-entropy (its log-probs split)
        break;
      default:
        break;  // norms, convolutions, pools, softmax, matmul, concat, permute: replicated
    }
    bool whole = false;
    for (std::size_t p = 0; p < l.params.size(); ++p)
      whole = whole || (!tp.param_split[i][p] && workload::numel(l.params[p].shape) > 1 &&
                        l.op != K::LayerNorm && l.op != K::RmsNorm && l.op != K::Linear);
    if (whole) tp.replicated_params.push_back(int(i));
  }
  return tp;
}

ModelFacts model_facts(const workload::Trace& trace) {
  ModelFacts f;
  f.model = trace.model;
  f.blocks = int(transformer_blocks(trace).size());
  for (const auto& l : trace.layers)
    if (l.op == K::ScaledDotProductAttention && f.heads == 0) {
      f.heads = l.attrs.heads;
      f.kv_heads = workload::kv_heads_of(l.attrs);
    }
  // Token models: the data input is [N, S] of indices.
  if (!trace.inputs.empty() && trace.inputs[0].shape.size() == 2 &&
      !workload::is_floating(trace.inputs[0].dtype))
    f.seq = trace.inputs[0].shape[1];
  f.vocab = vocabulary(trace);
  const TpPartition tp = tp_partition(trace);
  for (std::size_t i = 0; i < trace.layers.size(); ++i)
    if (trace.layers[i].op == K::Linear && tp.output_split[i])
      f.split_widths.push_back(trace.layers[i].output.back());
  std::sort(f.split_widths.begin(), f.split_widths.end());
  f.split_widths.erase(std::unique(f.split_widths.begin(), f.split_widths.end()),
                       f.split_widths.end());
  return f;
}

}  // namespace fusim::parallel
