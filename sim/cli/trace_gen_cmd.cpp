// `fusim trace gen`: a network-zoo trace (models/networks) written as trace JSON.
#include <fmt/format.h>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/option_checks.h"
#include "core/error.h"
#include "core/memory_budget.h"
#include "core/output_file.h"
#include "networks/networks.h"
#include "workload/trace_io.h"

namespace fusim::cli {
namespace {

struct GenOptions {
  std::string network;
  std::string output;
  std::string dtype;  // LLMs (issue 20): parsed into net.dtype
  networks::NetworkOptions net;
};

// The command line that reproduces the file, recorded in its `source`.
std::string command_line(const CLI::App& gen, const GenOptions& o) {
  std::string cmd = fmt::format("fusim trace gen {} --batch {}", o.network, o.net.batch);
  if (gen.count("--resolution")) cmd += fmt::format(" --resolution {}", o.net.resolution);
  if (gen.count("--layers")) cmd += fmt::format(" --layers {}", o.net.layers);
  if (gen.count("--hidden")) cmd += fmt::format(" --hidden {}", o.net.hidden);
  if (gen.count("--heads")) cmd += fmt::format(" --heads {}", o.net.heads);
  if (gen.count("--seq")) cmd += fmt::format(" --seq {}", o.net.seq);
  // LLMs (issue 20)
  if (gen.count("--kv-heads")) cmd += fmt::format(" --kv-heads {}", o.net.kv_heads);
  if (gen.count("--ffn")) cmd += fmt::format(" --ffn {}", o.net.ffn);
  if (gen.count("--vocab")) cmd += fmt::format(" --vocab {}", o.net.vocab);
  if (gen.count("--dtype")) cmd += " --dtype " + o.dtype;
  if (o.net.tied_embeddings) cmd += " --tied-embeddings";
  if (o.net.bidirectional) cmd += " --bidirectional";
  return cmd + " -o " + o.output;
}

constexpr std::uint64_t kTraceBytesPerBlock = 16 << 10;

// Sizes that the chosen network does not have are warned about, not taken silently
// (`trace gen resnet18 --layers 3` gave the 18 layers of resnet18 without a word).
void warn_unused_sizes(const CLI::App& gen, const std::string& network) {
  const auto& zoo = networks::network_names();
  if (std::find(zoo.begin(), zoo.end(), network) == zoo.end()) return;  // refused next
  const bool mlp = network == "mlp";
  // The LLMs (issue 20) take the transformer sizes too.
  const bool transformer =
      network.rfind("bert", 0) == 0 || network.rfind("gpt2", 0) == 0 || networks::is_llm(network);
  const bool cnn = !mlp && !transformer;
  const std::string on = "on " + network;
  if (gen.count("--resolution") && !cnn)
    warn_no_effect("--resolution", on + " (the image side of resnet*, vgg*, mobilenet_v2)");
  if (gen.count("--layers") && cnn)
    warn_no_effect("--layers", on + " (the hidden layers of mlp, the blocks of transformers)");
  if (gen.count("--hidden") && cnn)
    warn_no_effect("--hidden", on + " (the width of mlp and transformers)");
  if (gen.count("--heads") && !transformer)
    warn_no_effect("--heads", on + " (the attention heads of transformers)");
  if (gen.count("--seq") && !transformer)
    warn_no_effect("--seq", on + " (the sequence length of transformers)");
}

void run_gen(const CLI::App& gen, GenOptions& o) {
  if (!o.dtype.empty()) {
    o.net.dtype = workload::parse_dtype(o.dtype);
    if (!o.net.dtype)
      throw InputError(
          fmt::format("--dtype: expected float16, bfloat16 or float32, got \"{}\"", o.dtype));
  }
  warn_unused_sizes(gen, o.network);
  // Refused before generating (10^7 blocks ran for minutes, then would have been refused by
  // the reader at kMaxJsonFileBytes anyway): a block costs ~16 KiB here, as its layers'
  // structs, JSON DOM and text (a llama block's JSON is ~6 KiB).
  if (gen.count("--layers") && o.net.layers > 0)
    check_memory_budget("--layers", "",
                        "generated trace (each block's layers in memory and as JSON)",
                        std::uint64_t(o.net.layers), kTraceBytesPerBlock);
  check_output_path(o.output, "-o");
  o.net.source = command_line(gen, o);
  workload::Trace trace = networks::make_network(o.network, o.net);
  workload::save_trace(trace, o.output);
  std::fputs(fmt::format("{}: {} ({} layers, {} params)\n", o.output, trace.model,
                         trace.layers.size(), trace.param_count())
                 .c_str(),
             stdout);
}

}  // namespace

void add_trace_gen_command(CLI::App& trace) {
  auto opt = std::make_shared<GenOptions>();
  auto* gen = trace.add_subcommand(
      "gen",
      "Generate the training-step trace of a zoo network (forward layers plus a\n"
      "cross_entropy loss), built like torchvision's definition (resnet, vgg, mobilenet_v2)\n"
      "or scripts/fusim_models.py (mlp, bert-base, gpt2-*): same layer order, names, shapes\n"
      "and parameters as scripts/capture_trace.py records from PyTorch.\n"
      "LLMs as Megatron-LM builds them: gpt (learned positions, LayerNorm, GELU MLP, dropout\n"
      "0.1) and llama (RMSNorm, RoPE, grouped-query attention, SwiGLU), sized by --layers\n"
      "--hidden --heads --kv-heads --ffn --vocab, or a preset with its published dimensions:\n"
      "gpt-22b, gpt3-175b, gpt-530b, gpt-1t, llama-2-7b/13b/70b, llama-3.1-8b/70b/405b, and\n"
      "the bidirectional masked-diffusion LMs llada-8b, dream-7b (--bidirectional makes any\n"
      "LLM one: no causal mask).\n"
      "Example:\n"
      "  fusim trace gen gpt2-small --batch 8 --seq 256 -o gpt2.json\n"
      "  fusim trace gen llama-3.1-8b --batch 1 --seq 8192 -o llama.json");
  gen->add_option("NETWORK", opt->network,
                  fmt::format("One of: {}", fmt::join(networks::network_names(), ", ")))
      ->required();
  gen->add_option("--batch", opt->net.batch, "Batch size")->default_val(32);
  gen->add_option("--resolution", opt->net.resolution,
                  "Image side in pixels for resnet*, vgg*, mobilenet_v2")
      ->default_val(224);
  gen->add_option("--layers", opt->net.layers,
                  "Transformer blocks (default: the preset's); mlp: hidden layers (default 2)")
      ->check(positive_int());
  gen->add_option("--hidden", opt->net.hidden,
                  "Transformer hidden size (default: the preset's; a multiple of --heads);\n"
                  "mlp: hidden width (default 1024)")
      ->check(positive_int());
  gen->add_option("--heads", opt->net.heads, "Attention heads (default: the preset's)")
      ->check(positive_int());
  gen->add_option("--seq", opt->net.seq,
                  "Transformer sequence length (default 128; LLM presets: their training length)")
      ->check(positive_int());
  // LLMs (issue 20)
  gen->add_option("--kv-heads", opt->net.kv_heads,
                  "LLMs: key/value heads of grouped-query attention (default: --heads)")
      ->check(positive_int());
  gen->add_option("--ffn", opt->net.ffn,
                  "LLMs: MLP width (gpt default 4 x --hidden; llama: the SwiGLU width)")
      ->check(positive_int());
  gen->add_option("--vocab", opt->net.vocab, "LLMs: vocabulary size (default: the preset's)")
      ->check(positive_int());
  gen->add_option("--dtype", opt->dtype,
                  "LLMs: float16 | bfloat16 | float32 (default: the preset's; bfloat16 for the\n"
                  "families, float16 for the Megatron GPT presets)");
  gen->add_flag("--tied-embeddings", opt->net.tied_embeddings,
                "LLMs: the LM head shares the token embedding's weight (the gpt presets' default)");
  gen->add_flag("--bidirectional", opt->net.bidirectional,
                "LLMs: no causal mask (the denoising step of a masked-diffusion LM)");
  gen->add_option("-o,--output", opt->output, "Trace JSON file to write")->required();
  gen->callback([gen, opt] { run_gen(*gen, *opt); });
}

}  // namespace fusim::cli
