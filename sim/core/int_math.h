#pragma once
// Integer helpers used across the simulator, defined once.
#include <type_traits>

namespace fusim {

// ceil(a / b) for a >= 0, b > 0.
template <class T>
constexpr T ceil_div(T a, T b) {
  static_assert(std::is_integral_v<T>, "integers only");
  return (a + b - 1) / b;
}

// a rounded up to a multiple of b, for a >= 0, b > 0.
template <class T>
constexpr T round_up(T a, T b) {
  return ceil_div(a, b) * b;
}

}  // namespace fusim
