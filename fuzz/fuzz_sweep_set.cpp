// libFuzzer target: sweep axes and machine overrides as typed on the command line
// (`fusim sweep --set PATH=V1,V2`, `fusim simulate --set PATH=VALUE`). Each input line is one
// --set; the axes make a grid, and every grid point's values are applied to a preset machine.
#include <sstream>

#include "exec/machine.h"
#include "fuzz/fuzz_common.h"
#include "sweep/grid.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fusim;
  static const nlohmann::json machine =
      load_json_file(FUSIM_SOURCE_DIR "/models/machines/xeon-8380-ddr4.json");  // read-only
  return fuzz::expect_input_error_or_success([&] {
    std::istringstream in{std::string(fuzz::as_text(data, size))};
    std::vector<sweep::Axis> axes;
    for (std::string line; std::getline(in, line) && axes.size() < 4;)
      axes.push_back(sweep::parse_axis(line));
    sweep::Grid grid({"trace"}, axes);
    for (std::size_t i = 0; i < grid.size() && i < 16; ++i) {
      std::vector<exec::Override> overrides;
      auto point = grid.point(i);
      for (std::size_t a = 0; a < axes.size(); ++a)
        if (axes[a].path != sweep::kBatchPath)
          overrides.emplace_back(axes[a].path, sweep::value_text(grid.value(point, a)));
      (void)exec::parse_machine(machine, "machine", overrides);
    }
  });
}
