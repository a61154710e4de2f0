#pragma once
// Strict, path-aware reading of JSON input files. Every accessor either returns a value
// of the requested form or throws InputError naming the file, the JSON path and what was
// expected ("traces/x.json: layers[3].attrs.stride: expected a positive integer, got 0").
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fusim {

// Reads and parses a JSON file; missing/unreadable files and syntax errors (with line and
// column) become InputError.
nlohmann::json load_json_file(const std::string& path);
// Same, for text already in memory (fuzzers, tests); `name` is used in messages.
nlohmann::json parse_json_text(std::string_view text, const std::string& name);

// Short description of a value for "got ..." messages: `"abc"`, `2.5`, `an object`.
std::string describe_json(const nlohmann::json& value);

class JsonView {
 public:
  JsonView(const nlohmann::json& value, std::string file, std::string path = "")
      : value_(&value), file_(std::move(file)), path_(std::move(path)) {}

  const nlohmann::json& raw() const { return *value_; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }

  // Objects.
  bool has(std::string_view key) const;
  JsonView at(std::string_view key) const;  // required member
  std::optional<JsonView> find(std::string_view key) const;
  std::vector<std::string> keys() const;
  // Throws for the first member not in `allowed` (catches typos such as "strid").
  void reject_unknown_keys(std::initializer_list<std::string_view> allowed) const;

  // Arrays.
  std::size_t size() const;  // requires an array
  JsonView operator[](std::size_t i) const;
  std::vector<JsonView> elements() const;

  // Scalars.
  std::int64_t as_int() const;
  std::int64_t as_int_at_least(std::int64_t min) const;  // "an integer >= min"
  std::int64_t as_positive_int() const { return as_int_at_least(1); }
  double as_number() const;  // finite
  double as_number_in(double lo, double hi) const;
  bool as_bool() const;
  std::string as_string() const;
  std::string as_nonempty_string() const;
  // An integer count of bytes or a string with a unit ("48KiB"); > 0 unless allow_zero.
  std::int64_t as_bytes(bool allow_zero = false) const;
  std::vector<std::int64_t> as_int_list() const;

  // Optional members with defaults stated by the caller (explicit, never silent).
  std::int64_t get_int(std::string_view key, std::int64_t fallback) const;
  double get_number(std::string_view key, double fallback) const;
  bool get_bool(std::string_view key, bool fallback) const;
  std::string get_string(std::string_view key, const std::string& fallback) const;

  void require_object() const;
  void require_array() const;
  [[noreturn]] void fail(const std::string& expected) const;
  // "got <value>" appended for the current value.
  [[noreturn]] void fail_got(const std::string& expected) const;

 private:
  std::string child_path(std::string_view key) const;
  std::string child_path(std::size_t index) const;

  const nlohmann::json* value_;
  std::string file_, path_;
};

}  // namespace fusim
