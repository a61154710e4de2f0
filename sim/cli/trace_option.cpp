#include "cli/trace_option.h"

#include <fmt/format.h>
#include <algorithm>
#include <filesystem>

#include "cli/option_checks.h"
#include "core/error.h"
#include "core/preset.h"
#include "core/suggest.h"
#include "networks/networks.h"
#include "workload/trace_io.h"

namespace fusim::cli {

void add_batch_option(CLI::App* cmd, ZooBatch& batch) {
  cmd->add_option_function<std::int64_t>(
         "--batch",
         [&batch](std::int64_t b) {
           batch.value = b;
           batch.given = true;
         },
         "Batch size of a zoo network named by --trace (default 32); nothing on a trace file")
      ->type_name("INT");
}

workload::Trace load_trace_option(const std::string& name, const ZooBatch& batch) {
  if (batch.given && batch.value <= 0)
    throw InputError(fmt::format("--batch: expected a positive integer, got {}", batch.value));
  std::error_code ec;
  // A path (a '/' or .json) is a file, reported by the reader when it is missing; anything
  // that exists (a folder too: "expected a JSON file, got a directory") is read as one.
  if (std::filesystem::exists(name, ec) || looks_like_path(name)) {
    if (batch.given)
      warn_no_effect("--batch", "on trace files (it sizes the zoo networks: --trace resnet50)");
    return workload::load_trace(name);
  }
  const auto& zoo = networks::network_names();
  if (std::find(zoo.begin(), zoo.end(), name) == zoo.end())
    throw InputError(
        fmt::format("--trace: expected a trace JSON file or a zoo network ({}), "
                    "got \"{}\"{}",
                    fmt::join(zoo, ", "), name, did_you_mean(name, zoo)));
  networks::NetworkOptions options;  // trace gen's defaults but the batch
  options.batch = batch.value;
  options.source = fmt::format("fusim trace gen {} --batch {}", name, options.batch);
  return networks::make_network(name, options);
}

}  // namespace fusim::cli
