#pragma once
// Inputs named on the command line as a bundled preset or a file: `--machine h100-sxm5` or
// `--machine my/box.json`, `--config ddr4-3200`. One rule for every command: a name with a
// '/' or ending in ".json" is a path, anything else is the stem of a preset file.
#include <string>
#include <vector>

namespace fusim {

bool looks_like_path(const std::string& name_or_path);

// Stems of the *.json files in `dir`, sorted (empty when it does not exist).
std::vector<std::string> preset_names(const std::string& dir);

// A path is returned as it is (its reader reports it when missing); a name is <dir>/<name>
// .json in the first of `dirs` that has it, else InputError:
//   unknown machine "x": expected a preset name (a100, h100) or a path to a machine JSON file
// `what` is "machine", "DRAM preset", ...; the names listed are those of dirs.front().
std::string resolve_preset(const std::string& name_or_path, const std::vector<std::string>& dirs,
                           const std::string& what);

}  // namespace fusim
