#pragma once
// The what-if grid of a sweep: traces x the values of every `--set PATH=V1,V2,...` axis.
// Points are numbered in row-major order (first --trace outermost, last --set fastest), so
// a point's index alone fixes its place in the output, whatever thread or rank ran it.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fusim::sweep {

// The axis path that sets the trace's batch size (zoo-generated traces only); every other
// path addresses a machine-model field ("caches.L2.size", "dram.channels").
inline constexpr std::string_view kBatchPath = "batch";
// Paths under "parallel." set the parallel plan of a multi-device step (issue 19:
// parallel.tp, parallel.pp, ...; sweep/plan_axes.h), not the machine.
inline constexpr std::string_view kParallelPrefix = "parallel.";
bool is_plan_path(std::string_view path);

// One swept parameter. Values are typed the way the machine JSON wants them: sizes with a
// unit become integers of bytes ("8MiB" -> 8388608), plain numbers stay numbers, "true" and
// "false" are booleans, anything else is a string ("ddr5-5600").
struct Axis {
  std::string path;
  std::vector<nlohmann::json> values;
};

// "8MiB" -> 8388608, "16" -> 16, "0.5" -> 0.5, "true" -> true, "frfcfs" -> "frfcfs".
// Throws InputError for an empty value.
nlohmann::json parse_value(std::string_view text, std::string_view option);

// Parses "PATH=V1,V2,...". Throws InputError (naming the option) for a missing '=', a
// malformed path, an empty or repeated value, or a batch value that is not a positive
// integer.
Axis parse_axis(std::string_view spec);

// How a value is written in a result cell: integers and strings as they are, numbers in
// their shortest round-trip form.
std::string value_text(const nlohmann::json& value);

struct GridPoint {
  std::size_t index = 0;
  std::size_t trace = 0;            // index into Grid::traces
  std::vector<std::size_t> choice;  // value index per axis
};

class Grid {
 public:
  // Throws InputError for no traces, a path swept twice, or more than kMaxPoints points.
  Grid(std::vector<std::string> traces, std::vector<Axis> axes);

  static constexpr std::size_t kMaxPoints = 1'000'000;

  const std::vector<std::string>& traces() const { return traces_; }
  const std::vector<Axis>& axes() const { return axes_; }
  std::size_t size() const { return size_; }
  GridPoint point(std::size_t index) const;

  // The value of axis `axis` at `point`.
  const nlohmann::json& value(const GridPoint& point, std::size_t axis) const {
    return axes_[axis].values[point.choice[axis]];
  }
  // The batch-size axis, if swept (index into axes()).
  std::optional<std::size_t> batch_axis() const;
  // (path, value) of every machine axis at `point`, in --set order.
  std::vector<std::pair<std::string, nlohmann::json>> machine_overrides(
      const GridPoint& point) const;
  // (path, value) of every parallel-plan axis ("parallel.tp") at `point`, in --set order.
  std::vector<std::pair<std::string, nlohmann::json>> plan_overrides(const GridPoint& point) const;
  bool has_plan_axis() const;

 private:
  std::vector<std::string> traces_;
  std::vector<Axis> axes_;
  std::size_t size_ = 0;
};

}  // namespace fusim::sweep
