// `fusim simulate --json` of three small configurations against the stored results in
// tests/golden/NAME.json, field by field: integers (counts, bytes, ids), strings and booleans
// must match exactly; non-integer numbers (times in ms/us, rates) to 1e-12 relative, i.e. up to
// the last printed digit. FUSIM_UPDATE_GOLDEN=1 rewrites the files instead
// (scripts/update_golden.sh); a change must be explained in its commit.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_fusim.h"

using namespace fusim::test;
using nlohmann::json;

namespace {

struct GoldenConfig {
  const char* name;
  const char* args;  // run in the source tree, so the "trace" field is a relative path
};

// Small enough to run in a second each, different enough to cover the model: line fidelity
// with per-op times, block fidelity on DDR5 without per-op list, and machine overrides with
// the fused LAMB kernel backward-fused.
const std::vector<GoldenConfig> kConfigs = {
    {"mlp_tiny_xeon8380_adam",
     "simulate --trace traces/examples/mlp_tiny.json --machine xeon-8380-ddr4 --fidelity line "
     "--json"},
    {"mlp_xeon8480_momentum_block",
     "simulate --trace traces/mlp.json --machine xeon-8480-ddr5 --optimizer momentum "
     "--fidelity block --no-per-op --json"},
    {"mlp_tiny_small_llc_lamb_fused",
     "simulate --trace traces/examples/mlp_tiny.json --machine xeon-8380-ddr4 "
     "--set caches.LLC.size=3MiB --set dram.channels=2 --optimizer lamb --impl fused "
     "--ordering backward-fused --fidelity line --json"},
};

// Appends one line per difference between `want` and `got` at JSON path `path`.
void diff(const json& want, const json& got, const std::string& path,
          std::vector<std::string>& out) {
  if (want.is_number_float() || got.is_number_float()) {
    if (!want.is_number() || !got.is_number()) {
      out.push_back(path + ": want " + want.dump() + ", got " + got.dump());
      return;
    }
    double a = want.get<double>(), b = got.get<double>();
    if (std::fabs(a - b) > 1e-12 * std::max(std::fabs(a), std::fabs(b)))
      out.push_back(path + ": want " + want.dump() + ", got " + got.dump());
    return;
  }
  if (want.type() != got.type()) {
    out.push_back(path + ": want " + want.dump() + ", got " + got.dump());
    return;
  }
  if (want.is_object()) {
    for (const auto& [key, value] : want.items()) {
      if (!got.contains(key))
        out.push_back(path + "." + key + ": missing");
      else
        diff(value, got[key], path + "." + key, out);
    }
    for (const auto& [key, value] : got.items())
      if (!want.contains(key)) out.push_back(path + "." + key + ": unexpected (new field?)");
  } else if (want.is_array()) {
    if (want.size() != got.size())
      out.push_back(path + ": want " + std::to_string(want.size()) + " elements, got " +
                    std::to_string(got.size()));
    for (std::size_t i = 0; i < std::min(want.size(), got.size()); ++i)
      diff(want[i], got[i], path + "[" + std::to_string(i) + "]", out);
  } else if (want != got) {  // integers (counts: tolerance 0), strings, booleans, null
    out.push_back(path + ": want " + want.dump() + ", got " + got.dump());
  }
}

}  // namespace

TEST_CASE("simulate results equal the golden outputs field by field") {
  const bool update = std::getenv("FUSIM_UPDATE_GOLDEN") != nullptr;
  for (const auto& config : kConfigs) {
    DYNAMIC_SECTION(config.name) {
      const std::string scratch = scratch_dir(std::string("golden-") + config.name);
      FusimRun r = run_fusim(FUSIM_SOURCE_DIR, config.args, scratch);
      INFO("fusim " << config.args << "\nstderr: " << r.err);
      REQUIRE(r.exit_code == 0);
      const json got = json::parse(r.out);
      const std::string path =
          std::string(FUSIM_SOURCE_DIR "/tests/golden/") + config.name + ".json";
      if (update) {
        std::ofstream(path) << got.dump(1) << "\n";
        WARN("rewrote " << path);
        continue;
      }
      const json want = json::parse(read_file(path));
      std::vector<std::string> differences;
      diff(want, got, "", differences);
      std::string shown;
      for (std::size_t i = 0; i < differences.size() && i < 20; ++i) shown += differences[i] + "\n";
      // The first differing field by itself, then up to 20 (a model change moves many).
      INFO("first difference: " << (differences.empty() ? "none" : differences.front()));
      INFO(differences.size() << " differences (first 20):\n" << shown);
      CHECK(differences.empty());
    }
  }
}

TEST_CASE("the golden comparison catches a changed count, a changed time and a new field") {
  const json want = {{"dram_bytes", 4096}, {"step_time_ms", 0.125}, {"per_op", {{{"id", 1}}}}};
  std::vector<std::string> out;
  diff(want, want, "", out);
  CHECK(out.empty());
  json got = want;
  got["dram_bytes"] = 4097;            // a count: tolerance 0
  got["step_time_ms"] = 0.125000001;   // a time: beyond 1e-12 relative
  got["per_op"][0]["start_us"] = 0.0;  // a field the golden file does not know
  diff(want, got, "", out);
  REQUIRE(out.size() == 3);
  CHECK(out[0] == ".dram_bytes: want 4096, got 4097");
  CHECK(out[1] == ".per_op[0].start_us: unexpected (new field?)");
  CHECK(out[2] == ".step_time_ms: want 0.125, got 0.125000001");
}
