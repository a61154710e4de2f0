#pragma once
// DRAM curves kept on disk between processes (dram_curve.h): one small JSON file per curve
// in a cache folder, named by a hash of everything that decides it — the DRAM spec and
// the measurement's parameters (dram_curve_key), the curve's pattern, region count and
// write share, and a fingerprint of what the controller does to a fixed probe (so that a
// controller that changes its behaviour never reads curves another one measured). The file
// repeats its whole key and is read only when that matches exactly; numbers round-trip
// exactly (hex floats), so a curve read back is the curve measured. A missing, unreadable
// or foreign file is measured again; a folder that cannot be written is left alone: the
// cache only ever saves time.
#include <optional>
#include <string>

#include "mem/dram/dram_spec.h"
#include "mem/residency/dram_curve.h"

namespace fusim::residency {

struct CurveFileName {
  std::string dir, key, fingerprint;
  DramPattern pattern = DramPattern::Stream;
  int regions = 1;
  double write_share = 0;
  std::string text() const;  // the full key written in the file
  std::string path() const;  // dir/dram-curve-<hash of text()>.json
};

std::optional<DramCurve> read_curve_file(const CurveFileName& name);
void write_curve_file(const CurveFileName& name, const DramCurve& curve);

// The behaviour of the controller on a fixed small probe, as text (dram_probe.cpp).
std::string controller_fingerprint(const dram::DramSpec& spec);

// $FUSIM_CACHE_DIR when set (empty: no cache), else $XDG_CACHE_HOME/fusim, else
// $HOME/.cache/fusim, else "" (no cache).
std::string default_cache_dir();

}  // namespace fusim::residency
