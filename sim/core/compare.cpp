#include "core/compare.h"

#include <cmath>

#include "core/error.h"

namespace fusim {

double speedup(Tick baseline, Tick candidate) {
  return candidate > 0 ? static_cast<double>(baseline) / static_cast<double>(candidate) : 0.0;
}

double speedup(double baseline, double candidate) {
  return candidate > 0 ? baseline / candidate : 0.0;
}

double error_pct(double predicted, double measured) {
  FUSIM_ASSERT(measured > 0, "an error relative to a measurement of 0");
  return 100.0 * (predicted - measured) / measured;
}

double mean_absolute(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double sum = 0;
  for (double v : values) sum += std::abs(v);
  return sum / static_cast<double>(values.size());
}

}  // namespace fusim
