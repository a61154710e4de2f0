// `fusim dram`: replays a DRAMsim3-format request trace on a DRAM preset (or a preset file,
// or a machine file's "dram" object) and prints bandwidth, latency distribution and row
// buffer behaviour, so fusim can be compared side by side with DRAMsim3 and Ramulator on
// identical traces. `fusim dram gen` writes such traces.
#include <fmt/format.h>
#include <chrono>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/output_format.h"
#include "core/error.h"
#include "core/json_view.h"
#include "core/memory_budget.h"
#include "core/output_file.h"
#include "core/units.h"
#include "mem/dram/trace_replay.h"

namespace fusim::cli {
namespace {

struct DramOptions {
  std::string config, trace;
  std::int64_t cycles = 0;
  std::string scheduler, mapping, row_policy;
  OutputFormat format;
};

struct GenOptions {
  std::string pattern = "random", output, footprint = "1GiB", stride = "4KiB";
  std::uint64_t reads = 1, writes = 0, count = 0, seed = 1;
  std::int64_t interval = 1;
};

// A preset name, a preset file, a {"preset": ...} override object or a machine file with
// a "dram" member.
dram::DramSpec load_config(const std::string& config) {
  if (config.find('/') == std::string::npos &&
      (config.size() < 5 || config.compare(config.size() - 5, 5, ".json") != 0)) {
    return dram::load_dram_preset(config);
  }
  const nlohmann::json doc = load_json_file(config);
  const JsonView root(doc, config);
  root.require_object();
  dram::DramSpec spec =
      root.has("dram") ? dram::load_dram_spec(root.at("dram")) : dram::load_dram_spec(root);
  spec.name = config;
  return spec;
}

std::string fixed(double v, int digits) {
  return fmt::format("{:.{}f}", v, digits);
}

// The replay's work grows with the simulated span, not only with the requests: every
// tREFI the controller refreshes each rank (JESD79-4 4.26), so an arrival cycle near 2^63
// kept a 3-line trace replaying until killed. Refused before any work when reaching the
// last arrival would take more than kMaxRefreshes refresh commands (1e7 took 0.8 s of CPU
// on DDR4-3200 here, so about 8 s), unless --cycles stops the replay before that.
constexpr double kMaxRefreshes = 1e8;

void check_reachable(const dram::DramSpec& spec, const std::vector<dram::TraceRequest>& trace,
                     const DramOptions& opt) {
  const double ranks = static_cast<double>(spec.org.logical_channels()) * spec.org.ranks;
  const dram::Cycle limit =
      static_cast<dram::Cycle>(kMaxRefreshes / ranks * static_cast<double>(spec.t.tREFI));
  if (opt.cycles > 0 && opt.cycles <= limit) return;
  for (std::size_t i = 0; i < trace.size(); ++i)
    if (trace[i].arrival > limit)
      throw InputError(
          opt.trace, fmt::format("request {}", i + 1),
          fmt::format("an arrival cycle at most {} (a refresh every tREFI = {} cycles on each "
                      "of {} ranks: later arrivals need over 1e8 refreshes; --cycles stops "
                      "the replay sooner), got {}",
                      limit, spec.t.tREFI, static_cast<std::int64_t>(ranks), trace[i].arrival));
}

void run_dram(const DramOptions& opt) {
  if (opt.config.empty() || opt.trace.empty()) {
    throw InputError(
        "dram: expected --config PRESET_OR_FILE and --trace FILE (or the subcommand gen)");
  }
  dram::DramSpec spec = load_config(opt.config);
  if (!opt.scheduler.empty()) spec.ctrl.scheduler = opt.scheduler;
  if (!opt.mapping.empty()) spec.ctrl.mapping = opt.mapping;
  if (!opt.row_policy.empty()) {
    if (opt.row_policy == "open")
      spec.ctrl.row_policy = dram::RowPolicy::Open;
    else if (opt.row_policy == "closed")
      spec.ctrl.row_policy = dram::RowPolicy::Closed;
    else
      throw InputError(
          "--row-policy: expected open or closed (others need their parameter "
          "in a config file: row_timeout, row_cap)");
  }
  const std::vector<dram::TraceRequest> trace = dram::read_dramsim3_trace(opt.trace);
  // An empty trace has no bandwidth or latency to report: a wrong file, not a result of 0.
  if (trace.empty())
    throw InputError(fmt::format(
        "{}: expected at least one request (lines ADDRESS READ|WRITE CYCLE), got none", opt.trace));
  check_reachable(spec, trace, opt);
  EventQueue queue;
  dram::DramSystem system(spec, queue, opt.config);
  std::fprintf(stderr, "fusim dram: replaying %zu requests on %s\n", trace.size(),
               spec.name.c_str());
  const auto t0 = std::chrono::steady_clock::now();
  const dram::ReplayResult r =
      dram::replay_trace(system, queue, trace, opt.cycles > 0 ? opt.cycles : dram::kNoCycle);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const dram::DramStats& s = r.stats;
  const double seconds = to_seconds(s.elapsed);
  const double bw = s.bandwidth_bytes_per_s() / 1e9;
  auto ns = [&](double cycles) { return s.cycles_to_ns(cycles); };
  const double rmean = ns(s.read_latency.mean()), rp50 = ns(s.read_latency.percentile(0.5)),
               rp99 = ns(s.read_latency.percentile(0.99));
  const double wmean = ns(s.write_latency.mean()), wp50 = ns(s.write_latency.percentile(0.5)),
               wp99 = ns(s.write_latency.percentile(0.99));
  const double rate = wall > 0 ? static_cast<double>(s.requests()) / wall : 0;

  // No request of a kind, no latency or row-outcome share of it: null, not 0.
  const auto row_accesses = s.row_hits + s.row_misses + s.row_conflicts;
  auto row_share = [&](double v) { return row_accesses ? nlohmann::json(v) : nlohmann::json(); };
  auto latency = [](std::uint64_t count, double mean, double p50, double p99) {
    if (count == 0) return nlohmann::json{{"mean", nullptr}, {"p50", nullptr}, {"p99", nullptr}};
    return nlohmann::json{{"mean", mean}, {"p50", p50}, {"p99", p99}};
  };
  nlohmann::json per_requester = nlohmann::json::array();
  for (std::size_t i = 0; i < s.requesters.size(); ++i) {
    const auto& q = s.requesters[i];
    if (q.accesses == 0) continue;
    per_requester.push_back(
        {{"requester", i},
         {"reads", q.reads},
         {"writes", q.writes},
         {"bytes", q.bytes},
         {"row_hit_rate", static_cast<double>(q.row_hits) / q.accesses},
         {"read_latency_ns_mean",
          q.reads ? nlohmann::json(ns(static_cast<double>(q.read_latency_cycles) / q.reads))
                  : nlohmann::json()}});
  }
  // cads: the epochs each of its policies ran (summed over channels).
  nlohmann::json policy_epochs = nlohmann::json::object();
  for (std::size_t i = 0; i < s.policy_epochs.size() && i < dram::kCadsPolicyCount; ++i)
    policy_epochs[dram::kCadsPolicies[i]] = s.policy_epochs[i];
  nlohmann::json json = {{"preset", spec.name},
                         {"standard", spec.standard},
                         {"scheduler", spec.ctrl.scheduler},
                         {"mapping", spec.ctrl.mapping},
                         {"row_policy", dram::to_string(spec.ctrl.row_policy)},
                         {"requests", s.requests()},
                         {"reads", s.reads},
                         {"writes", s.writes},
                         {"cycles", r.cycles},
                         {"seconds_simulated", seconds},
                         {"bandwidth_gbps", bw},
                         {"peak_bandwidth_gbps", spec.peak_bandwidth_bytes_per_s() / 1e9},
                         {"read_latency_ns", latency(s.reads, rmean, rp50, rp99)},
                         {"write_latency_ns", latency(s.writes, wmean, wp50, wp99)},
                         {"row_hit_rate", row_share(s.row_hit_rate())},
                         {"row_miss_rate", row_share(s.row_miss_rate())},
                         {"row_conflict_rate", row_share(s.row_conflict_rate())},
                         {"activates", s.activates},
                         {"refreshes", s.refreshes},
                         {"per_bank_refreshes", s.per_bank_refreshes},
                         {"bank_utilization", s.bank_utilization()},
                         {"per_requester", per_requester},
                         {"wall_seconds", wall},
                         {"requests_per_s", rate}};
  if (!s.policy_epochs.empty()) json["cads_policy_epochs"] = policy_epochs;
  Table table({"metric", "value"});
  table.add_row({"preset", spec.name});
  table.add_row({"scheduler / mapping / row policy",
                 fmt::format("{} / {} / {}", spec.ctrl.scheduler, spec.ctrl.mapping,
                             dram::to_string(spec.ctrl.row_policy))});
  table.add_row(
      {"requests (reads, writes)", fmt::format("{} ({}, {})", s.requests(), s.reads, s.writes)});
  table.add_row({"DRAM cycles", std::to_string(r.cycles)});
  table.add_row({"simulated time (us)", fixed(seconds * 1e6, 3)});
  table.add_row(
      {"bandwidth (GB/s)", fmt::format("{} of {} peak", fixed(bw, 2),
                                       fixed(spec.peak_bandwidth_bytes_per_s() / 1e9, 1))});
  table.add_row({"read latency mean / p50 / p99 (ns)",
                 fmt::format("{} / {} / {}", fixed(rmean, 1), fixed(rp50, 1), fixed(rp99, 1))});
  table.add_row({"write latency mean / p50 / p99 (ns)",
                 fmt::format("{} / {} / {}", fixed(wmean, 1), fixed(wp50, 1), fixed(wp99, 1))});
  table.add_row({"row hit / miss / conflict",
                 fmt::format("{} / {} / {}", fixed(s.row_hit_rate(), 3),
                             fixed(s.row_miss_rate(), 3), fixed(s.row_conflict_rate(), 3))});
  table.add_row({"activates", std::to_string(s.activates)});
  table.add_row(
      {"refreshes (all-bank, per-bank)", fmt::format("{}, {}", s.refreshes, s.per_bank_refreshes)});
  table.add_row({"bank utilization (row open)", fixed(s.bank_utilization(), 3)});
  if (!s.policy_epochs.empty()) {
    std::string epochs;
    for (auto it = policy_epochs.begin(); it != policy_epochs.end(); ++it)
      epochs += fmt::format("{}{} {}", epochs.empty() ? "" : ", ", it.key(), it.value().dump());
    table.add_row({"cads epochs per policy", epochs});
  }
  table.add_row({"wall time (s)", fixed(wall, 3)});
  table.add_row({"requests per second", fixed(rate, 0)});
  // --csv: one line of the JSON's scalars (per_requester is --json only).
  CsvRecords csv{nlohmann::json::array({json}), {}};
  for (const auto& [key, value] : json.items()) {
    if (value.is_object()) {
      for (const auto& [sub, v] : value.items()) csv.columns.push_back(key + "." + sub);
    } else if (!value.is_array()) {
      csv.columns.push_back(key);
    }
  }
  print_result(opt.format, json, table, {csv});
}

std::uint64_t byte_option(const std::string& text, const char* flag) {
  const auto v = parse_bytes(text);
  if (!v || *v <= 0)
    throw InputError(
        fmt::format("{}: expected a size such as 64, 4KiB, 1GiB, got \"{}\"", flag, text));
  return static_cast<std::uint64_t>(*v);
}

void run_gen(const GenOptions& opt) {
  check_output_path(opt.output, "-o");
  dram::TraceGenOptions o;
  o.pattern = opt.pattern == "stream"    ? dram::TracePattern::Stream
              : opt.pattern == "strided" ? dram::TracePattern::Strided
                                         : dram::TracePattern::Random;
  if (opt.reads + opt.writes == 0)
    throw InputError("--reads/--writes: expected a mix with at least one non-zero weight");
  if (opt.count == 0) throw InputError("-n: expected a positive number of requests");
  if (opt.interval < 0) throw InputError("--interval: expected cycles >= 0");
  // The trace is built in memory, then written as text (about 30 B a line): refused before
  // allocating when that would not fit the memory budget (core/memory_budget.h).
  check_memory_budget("-n", "", "generated trace (requests and their text)", opt.count,
                      sizeof(dram::TraceRequest) + 32);
  if (opt.interval > 0 && opt.count > static_cast<std::uint64_t>(dram::kNoCycle / opt.interval))
    throw InputError(fmt::format(
        "--interval: expected arrival cycles that fit 64 bits ({} requests x {} cycles do not)",
        opt.count, opt.interval));
  o.reads = opt.reads;
  o.writes = opt.writes;
  o.count = opt.count;
  o.seed = opt.seed;
  o.interval = opt.interval;
  o.footprint = byte_option(opt.footprint, "--footprint");
  o.stride = byte_option(opt.stride, "--stride");
  dram::write_dramsim3_trace(opt.output, dram::generate_trace(o));
  std::fprintf(stderr, "fusim dram gen: wrote %llu requests to %s\n",
               static_cast<unsigned long long>(opt.count), opt.output.c_str());
}

}  // namespace

void add_dram_command(CLI::App& app) {
  auto opt = std::make_shared<DramOptions>();
  CLI::App* cmd = app.add_subcommand(
      "dram",
      "Replay a DRAM request trace on a DRAM model and print bandwidth, read/write latency\n"
      "(mean, p50, p99), row hit/miss/conflict rates, refreshes and bank utilization.\n"
      "Trace format (DRAMsim3): one request per line, '0xADDR READ|WRITE CYCLE', CYCLE the\n"
      "arrival in DRAM clock cycles (non-decreasing); requests are 64 B; a request that finds\n"
      "its queue full waits, like DRAMsim3's trace front end. bandwidth_gbps is in GB/s\n"
      "(1e9 bytes). wall_seconds and requests_per_s time the replay alone (not parsing).\n"
      "Presets: ddr4-3200, ddr5-4800, ddr5-5600, hbm2e, hbm3 (models/machines/dram/).\n"
      "Example:\n"
      "  fusim dram gen --pattern random -n 100000 -o r.trc && fusim dram --config hbm3 --trace "
      "r.trc");
  cmd->add_option("--config", opt->config,
                  "Preset name, preset JSON file, a {\"preset\": ..., overrides} file, or a "
                  "machine file with a \"dram\" object");
  cmd->add_option("--trace", opt->trace, "DRAMsim3-format trace file");
  cmd->add_option("--cycles", opt->cycles,
                  "Stop after this many DRAM cycles (0: run the whole trace)")
      ->check(int_range(0, std::numeric_limits<std::int64_t>::max(), "0: the whole trace"))
      ->capture_default_str();
  cmd->add_option("--scheduler", opt->scheduler,
                  "Override the scheduler: fcfs, frfcfs, frfcfs-cap, stream-aware, cads (learns "
                  "which of the other four to run, per epoch; settings in the config's "
                  "\"cads\" object)");
  cmd->add_option("--mapping", opt->mapping,
                  "Override the address mapping, fields MSB to LSB from Ro Ra Bg Ba Co Ch "
                  "(e.g. RoRaBaCoBgCh, RoBaRaCoCh)");
  cmd->add_option("--row-policy", opt->row_policy, "Override the row policy: open or closed");
  add_output_flags(cmd, opt->format);
  cmd->require_subcommand(0, 1);

  auto gen = std::make_shared<GenOptions>();
  CLI::App* g = cmd->add_subcommand(
      "gen",
      "Write a synthetic DRAMsim3-format trace: stream (consecutive 64 B lines), random\n"
      "(uniform 64 B lines in --footprint) or strided (--stride apart, wrapping in\n"
      "--footprint); reads and writes mixed by the weights --reads and --writes, one request\n"
      "every --interval cycles. Deterministic for a given --seed.\n"
      "Example:\n"
      "  fusim dram gen --pattern strided --stride 8KiB -n 50000 -o s.trc");
  g->add_option("--pattern", gen->pattern, "stream | random | strided")
      ->check(CLI::IsMember({"stream", "random", "strided"}))
      ->capture_default_str();
  g->add_option("--reads", gen->reads, "Read weight of the mix")->capture_default_str();
  g->add_option("--writes", gen->writes, "Write weight of the mix")->capture_default_str();
  g->add_option("-n", gen->count, "Number of requests")->required();
  g->add_option("-o", gen->output, "Output trace file")->required();
  g->add_option("--interval", gen->interval, "Arrival cycles between requests")
      ->capture_default_str();
  g->add_option("--footprint", gen->footprint, "Bytes addressed")->capture_default_str();
  g->add_option("--stride", gen->stride, "Stride of the strided pattern")->capture_default_str();
  g->add_option("--seed", gen->seed, "Random seed")->capture_default_str();
  g->callback([gen] { run_gen(*gen); });

  cmd->callback([opt, g] {
    if (!g->parsed()) run_dram(*opt);
  });
}

}  // namespace fusim::cli
