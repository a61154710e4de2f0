#include "cli/shared_options.h"

#include <algorithm>
#include <sstream>

namespace fusim::cli {

// The meanings, in the order a reader meets the options. --steps had three (simulated
// steps in simulate and sweep, unrolled steps in schedule, measured steps in run and
// validate): it is now the steps of the simulated schedule everywhere, and the measured
// steps are --measured-steps (--steps stays their spelling in run and validate for a
// release, with a warning), as --block became --steps-per-block there.
const std::vector<SharedOption>& shared_options() {
  static const std::vector<SharedOption> table = {
      {"--trace",
       "The workload: a layer trace JSON (traces/SCHEMA.md) or a zoo network name (mlp, "
       "resnet18, ...: generated as `fusim trace gen NAME` writes it) wherever a layer trace "
       "is read; cache: an address trace; dram: a DRAMsim3 request trace."},
      {"--batch",
       "The batch size of a zoo network (default 32): trace gen's network, or the one --trace "
       "names (a trace file keeps its own batch: --batch then warns and changes nothing); "
       "sweep: of its zoo --trace values, unless batch= is an axis of the grid."},
      {"--machine",
       "A machine model: a preset of models/machines or a JSON path; host: the model `fusim "
       "calibrate` wrote of this host."},
      {"--ordering",
       "Where each layer's optimizer update runs: eager (after the whole backward), "
       "backward-fused (right after the layer's gradient), forward-fused (before the layer's "
       "next forward), mixed (per layer, from --mixed); all, or a comma list: one result per "
       "ordering (memory: one ordering)."},
      {"--mixed", "The per-layer ordering JSON of --ordering mixed."},
      {"--optimizer", "The optimizer whose update is scheduled, simulated or run (torch.optim's)."},
      {"--impl",
       "The optimizer update's implementation, as torch.optim names them: loop | foreach | "
       "fused (docs/optimizer_update.md)."},
      {"--execution",
       "The execution predicted or measured: layers (each op its own call) | graph (a PyTorch "
       "user's loop, loss.backward()), as `fusim run --execution` runs it."},
      {"--steps",
       "Training steps simulated: the steps of the schedule (schedule: unrolled; simulate, "
       "sweep: simulated), the --warmup steps and forward-fused's final flush step included. "
       "In run and validate, the deprecated spelling of --measured-steps (with a warning); "
       "validate simulates --sim-steps."},
      {"--measured-steps",
       "Training steps measured per ordering on real hardware (run, validate; profile "
       "--in-step: eager steps), after the --warmup steps; sampling may add rounds of "
       "--steps-per-block steps (--max-time)."},
      {"--warmup",
       "Leading steps executed but not measured: simulate and sweep: the first --warmup of "
       "the --steps; run, validate and profile --in-step: before the --measured-steps."},
      {"--steps-per-block",
       "Measured steps of one ordering before the next one runs (run and validate interleave "
       "the orderings in blocks)."},
      {"--block",
       "simulate: the unit of --fidelity block (a power-of-two size). In run and validate, "
       "the deprecated spelling of --steps-per-block (with a warning)."},
      {"--fidelity",
       "How the memory system is simulated: line (every 64 B line through caches and DRAM, the "
       "reference) | block (bulk units, for sweeps) | tensor (range residency per cache level "
       "and DRAM curves, no lines); cache takes line and block."},
      {"--profile",
       "A measured per-op profile (`fusim profile` of the same trace, --optimizer and --impl): "
       "each op's compute time from its measurement, its memory time simulated; a step profile "
       "(profile --in-step) gives every eager op its time measured in the step."},
      {"--set",
       "PATH=VALUE: a machine field overridden before simulating (caches.LLC.size=32MiB, "
       "dram.channels=4); sweep: a comma list of values is an axis of the grid."},
      {"--device", "Where the backend measures: cpu | cuda (a CUDA libtorch and a GPU)."},
      {"--threads",
       "Intra-op threads of the measurement; 0: the threads the prediction assumes (validate: "
       "the --machine model's threads_per_op; profile: every allowed core; calibrate: every "
       "allowed core, written as the machine's threads_per_op; run: libtorch's default)."},
      {"--seed", "The seed of every random choice: the same seed gives the same output."},
      {"--json", "JSON instead of the table (docs/output_schema.md)."},
      {"--csv",
       "CSV instead of the table: the --json records' keys as columns, full precision, empty "
       "for unknown (docs/output_schema.md)."},
      {"--output",
       "-o: the file written, its folder checked before any work; whole, through a "
       "temporary file renamed over it (sweep: row by row, continued by --resume)."},
      {"--max-memory",
       "Refuse, before allocating, a configuration whose simulated state would need more host "
       "memory than SIZE, naming the field and the need."},
  };
  return table;
}

namespace {

// `text` as lines of at most `width` columns, the first after `lead`, the others indented.
std::string wrapped(const std::string& lead, const std::string& text, std::size_t width,
                    const std::string& indent) {
  std::istringstream words(text);
  std::string out = lead, line = lead, word;
  bool first = true;
  while (words >> word) {
    const std::string sep = first ? "" : " ";
    if (!first && line.size() + 1 + word.size() > width) {
      out += "\n" + indent + word;
      line = indent + word;
    } else {
      out += sep + word;
      line += sep + word;
    }
    first = false;
  }
  return out;
}

}  // namespace

std::string shared_options_text(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& o : shared_options()) {
    if (std::find(names.begin(), names.end(), o.name) == names.end()) continue;
    out += wrapped("  " + o.name + "  ", o.meaning, 100, "      ") + "\n";
  }
  if (out.empty()) return out;
  return "Shared options (one meaning in every command; README.md, Shared options):\n" + out;
}

namespace {

void add_footers(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    std::vector<std::string> names;
    for (const CLI::Option* o : sub->get_options())
      for (const auto& l : o->get_lnames()) names.push_back("--" + l);
    sub->footer(shared_options_text(names));
    add_footers(*sub);
  }
}

}  // namespace

void add_shared_options_help(CLI::App& app) {
  std::vector<std::string> all;
  for (const auto& o : shared_options()) all.push_back(o.name);
  app.footer(shared_options_text(all));  // `fusim --help`: the whole list, as README.md
  add_footers(app);
}

}  // namespace fusim::cli
