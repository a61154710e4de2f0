#include "networks/networks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>

#include "core/error.h"
#include "core/suggest.h"
#include "workload/validate.h"

namespace fusim::networks {

const std::vector<std::string>& network_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v{"mlp",       "resnet18",   "resnet34",   "resnet50",
                               "resnet101", "vgg11",      "vgg16",      "mobilenet_v2",
                               "bert-base", "gpt2-small", "gpt2-medium"};
    for (const auto& n : llm_names()) v.push_back(n);  // issue 20
    return v;
  }();
  return names;
}

namespace {

workload::Trace generate(const std::string& name, const NetworkOptions& options) {
  if (is_llm(name)) {  // issue 20: llm.cpp checks its own options
    LlmConfig c = llm_config(name, options);
    return make_llm(c, options.batch, options.seq > 0 ? options.seq : c.seq, options.source);
  }
  if (options.kv_heads != 0 || options.ffn != 0 || options.vocab != 0 || options.dtype ||
      options.tied_embeddings || options.bidirectional)
    throw InputError(fmt::format(
        "--kv-heads, --ffn, --vocab, --dtype, --tied-embeddings, --bidirectional: only for the "
        "LLMs ({}), got network '{}'",
        fmt::join(llm_names(), ", "), name));
  NetworkOptions o = options;
  if (o.seq == 0) o.seq = 128;
  if (o.batch < 1)
    throw InputError(fmt::format("--batch: expected a positive integer, got {}", o.batch));
  if (o.resolution < 1)
    throw InputError(
        fmt::format("--resolution: expected a positive integer, got {}", o.resolution));
  if (o.seq < 1) throw InputError(fmt::format("--seq: expected a positive integer, got {}", o.seq));
  if (o.layers < 0 || o.hidden < 0 || o.heads < 0)
    throw InputError("--layers, --hidden, --heads: expected positive integers");
  if (name == "mlp") return make_mlp(o);
  if (name == "resnet18") return make_resnet(18, o);
  if (name == "resnet34") return make_resnet(34, o);
  if (name == "resnet50") return make_resnet(50, o);
  if (name == "resnet101") return make_resnet(101, o);
  if (name == "vgg11") return make_vgg(11, o);
  if (name == "vgg16") return make_vgg(16, o);
  if (name == "mobilenet_v2") return make_mobilenet_v2(o);
  if (name == "bert-base" || name == "gpt2-small" || name == "gpt2-medium")
    return make_transformer(transformer_preset(name), o);
  throw InputError(fmt::format("NETWORK: expected one of {}, got '{}'{}",
                               fmt::join(network_names(), ", "), name,
                               did_you_mean(name, network_names())));
}

// A trace the reader would refuse is refused here, before it is checked, written or
// simulated: `trace gen resnet18 --resolution 100000 --batch 1000` wrote a file that its own
// validator then rejected (issue 21, point 2). Counted in double: the dims are exact, their
// product may not fit 64 bits.
void check_sizes(const std::string& name, const workload::Trace& trace, const NetworkOptions& o) {
  auto elements = [](const workload::Shape& s) {
    double n = 1;
    for (auto d : s) n *= static_cast<double>(d);
    return n;
  };
  const auto limit = static_cast<double>(workload::kMaxShapeElements);
  for (const auto& l : trace.layers) {
    double most = elements(l.output);
    for (const auto& p : l.params) most = std::max(most, elements(p.shape));
    if (most > limit)
      throw InputError(fmt::format(
          "{} at --batch {}: layer {} would hold a tensor of {:.3g} elements, more than a trace "
          "may (2^40 = {:.3g}): expected a smaller --batch, --resolution, --hidden or --seq",
          name, o.batch, l.name, most, limit));
  }
}

}  // namespace

workload::Trace make_network(const std::string& name, const NetworkOptions& o) {
  workload::Trace trace = generate(name, o);
  check_sizes(name, trace, o);
  // The same checks as a file gets (shapes along every edge, params matching their op),
  // and the derived fields (output_requires_grad) every consumer relies on.
  workload::validate_and_sort(trace);
  return trace;
}

}  // namespace fusim::networks
