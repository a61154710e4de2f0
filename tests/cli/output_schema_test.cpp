// One output schema (issue 23, point 2): every command's --csv and --json, run through the
// real binary on the examples of docs/output_schema.json, are checked against that file:
// the CSV header is exactly the documented columns (the JSON keys), one CSV line per JSON
// record, every documented key present in every record with its type (a rate in [0, 1],
// a count >= 0: never -1 or 0 standing for "no data"; null only where the schema allows
// it), and for deterministic commands every cell equal to the JSON value at full precision
// (the same double, not a rounded one). docs/output_schema.md must name every column.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "reliability/run_fusim.h"

using namespace fusim::test;
using nlohmann::json;

namespace {

// A record of the JSON and the objects around it (an op inside its schedule), innermost
// last: a column missing from the record is looked up there.
struct Record {
  std::vector<const json*> chain;
};

void collect(const json& node, const std::vector<std::string>& segments, std::size_t i,
             std::vector<const json*> chain, std::vector<Record>& out) {
  if (node.is_object()) chain.push_back(&node);
  if (i == segments.size()) {
    REQUIRE(node.is_object());
    out.push_back({chain});
    return;
  }
  if (segments[i] == "*") {
    REQUIRE(node.is_array());
    for (const auto& e : node) collect(e, segments, i + 1, chain, out);
  } else {
    REQUIRE(node.contains(segments[i]));
    collect(node.at(segments[i]), segments, i + 1, chain, out);
  }
}

std::vector<Record> records(const json& doc, const std::string& pointer) {
  std::vector<std::string> segments;
  for (std::size_t p = 1; p <= pointer.size() && !pointer.empty();) {
    std::size_t q = pointer.find('/', p);
    if (q == std::string::npos) q = pointer.size();
    segments.push_back(pointer.substr(p, q - p));
    p = q + 1;
  }
  std::vector<Record> out;
  collect(doc, segments, 0, {}, out);
  return out;
}

// A key, else a dotted path into nested objects ("hit_rates.L1"; sweep's "hit_rate.L1"
// and "caches.LLC.size" are flat keys).
const json* find(const json& object, const std::string& path) {
  if (!object.is_object()) return nullptr;
  if (object.contains(path)) return &object.at(path);
  for (auto dot = path.find('.'); dot != std::string::npos; dot = path.find('.', dot + 1)) {
    const std::string head = path.substr(0, dot);
    if (!object.contains(head)) continue;
    if (const json* v = find(object.at(head), path.substr(dot + 1))) return v;
  }
  return nullptr;
}

const json* lookup(const Record& r, const std::string& column) {
  for (auto it = r.chain.rbegin(); it != r.chain.rend(); ++it)
    if (const json* v = find(**it, column)) return v;
  return nullptr;
}

// RFC 4180 lines of one CSV text, split into blocks at blank lines.
std::vector<std::vector<std::vector<std::string>>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::vector<std::string>>> blocks(1);
  std::vector<std::string> row;
  std::string cell;
  bool quoted = false, any = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"') {
      quoted = any = true;
    } else if (c == ',') {
      row.push_back(cell);
      cell.clear();
      any = true;
    } else if (c == '\n') {
      if (!any && cell.empty() && row.empty()) {
        blocks.emplace_back();  // a blank line: the next block
        continue;
      }
      row.push_back(cell);
      blocks.back().push_back(row);
      row.clear();
      cell.clear();
      any = false;
    } else {
      cell += c;
      any = true;
    }
  }
  return blocks;
}

std::string scalar_text(const json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

bool nonnegative_number(const json& v) {
  return v.is_number() && v.get<double>() >= 0;
}

// Whether `v` has the documented type ("count", "rate?", ...).
bool has_type(const json& v, std::string type) {
  const bool nullable = !type.empty() && type.back() == '?';
  if (nullable) type.pop_back();
  if (v.is_null()) return nullable;
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "integer") return v.is_number_integer();
  if (type == "count") return v.is_number_integer() && v.get<double>() >= 0;
  if (type == "number") return v.is_number();
  if (type == "nonnegative") return nonnegative_number(v);
  if (type == "rate") return nonnegative_number(v) && v.get<double>() <= 1;
  if (type == "list") return v.is_array();
  FAIL("unknown type in docs/output_schema.json: " << type);
  return false;
}

// The CSV cell of a deterministic command against the JSON value of the same run's inputs.
void check_cell(const std::string& cell, const json& v) {
  if (v.is_array()) {
    std::string joined;
    for (const auto& e : v) joined += (joined.empty() ? "" : " ") + scalar_text(e);
    CHECK(cell == joined);
  } else if (v.is_number_float()) {
    // Full precision: the cell reads back as the very same double.
    CHECK(std::strtod(cell.c_str(), nullptr) == v.get<double>());
  } else {
    CHECK(cell == scalar_text(v));
  }
}

// A non-deterministic command's cell (timings differ between its two runs): its type only.
void check_cell_type(const std::string& cell, std::string type) {
  const bool nullable = !type.empty() && type.back() == '?';
  if (nullable) type.pop_back();
  if (cell.empty()) {
    CHECK((nullable || type == "string" || type == "list"));
    return;
  }
  if (type == "string" || type == "list") return;
  if (type == "boolean") {
    CHECK((cell == "true" || cell == "false"));
    return;
  }
  char* end = nullptr;
  const double x = std::strtod(cell.c_str(), &end);
  CHECK(*end == '\0');
  if (type == "count" || type == "nonnegative" || type == "rate") CHECK(x >= 0);
  if (type == "rate") CHECK(x <= 1);
}

struct Column {
  std::string name, type;
};

