#include "core/memory_budget.h"

#include <fmt/format.h>
#include <cstdlib>

#include "core/error.h"
#include "core/units.h"

namespace fusim {

std::int64_t memory_budget_bytes() {
  const char* env = std::getenv("FUSIM_MEMORY_BUDGET");
  if (env == nullptr || *env == '\0') return kDefaultMemoryBudgetBytes;
  auto bytes = parse_bytes(env);
  if (!bytes || *bytes <= 0)
    throw InputError(fmt::format(
        "FUSIM_MEMORY_BUDGET: expected a byte size such as 4GiB or 1073741824, got \"{}\"", env));
  return *bytes;
}

void check_memory_budget(const std::string& file, const std::string& where, const std::string& what,
                         std::uint64_t count, std::uint64_t bytes_each) {
  const auto budget = static_cast<std::uint64_t>(memory_budget_bytes());
  // count * bytes_each > budget, without overflowing the product.
  if (bytes_each != 0 && count > budget / bytes_each) {
    const long double need = static_cast<long double>(count) * bytes_each;
    throw InputError(
        file, where,
        fmt::format("a model whose {} fits the memory budget of {} (--max-memory or "
                    "FUSIM_MEMORY_BUDGET), "
                    "but it needs {:.3g} GiB ({} x {} B)",
                    what, format_bytes(static_cast<std::int64_t>(budget)),
                    static_cast<double>(need / (1024.0L * 1024 * 1024)), count, bytes_each));
  }
}

}  // namespace fusim
