#pragma once
// What one DRAM system is: organisation, JEDEC timing in clock cycles, controller settings.
// Loaded from a preset in models/machines/dram/ (each number cited there) with the fields
// of the machine's "dram" object overriding it.
#include <cstdint>
#include <string>

#include "core/json_view.h"
#include "core/time.h"

namespace fusim::dram {

using Cycle = std::int64_t;  // DRAM command-clock cycles (tCK)
constexpr Cycle kNoCycle = INT64_MAX;

struct Organization {
  int channels = 1;         // independent channels
  int pseudo_channels = 1;  // per channel (HBM); each has its own data bus and banks
  int ranks = 1;
  int bankgroups = 1;
  int banks_per_group = 1;
  std::int64_t rows = 1;
  std::int64_t columns = 1;  // column addresses per row (one per bus_width_bits beat)
  int bus_width_bits = 64;   // data bus of one (pseudo-)channel
  int burst_length = 8;      // beats per column command (BL)

  // Channels as the controller sees them: every pseudo-channel is scheduled independently.
  int logical_channels() const { return channels * pseudo_channels; }
  int banks_per_rank() const { return bankgroups * banks_per_group; }
  int banks_per_channel() const { return ranks * banks_per_rank(); }
  // Bytes moved by one column command (the access atom): bus bytes x BL.
  int atom_bytes() const { return bus_width_bits / 8 * burst_length; }
};

// All in cycles of the command clock (tCK). Names follow JESD79-4/-5.
struct Timing {
  Cycle tCL = 0, tCWL = 0, tRCD = 0, tRP = 0, tRAS = 0, tRC = 0;
  Cycle tBL = 0;  // data-bus cycles of one burst: BL / 2 (double data rate)
  Cycle tCCD_S = 0, tCCD_L = 0, tRRD_S = 0, tRRD_L = 0, tFAW = 0;
  Cycle tWR = 0, tWTR_S = 0, tWTR_L = 0, tRTP = 0, tRTRS = 0;
  Cycle tREFI = 0, tRFC = 0;                  // all-bank refresh
  Cycle tREFIpb = 0, tRFCpb = 0, tRREFD = 0;  // per-bank refresh (0 = not in the standard)
};

enum class RefreshMode { AllBank, PerBank };
enum class RowPolicy { Open, Closed, OpenTimeout, OpenCap };

// The cads scheduler's learning agent (sim/mem/dram/cads.cpp): tabular Q-learning, one
// decision per epoch (epoch_cycles), epsilon-greedy exploration from a seeded generator.
struct CadsConfig {
  double learning_rate = 0.1;  // alpha in (0, 1]
  double exploration = 0.05;   // epsilon in [0, 1]: epochs that try a random policy
  double discount = 0;         // gamma in [0, 1): weight of the next epoch's value
  std::uint64_t seed = 1;
};

struct ControllerConfig {
  std::string scheduler = "frfcfs";
  std::string mapping = "RoBaRaCoCh";
  bool xor_bank_hash = false;
  RowPolicy row_policy = RowPolicy::Open;
  Cycle row_timeout = 0;  // open-timeout: idle cycles before the row is closed
  int row_cap = 0;        // open-cap: column accesses after which the row is closed;
                          // frfcfs-cap: row hits that may bypass an older conflict
  RefreshMode refresh = RefreshMode::AllBank;
  int read_queue = 32;  // entries per (pseudo-)channel
  int write_queue = 32;
  int write_high_watermark = 24;   // start draining writes at this many
  int write_low_watermark = 8;     // stop draining at this many (if reads wait)
  int interleave_bytes = 64;       // a cache line stays in one row of one bank
  Cycle starvation_cycles = 2000;  // stream-aware: age after which a request goes first
  Cycle epoch_cycles = 10000;      // stream-aware and cads: measuring window
  CadsConfig cads;
};

struct DramSpec {
  std::string name;      // preset name or file
  std::string standard;  // "DDR4", "DDR5", "HBM2E", "HBM3"
  std::int64_t data_rate_mts = 0;
  Tick tCK = 0;  // ps, rounded to an integer (DDR5-4800: 416.67 -> 417)
  Organization org;
  Timing t;
  ControllerConfig ctrl;

  Clock clock() const { return Clock(tCK); }
  // channels x pseudo-channels x bus bytes x data rate (the datasheet figure).
  double peak_bandwidth_bytes_per_s() const;
};

// `section` is a machine's "dram" object: {"preset": name-or-path, ...overrides}, or a
// preset file itself (it has "standard"). Every value is checked; errors name the file
// and JSON path.
DramSpec load_dram_spec(const JsonView& section);
// A preset by name ("ddr4-3200") or path to a JSON file. `data_rate_mts` > 0 runs the
// device at another data rate: tCK follows it, timings the preset gives in ns stay those
// ns (converted at the new tCK), timings given in cycles stay those cycles.
DramSpec load_dram_preset(const std::string& name_or_path, std::int64_t data_rate_mts = 0);
// Where a preset name resolves to (throws InputError listing the known names).
std::string resolve_dram_preset(const std::string& name_or_path);

const char* to_string(RowPolicy policy);
const char* to_string(RefreshMode mode);

}  // namespace fusim::dram
