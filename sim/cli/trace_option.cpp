#include "cli/trace_option.h"

#include <fmt/format.h>
#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "core/preset.h"
#include "core/suggest.h"
#include "networks/networks.h"
#include "workload/trace_io.h"

namespace fusim::cli {

workload::Trace load_trace_option(const std::string& name) {
  std::error_code ec;
  // A path (a '/' or .json) is a file, reported by the reader when it is missing; anything
  // that exists (a folder too: "expected a JSON file, got a directory") is read as one.
  if (std::filesystem::exists(name, ec) || looks_like_path(name)) return workload::load_trace(name);
  const auto& zoo = networks::network_names();
  if (std::find(zoo.begin(), zoo.end(), name) == zoo.end())
    throw InputError(
        fmt::format("--trace: expected a trace JSON file or a zoo network ({}), "
                    "got \"{}\"{}",
                    fmt::join(zoo, ", "), name, did_you_mean(name, zoo)));
  networks::NetworkOptions options;  // trace gen's defaults (batch 32)
  options.source = fmt::format("fusim trace gen {} --batch {}", name, options.batch);
  return networks::make_network(name, options);
}

}  // namespace fusim::cli
