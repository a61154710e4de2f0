// `fusim validate --per-op --per-layer --json` as a user runs it: the JSON contract of
// issue 16 ("per_op_kinds": [{"kind", "op", "predicted_ms", "measured_ms", "ratio"}]) and
// sums that must hold whatever the host's speed.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace {
nlohmann::json run_json(const std::string& args, const std::string& out) {
  const std::string command = "cd '" FUSIM_SOURCE_DIR "' && '" FUSIM_BINARY_DIR "/fusim' " + args +
                              " >'" + out + "' 2>/dev/null";
  REQUIRE(std::system(command.c_str()) == 0);
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}
}  // namespace

TEST_CASE("validate --per-op --per-layer --json: contract fields and sums") {
  const auto doc = run_json(
      "validate --trace tests/backend/tiny_convnet.json --machine xeon-8380-ddr4 "
      "--ordering eager,backward-fused --optimizer sgd --measured-steps 2 --warmup 0 "
      "--steps-per-block 2 "
      "--threads 1 --max-time 0 --sim-steps 4 --per-op --per-layer --json",
      FUSIM_BINARY_DIR "/tests/backend/validate_per_op.json");
  REQUIRE(doc.at("results").size() == 2);
  for (const auto& r : doc.at("results")) {
    INFO(r.at("ordering").get<std::string>());
    const auto& kinds = r.at("per_op_kinds");
    REQUIRE(kinds.is_array());
    REQUIRE_FALSE(kinds.empty());
    double predicted = 0, measured = 0;
    std::set<std::string> seen;
    for (const auto& g : kinds) {
      for (const char* key : {"kind", "op", "predicted_ms", "measured_ms", "ratio"})
        CHECK(g.contains(key));
      const std::string kind = g.at("kind");
      CHECK(std::set<std::string>{"F", "Bx", "Bw", "U", "L"}.count(kind) == 1);
      CHECK(seen.insert(kind + " " + g.at("op").get<std::string>()).second);  // one row each
      if (g.at("measured_ms").get<double>() > 0)
        CHECK(g.at("ratio").get<double>() ==
              Approx(g.at("predicted_ms").get<double>() / g.at("measured_ms").get<double>()));
      predicted += g.at("predicted_ms").get<double>();
      measured += g.at("measured_ms").get<double>();
    }
    // The model's CPU runs one op at a time with no gaps: its groups are its steps (4
    // simulated steps: 1 warm-up, 2 measured, so the median is their mean).
    CHECK(predicted == Approx(r.at("predicted_ms").get<double>()).epsilon(1e-6));
    // Measured ops lie inside their steps: their sum is at most the steps' (here the
    // median of 2 steps, their mean), the rest being the backend's time between ops.
    CHECK(measured <= r.at("measured_ms").get<double>() * (1 + 1e-9));
    CHECK(measured > 0);
    // Conv F of tiny_convnet's 2 convolutions; each layer of the per-layer view once.
    bool conv_forward = false;
    for (const auto& g : kinds)
      if (g.at("kind") == "F" && g.at("op") == "conv2d") conv_forward = g.at("ops_per_step") == 2;
    CHECK(conv_forward);
    const auto& layers = r.at("per_layer");
    REQUIRE(layers.is_array());
    std::set<std::string> names;
    double layer_sum = 0;
    for (const auto& l : layers) {
      for (const char* key : {"layer", "op", "predicted_ms", "measured_ms", "ratio"})
        CHECK(l.contains(key));
      names.insert(l.at("layer").get<std::string>());
      layer_sum += l.at("predicted_ms").get<double>();
    }
    CHECK(names.count("conv1") == 1);
    CHECK(names.count("fc") == 1);
    CHECK(layer_sum == Approx(predicted).epsilon(1e-9));
  }
}

TEST_CASE("validate --save-profile: simulate --profile gives validate's predictions back") {
  // The in-run profile validate predicted from, saved, drives the same simulation in
  // `simulate` (same fidelity and simulated steps): every ordering's predicted step time is
  // validate's, to the printed precision. A profile that lost or moved an op's time would
  // not.
  const std::string profile = FUSIM_BINARY_DIR "/tests/backend/validate_saved_profile.json";
  // A one-thread Xeon: the profile is measured with the threads the machine's ops run on.
  const std::string machine = FUSIM_BINARY_DIR "/tests/backend/xeon_one_thread.json";
  {
    std::ifstream in(FUSIM_SOURCE_DIR "/models/machines/xeon-8380-ddr4.json");
    auto m = nlohmann::json::parse(in);
    m["compute"]["threads_per_op"] = 1;
    std::ofstream(machine) << m.dump();
  }
  const auto doc = run_json(
      "validate --trace tests/backend/tiny_convnet.json --machine '" + machine +
          "' --force --ordering eager,backward-fused,forward-fused --optimizer sgd "
          "--measured-steps 2 "
          "--warmup 0 --steps-per-block 2 --threads 1 --max-time 0 --sim-steps 4 --profile in-run "
          "--save-profile '" +
          profile + "' --json",
      FUSIM_BINARY_DIR "/tests/backend/validate_saved.json");
  const auto sim =
      run_json("simulate --trace tests/backend/tiny_convnet.json --machine '" + machine +
                   "' --ordering eager,backward-fused,forward-fused --optimizer sgd --fidelity "
                   "block --steps 4 "
                   "--profile '" +
                   profile + "' --json",
               FUSIM_BINARY_DIR "/tests/backend/validate_saved_sim.json");
  REQUIRE(doc.at("results").size() == 3);
  REQUIRE(sim.at("results").size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    INFO(doc["results"][i].at("ordering").get<std::string>());
    CHECK(sim["results"][i].at("ordering") == doc["results"][i].at("ordering"));
    CHECK(sim["results"][i].at("step_time_ms").get<double>() ==
          Approx(doc["results"][i].at("predicted_ms").get<double>()).epsilon(1e-9));
  }
}