void check_block(const json& block, const std::vector<Record>& recs,
                 const std::vector<std::vector<std::string>>& csv, bool deterministic) {
  REQUIRE(!csv.empty());
  const std::vector<std::string>& header = csv.front();
  // The documented columns, "name.*" expanded to the header's consecutive "name." columns,
  // which must be exactly the keys of that object in the records.
  std::vector<Column> columns;
  std::size_t h = 0;
  for (const auto& spec : block.at("columns")) {
    const std::string name = spec.at(0), type = spec.at(1);
    if (name.size() > 2 && name.compare(name.size() - 2, 2, ".*") == 0) {
      const std::string prefix = name.substr(0, name.size() - 1);
      std::vector<std::string> keys;
      while (h < header.size() && header[h].rfind(prefix, 0) == 0) {
        keys.push_back(header[h].substr(prefix.size()));
        columns.push_back({header[h++], type});
      }
      std::sort(keys.begin(), keys.end());
      for (const Record& r : recs) {
        // A nested object (simulate's "hit_rates": {"L1": ...}) or flat keys with the
        // prefix (sweep's "hit_rate.L1").
        std::vector<std::string> want;
        if (const json* object = lookup(r, prefix.substr(0, prefix.size() - 1))) {
          for (const auto& [key, value] : object->items()) want.push_back(key);
        } else {
          for (const auto& [key, value] : r.chain.back()->items())
            if (key.rfind(prefix, 0) == 0) want.push_back(key.substr(prefix.size()));
        }
        std::sort(want.begin(), want.end());
        CHECK(keys == want);
      }
      continue;
    }
    INFO("column " << name);
    REQUIRE(h < header.size());
    CHECK(header[h++] == name);
    columns.push_back({name, type});
  }
  CHECK(h == header.size());  // no undocumented column
  REQUIRE(csv.size() - 1 == recs.size());
  for (std::size_t i = 0; i < recs.size(); ++i) {
    REQUIRE(csv[i + 1].size() == columns.size());
    for (std::size_t c = 0; c < columns.size(); ++c) {
      INFO("record " << i << ", column " << columns[c].name);
      const json* v = lookup(recs[i], columns[c].name);
      REQUIRE(v != nullptr);  // every documented key in the JSON
      CHECK(has_type(*v, columns[c].type));
      if (deterministic)
        check_cell(csv[i + 1][c], *v);
      else
        check_cell_type(csv[i + 1][c], columns[c].type);
    }
  }
}

json load_schema() {
  const std::string text = read_file(FUSIM_SOURCE_DIR "/docs/output_schema.json");
  REQUIRE(!text.empty());
  return json::parse(text);
}

}  // namespace

TEST_CASE("every command's --csv is its --json records, as docs/output_schema.json says") {
  const json schema = load_schema();
  const bool slow = std::getenv("FUSIM_SLOW_TESTS") != nullptr;
  for (const json& command : schema.at("commands")) {
    const std::string name = command.at("command");
#ifndef FUSIM_WITH_TORCH
    if (command.value("backend", false)) continue;
#endif
    if (command.value("slow", false) && !slow) continue;
    DYNAMIC_SECTION(name) {
      const std::string dir = scratch_dir("output-schema");
      std::string args = command.at("example");
      if (auto p = args.find("{scratch}"); p != std::string::npos) args.replace(p, 9, dir);
      FusimRun as_json = run_fusim(FUSIM_SOURCE_DIR, args + " --json", dir);
      INFO(name << " --json: " << as_json.err);
      REQUIRE(as_json.exit_code == 0);
      const json doc = json::parse(as_json.out);
      FusimRun as_csv = run_fusim(FUSIM_SOURCE_DIR, args + " --csv", dir);
      INFO(name << " --csv: " << as_csv.err);
      REQUIRE(as_csv.exit_code == 0);
      const auto blocks = parse_csv(as_csv.out);
      const json& documented = command.at("blocks");
      REQUIRE(blocks.size() == documented.size());
      for (std::size_t b = 0; b < blocks.size(); ++b) {
        INFO("block " << b << " (" << documented[b].at("records").get<std::string>() << ")");
        check_block(documented[b], records(doc, documented[b].at("records")), blocks[b],
                    command.at("deterministic"));
      }
    }
  }
}

TEST_CASE("docs/output_schema.md names every command and column of the schema") {
  const json schema = load_schema();
  const std::string doc = read_file(FUSIM_SOURCE_DIR "/docs/output_schema.md");
  REQUIRE(!doc.empty());
  for (const json& command : schema.at("commands")) {
    const std::string name = command.at("command");
    CHECK(doc.find("`" + name + "`") != std::string::npos);
    for (const json& block : command.at("blocks"))
      for (const json& column : block.at("columns")) {
        const std::string c = column.at(0);
        INFO(name << ": " << c);
        CHECK(doc.find("`" + c + "`") != std::string::npos);
      }
  }
}

TEST_CASE("a cache level that no access reaches has no hit rate (null), not 0") {
  // mlp_tiny's working set fits the Xeon's L1, whose hits keep every access out of L2 and the
  // LLC in the measured steps (the stored golden output said 0.0 for both before).
  const std::string dir = scratch_dir("output-schema-levels");
  FusimRun r = run_fusim(FUSIM_SOURCE_DIR,
                         "simulate --trace traces/examples/mlp_tiny.json --machine xeon-8380-ddr4 "
                         "--ordering eager --no-per-op --json",
                         dir);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json eager = json::parse(r.out).at("results").at(0);
  CHECK(eager.at("hit_rates").at("L1") == 1.0);
  CHECK(eager.at("hit_rates").at("L2").is_null());
  CHECK(eager.at("hit_rates").at("LLC").is_null());
  CHECK(eager.at("llc_hit_rate").is_null());
}
