#pragma once
// The stated memory budget of one simulated model: configs and traces that would make the
// simulator allocate more host memory than this for their state are refused with an
// InputError *before* anything is allocated (a 1 TiB cache must not end in std::bad_alloc or
// the OOM killer after minutes of swapping).
//
// The budget is 4 GiB unless FUSIM_MEMORY_BUDGET says otherwise ("16GiB", bytes); it is read
// when checked, never cached, so there is no global state. Every command's --max-memory
// SIZE sets that variable for its process (sim/cli/app.cpp), before any work.
#include <cstdint>
#include <string>

namespace fusim {

inline constexpr std::int64_t kDefaultMemoryBudgetBytes = std::int64_t{4} << 30;
// Largest JSON input read into memory: nlohmann::json's DOM takes ~10-20x the text.
inline constexpr std::int64_t kMaxJsonFileBytes = std::int64_t{256} << 20;

// The budget in bytes (FUSIM_MEMORY_BUDGET or the default); a malformed variable is an
// InputError naming it.
std::int64_t memory_budget_bytes();

// Throws InputError(file, where, ...) when `count` items of `bytes_each` bytes (overflow-safe)
// exceed the budget. `what` says what would be allocated: "cache tag state",
// "DRAM bank state".
void check_memory_budget(const std::string& file, const std::string& where, const std::string& what,
                         std::uint64_t count, std::uint64_t bytes_each);

}  // namespace fusim
