#include "schedule/memory_options.h"

#include <array>
#include <utility>

namespace fusim::schedule {
namespace {
constexpr std::array<std::pair<AttentionMemory, std::string_view>, 2> kAttention{{
    {AttentionMemory::Flash, "flash"},
    {AttentionMemory::Materialized, "materialized"},
}};
constexpr std::array<std::pair<GradBuffer, std::string_view>, 2> kGradBuffer{{
    {GradBuffer::PerTensor, "per-tensor"},
    {GradBuffer::Persistent, "persistent"},
}};

template <typename E, std::size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& table, E value) {
  for (auto& [e, n] : table)
    if (e == value) return n;
  return "?";
}
template <typename E, std::size_t N>
std::optional<E> value_of(const std::array<std::pair<E, std::string_view>, N>& table,
                          std::string_view name) {
  for (auto& [e, n] : table)
    if (n == name) return e;
  return std::nullopt;
}
}  // namespace

std::string_view to_string(AttentionMemory mode) {
  return name_of(kAttention, mode);
}
std::optional<AttentionMemory> parse_attention_memory(std::string_view name) {
  return value_of(kAttention, name);
}
std::string_view to_string(GradBuffer buffer) {
  return name_of(kGradBuffer, buffer);
}
std::optional<GradBuffer> parse_grad_buffer(std::string_view name) {
  return value_of(kGradBuffer, name);
}

bool has_master_weights(const MemoryOptions& options, workload::DType param) {
  return options.mixed_precision && workload::dtype_bytes(param) < 4;
}

int grad_element_bytes(const MemoryOptions& options, workload::DType param) {
  return options.mixed_precision ? 4 : workload::dtype_bytes(param);
}

int state_element_bytes(const MemoryOptions& options, workload::DType param) {
  return options.mixed_precision ? 4 : workload::dtype_bytes(param);
}

std::int64_t sharded_bytes(const MemoryOptions& options, std::int64_t bytes) {
  const std::int64_t d = options.optimizer_shards < 1 ? 1 : options.optimizer_shards;
  return (bytes + d - 1) / d;
}

}  // namespace fusim::schedule
