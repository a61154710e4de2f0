#include "mem/dram/dram_spec.h"

#include <fmt/format.h>
#include <cmath>
#include <filesystem>
#include <limits>

#include "core/error.h"
#include "core/memory_budget.h"
#include "core/suggest.h"

namespace fusim::dram {
namespace {

// JEDEC rounding (JESD79-4B §13.5 "rounding algorithms", same in JESD79-5): a time in ns
// becomes nCK = ceil(t / tCK) with a 2.5% guard band, computed in integers:
// nCK = floor((t_ps * 1000 / tCK_ps + 974) / 1000).
Cycle ns_to_cycles(double ns, Tick tck) {
  const std::int64_t t_ps = std::llround(ns * 1000.0);
  return (t_ps * 1000 / tck + 974) / 1000;
}

// A timing value: an integer count of cycles, or "13.75ns".
Cycle read_timing(const JsonView& v, Tick tck) {
  if (v.raw().is_string()) {
    const std::string s = v.as_string();
    if (s.size() > 2 && s.compare(s.size() - 2, 2, "ns") == 0) {
      try {
        std::size_t used = 0;
        const double ns = std::stod(s.substr(0, s.size() - 2), &used);
        // At most 1 s: larger values overflow the picosecond arithmetic below.
        if (used == s.size() - 2 && std::isfinite(ns) && ns >= 0 && ns <= 1e9)
          return ns_to_cycles(ns, tck);
      } catch (const std::exception&) {
      }
    }
    v.fail_got("a cycle count (integer >= 0) or a time such as \"13.75ns\" (at most 1 s)");
  }
  if (!v.raw().is_number_integer()) {
    v.fail_got("a cycle count (integer >= 0) or a time such as \"13.75ns\"");
  }
  // Bounded so that sums of timings and the current cycle cannot overflow.
  const Cycle c = v.as_int_at_least(0);
  if (c > 1'000'000'000) v.fail_got("a cycle count of at most 1000000000");
  return c;
}

constexpr std::int64_t kMaxDataRate = 100'000;  // MT/s: tCK = 20 ps

bool is_pow2(std::int64_t v) {
  return v > 0 && (v & (v - 1)) == 0;
}

RowPolicy parse_row_policy(const JsonView& v) {
  const std::string s = v.as_string();
  if (s == "open") return RowPolicy::Open;
  if (s == "closed") return RowPolicy::Closed;
  if (s == "open-timeout") return RowPolicy::OpenTimeout;
  if (s == "open-cap") return RowPolicy::OpenCap;
  v.fail_got("one of \"open\", \"closed\", \"open-timeout\", \"open-cap\"");
}

RefreshMode parse_refresh(const JsonView& v) {
  const std::string s = v.as_string();
  if (s == "all-bank") return RefreshMode::AllBank;
  if (s == "per-bank") return RefreshMode::PerBank;
  v.fail_got("\"all-bank\" or \"per-bank\"");
}

// Organisation and controller keys may sit in the preset's own objects or, as overrides,
// at the top level of a machine's "dram" section.
void apply_organization(const JsonView& o, Organization& org) {
  auto int_field = [&](const char* key, auto& field, std::int64_t min) {
    if (auto v = o.find(key)) {
      // The fields are int: a larger value would wrap (channels 2^32 + 2 read as 2).
      const std::int64_t x = v->as_int_at_least(min);
      if (x > std::numeric_limits<int>::max())
        v->fail_got(fmt::format("an integer <= {}", std::numeric_limits<int>::max()));
      field = static_cast<std::decay_t<decltype(field)>>(x);
    }
  };
  int_field("channels", org.channels, 1);
  int_field("pseudo_channels", org.pseudo_channels, 1);
  int_field("ranks", org.ranks, 1);
  int_field("bankgroups", org.bankgroups, 1);
  int_field("banks_per_group", org.banks_per_group, 1);
  int_field("rows", org.rows, 1);
  int_field("columns", org.columns, 1);
  int_field("bus_width_bits", org.bus_width_bits, 8);
  int_field("burst_length", org.burst_length, 1);
}

void apply_cads(const JsonView& o, CadsConfig& c) {
  o.require_object();
  o.reject_unknown_keys({"learning_rate", "exploration", "discount", "seed"});
  if (auto v = o.find("learning_rate")) {
    c.learning_rate = v->as_number();
    if (!(c.learning_rate > 0 && c.learning_rate <= 1)) v->fail_got("a learning rate in (0, 1]");
  }
  if (auto v = o.find("exploration")) c.exploration = v->as_number_in(0, 1);
  if (auto v = o.find("discount")) {
    c.discount = v->as_number();
    if (!(c.discount >= 0 && c.discount < 1)) v->fail_got("a discount in [0, 1)");
  }
  if (auto v = o.find("seed")) c.seed = static_cast<std::uint64_t>(v->as_int_at_least(0));
}

void apply_controller(const JsonView& o, ControllerConfig& c, Tick tck) {
  if (auto v = o.find("scheduler")) c.scheduler = v->as_nonempty_string();
  if (auto v = o.find("mapping")) c.mapping = v->as_nonempty_string();
  if (auto v = o.find("xor_bank_hash")) c.xor_bank_hash = v->as_bool();
  if (auto v = o.find("row_policy")) c.row_policy = parse_row_policy(*v);
  if (auto v = o.find("row_timeout")) c.row_timeout = read_timing(*v, tck);
  if (auto v = o.find("row_cap")) c.row_cap = static_cast<int>(v->as_int_at_least(1));
  if (auto v = o.find("refresh")) c.refresh = parse_refresh(*v);
  if (auto v = o.find("read_queue")) c.read_queue = static_cast<int>(v->as_int_at_least(1));
  if (auto v = o.find("write_queue")) c.write_queue = static_cast<int>(v->as_int_at_least(1));
  if (auto v = o.find("write_high_watermark"))
    c.write_high_watermark = static_cast<int>(v->as_int_at_least(1));
  if (auto v = o.find("write_low_watermark"))
    c.write_low_watermark = static_cast<int>(v->as_int_at_least(0));
  if (auto v = o.find("interleave_bytes")) c.interleave_bytes = static_cast<int>(v->as_bytes());
  if (auto v = o.find("starvation_cycles")) c.starvation_cycles = v->as_int_at_least(1);
  if (auto v = o.find("epoch_cycles")) c.epoch_cycles = v->as_int_at_least(1);
  if (auto v = o.find("cads")) apply_cads(*v, c.cads);
}

void apply_timing(const JsonView& o, Timing& t, Tick tck) {
  o.require_object();
  o.reject_unknown_keys({"tCL",  "tCWL",    "tRCD",   "tRP",    "tRAS",   "tRC",
                         "tBL",  "tCCD_S",  "tCCD_L", "tRRD_S", "tRRD_L", "tFAW",
                         "tWR",  "tWTR_S",  "tWTR_L", "tRTP",   "tRTRS",  "tREFI",
                         "tRFC", "tREFIpb", "tRFCpb", "tRREFD"});
  auto field = [&](const char* key, Cycle& c) {
    if (auto v = o.find(key)) c = read_timing(*v, tck);
  };
  field("tCL", t.tCL), field("tCWL", t.tCWL), field("tRCD", t.tRCD), field("tRP", t.tRP);
  field("tRAS", t.tRAS), field("tRC", t.tRC), field("tBL", t.tBL);
  field("tCCD_S", t.tCCD_S), field("tCCD_L", t.tCCD_L), field("tRRD_S", t.tRRD_S);
  field("tRRD_L", t.tRRD_L), field("tFAW", t.tFAW), field("tWR", t.tWR);
  field("tWTR_S", t.tWTR_S), field("tWTR_L", t.tWTR_L), field("tRTP", t.tRTP);
  field("tRTRS", t.tRTRS), field("tREFI", t.tREFI), field("tRFC", t.tRFC);
  field("tREFIpb", t.tREFIpb), field("tRFCpb", t.tRFCpb), field("tRREFD", t.tRREFD);
}

const std::initializer_list<std::string_view> kOrgKeys = {
    "channels", "pseudo_channels", "ranks",          "bankgroups",  "banks_per_group",
    "rows",     "columns",         "bus_width_bits", "burst_length"};
const std::initializer_list<std::string_view> kCtrlKeys = {"scheduler",
                                                           "mapping",
                                                           "xor_bank_hash",
                                                           "row_policy",
                                                           "row_timeout",
                                                           "row_cap",
                                                           "refresh",
                                                           "read_queue",
                                                           "write_queue",
                                                           "write_high_watermark",
                                                           "write_low_watermark",
                                                           "interleave_bytes",
                                                           "starvation_cycles",
                                                           "epoch_cycles",
                                                           "cads"};

// Checks the combination once everything is merged; `where` names the object blamed.
void validate(const DramSpec& s, const JsonView& where) {
  const auto& o = s.org;
  const auto& t = s.t;
  auto need = [&](bool ok, const std::string& what) {
    if (!ok) where.fail(what);
  };
  // Any channel count: one that is no power of two interleaves by modulo (AddressMapping).
  for (auto [name, v] : {std::pair<const char*, std::int64_t>{"pseudo_channels", o.pseudo_channels},
                         {"ranks", o.ranks},
                         {"bankgroups", o.bankgroups},
                         {"banks_per_group", o.banks_per_group},
                         {"rows", o.rows},
                         {"columns", o.columns},
                         {"bus_width_bits", o.bus_width_bits},
                         {"burst_length", o.burst_length}}) {
    need(is_pow2(v), fmt::format("{} to be a power of two (address bits), got {}", name, v));
  }
  // In 64 bits: ranks x bankgroups x banks_per_group can overflow int before the check.
  need(std::int64_t{o.ranks} * o.bankgroups * o.banks_per_group <= 65535,
       "at most 65535 banks per channel");
  // Refused before DramSystem builds one controller per logical channel: each holds per-bank
  // state (BankState, timing vectors: ~64 B a bank) and its read and write queues (~64 B an
  // entry); 4 KiB covers the rest of a controller.
  need(s.ctrl.read_queue <= 65536 && s.ctrl.write_queue <= 65536,
       fmt::format("read_queue and write_queue of at most 65536 entries, got {} and {}",
                   s.ctrl.read_queue, s.ctrl.write_queue));
  check_memory_budget(
      where.file(), where.path().empty() ? "channels" : where.path() + ".channels",
      "DRAM controller state",
      static_cast<std::uint64_t>(o.channels) * static_cast<std::uint64_t>(o.pseudo_channels),
      4096 + 64 * static_cast<std::uint64_t>(o.banks_per_channel()) +
          64 * static_cast<std::uint64_t>(s.ctrl.read_queue + s.ctrl.write_queue));
  need(is_pow2(s.ctrl.interleave_bytes) && s.ctrl.interleave_bytes >= o.atom_bytes(),
       fmt::format("interleave_bytes to be a power of two >= the access atom ({} B), got {}",
                   o.atom_bytes(), s.ctrl.interleave_bytes));
  need(s.ctrl.interleave_bytes <= o.atom_bytes() * o.columns / o.burst_length,
       "interleave_bytes to fit in one row");
  for (auto [name, v] : {std::pair<const char*, Cycle>{"tCL", t.tCL},
                         {"tCWL", t.tCWL},
                         {"tRCD", t.tRCD},
                         {"tRP", t.tRP},
                         {"tRAS", t.tRAS},
                         {"tBL", t.tBL},
                         {"tCCD_S", t.tCCD_S},
                         {"tCCD_L", t.tCCD_L},
                         {"tRRD_S", t.tRRD_S},
                         {"tRRD_L", t.tRRD_L},
                         {"tWR", t.tWR},
                         {"tRTP", t.tRTP},
                         {"tREFI", t.tREFI},
                         {"tRFC", t.tRFC}}) {
    need(v > 0, fmt::format("timing.{} to be given and > 0 cycles", name));
  }
  need(t.tRC >= t.tRAS + t.tRP, fmt::format("tRC ({}) >= tRAS + tRP ({})", t.tRC, t.tRAS + t.tRP));
  need(t.tCCD_L >= t.tCCD_S, "tCCD_L >= tCCD_S");
  need(t.tRRD_L >= t.tRRD_S, "tRRD_L >= tRRD_S");
  need(t.tWTR_L >= t.tWTR_S, "tWTR_L >= tWTR_S");
  need(t.tREFI > t.tRFC, "tREFI > tRFC (otherwise the device only refreshes)");
  if (s.ctrl.refresh == RefreshMode::PerBank) {
    need(t.tRFCpb > 0, fmt::format("timing.tRFCpb for \"refresh\": \"per-bank\" ({} has no "
                                   "per-bank refresh time)",
                                   s.standard));
    // Each bank is refreshed once per tREFI, one REFpb command per interval below; commands
    // to one rank lie tRREFD apart (JESD235D REFpb, JESD79-5 REFsb). An interval under
    // 2 x tRREFD leaves refresh no room among the other commands: at exactly tRREFD a
    // fuzzer's HBM3 (32 banks a rank, tREFI 270 ns) fell behind for good and starved its
    // requests. Real devices have 15x and more (HBM3: 3.9 us / 16 banks = 244 ns vs 8 ns).
    const Cycle interval = t.tREFIpb > 0 ? t.tREFIpb : t.tREFI / o.banks_per_rank();
    need(interval >= 2 * t.tRREFD,
         fmt::format("a per-bank refresh interval (tREFIpb, else tREFI / {} banks a rank = {} "
                     "cycles) >= 2 x tRREFD ({} cycles)",
                     o.banks_per_rank(), interval, 2 * t.tRREFD));
    need(t.tREFI > t.tRFCpb, "tREFI > tRFCpb (otherwise each bank only refreshes)");
  }
  const auto& c = s.ctrl;
  need(c.write_low_watermark < c.write_high_watermark && c.write_high_watermark <= c.write_queue,
       fmt::format("write_low_watermark ({}) < write_high_watermark ({}) <= write_queue ({})",
                   c.write_low_watermark, c.write_high_watermark, c.write_queue));
  need(c.row_policy != RowPolicy::OpenTimeout || c.row_timeout > 0,
       "row_policy \"open-timeout\" to come with row_timeout > 0");
  need(c.row_policy != RowPolicy::OpenCap || c.row_cap > 0,
       "row_policy \"open-cap\" to come with row_cap > 0");
}

}  // namespace

double DramSpec::peak_bandwidth_bytes_per_s() const {
  return static_cast<double>(org.logical_channels()) * (org.bus_width_bits / 8.0) *
         static_cast<double>(data_rate_mts) * 1e6;
}

std::string resolve_dram_preset(const std::string& name_or_path) {
  namespace fs = std::filesystem;
  if (name_or_path.find('/') != std::string::npos ||
      (name_or_path.size() > 5 && name_or_path.compare(name_or_path.size() - 5, 5, ".json") == 0)) {
    return name_or_path;  // a path: load_json_file reports it if missing
  }
  for (const std::string& dir :
       {std::string("models/machines/dram"), std::string(FUSIM_DRAM_PRESET_DIR)}) {
    const fs::path p = fs::path(dir) / (name_or_path + ".json");
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  throw InputError(fmt::format(
      "unknown DRAM preset \"{}\": expected one of ddr4-3200, ddr5-4800, ddr5-5600, hbm2e, "
      "hbm3, or a path to a preset JSON file{}",
      name_or_path,
      did_you_mean(name_or_path, {"ddr4-3200", "ddr5-4800", "ddr5-5600", "hbm2e", "hbm3"})));
}

namespace {
DramSpec load_preset_file(const JsonView& section, std::int64_t rate_override);
}  // namespace

DramSpec load_dram_preset(const std::string& name_or_path, std::int64_t data_rate_mts) {
  const std::string path = resolve_dram_preset(name_or_path);
  const nlohmann::json doc = load_json_file(path);
  DramSpec spec = load_preset_file(JsonView(doc, path), data_rate_mts);
  spec.name = name_or_path;
  return spec;
}

DramSpec load_dram_spec(const JsonView& section) {
  section.require_object();
  if (section.has("preset")) {
    // A machine's dram section: a preset plus overrides.
    std::vector<std::string_view> allowed = {"preset", "timing", "data_rate_mts"};
    allowed.insert(allowed.end(), kOrgKeys.begin(), kOrgKeys.end());
    allowed.insert(allowed.end(), kCtrlKeys.begin(), kCtrlKeys.end());
    for (const auto& key : section.keys()) {
      bool ok = false;
      for (auto a : allowed) ok = ok || a == key;
      if (!ok) {
        section.at(key).fail(
            "a DRAM override (preset, timing, an organization field such as channels, or a "
            "controller field such as scheduler, mapping, row_policy)");
      }
    }
    // An unknown name is blamed on this file's "preset" member, not reported without a place.
    const JsonView preset = section.at("preset");
    std::string preset_path;
    try {
      preset_path = resolve_dram_preset(preset.as_nonempty_string());
    } catch (const InputError&) {
      preset.fail_got(
          "a DRAM preset (ddr4-3200, ddr5-4800, ddr5-5600, hbm2e, hbm3) or a preset JSON path");
    }
    // Another speed bin of the same device: the preset is read again at that data rate.
    std::int64_t rate = 0;
    if (auto r = section.find("data_rate_mts")) {
      rate = r->as_int_at_least(100);
      if (rate > kMaxDataRate) r->fail_got("a data rate of 100 to 100000 MT/s");
    }
    DramSpec spec = load_dram_preset(preset_path, rate);
    apply_organization(section, spec.org);
    apply_controller(section, spec.ctrl, spec.tCK);
    if (auto t = section.find("timing")) {
      apply_timing(*t, spec.t, spec.tCK);
      if (!t->has("tRC")) spec.t.tRC = std::max(spec.t.tRC, spec.t.tRAS + spec.t.tRP);
    }
    validate(spec, section);
    return spec;
  }
  return load_preset_file(section, 0);
}

namespace {

// A preset file; `rate_override` > 0 replaces its data_rate_mts before any ns timing is
// converted to cycles.
DramSpec load_preset_file(const JsonView& section, std::int64_t rate_override) {
  section.reject_unknown_keys({"name", "standard", "description", "data_rate_mts", "organization",
                               "timing", "controller", "sources"});
  DramSpec spec;
  spec.name = section.get_string("name", section.file());
  spec.standard = section.at("standard").as_nonempty_string();
  spec.data_rate_mts = section.at("data_rate_mts").as_int_at_least(100);
  // (A faster clock would round tCK to 0 ps.)
  if (spec.data_rate_mts > kMaxDataRate)
    section.at("data_rate_mts").fail_got("a data rate of 100 to 100000 MT/s");
  if (rate_override > 0) spec.data_rate_mts = rate_override;
  // The command clock runs at half the data rate (DDR): tCK = 2e6 / rate ps.
  spec.tCK = (2'000'000 + spec.data_rate_mts / 2) / spec.data_rate_mts;
  const JsonView org = section.at("organization");
  org.require_object();
  org.reject_unknown_keys(kOrgKeys);
  for (const char* key : {"ranks", "bankgroups", "banks_per_group", "rows", "columns",
                          "bus_width_bits", "burst_length"}) {
    org.at(key);  // required in a preset: no silent defaults for the device itself
  }
  apply_organization(org, spec.org);
  const JsonView timing = section.at("timing");
  apply_timing(timing, spec.t, spec.tCK);
  if (!timing.has("tBL")) spec.t.tBL = spec.org.burst_length / 2;
  if (!timing.has("tRC")) spec.t.tRC = spec.t.tRAS + spec.t.tRP;
  if (auto c = section.find("controller")) {
    c->require_object();
    c->reject_unknown_keys(kCtrlKeys);
    apply_controller(*c, spec.ctrl, spec.tCK);
  }
  // At another rate the caller validates, after its own timing overrides (cycle counts
  // of the preset's speed bin may need them, and the error is then the caller's).
  if (rate_override == 0) validate(spec, section);
  return spec;
}

}  // namespace

const char* to_string(RowPolicy policy) {
  switch (policy) {
    case RowPolicy::Open:
      return "open";
    case RowPolicy::Closed:
      return "closed";
    case RowPolicy::OpenTimeout:
      return "open-timeout";
    case RowPolicy::OpenCap:
      return "open-cap";
  }
  return "?";
}

const char* to_string(RefreshMode mode) {
  return mode == RefreshMode::AllBank ? "all-bank" : "per-bank";
}

}  // namespace fusim::dram
