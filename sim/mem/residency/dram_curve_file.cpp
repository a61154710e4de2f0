#include "mem/residency/dram_curve_file.h"
#include "core/hash.h"

#include <fmt/format.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <unistd.h>

#include <nlohmann/json.hpp>

namespace fusim::residency {
std::string CurveFileName::text() const {
  return fmt::format("{}|fingerprint {}|{} regions {} write share {:a}", key, fingerprint,
                     to_string(pattern), regions, write_share);
}

std::string CurveFileName::path() const {
  return (std::filesystem::path(dir) / fmt::format("dram-curve-{:016x}.json", fnv1a(text())))
      .string();
}

std::optional<DramCurve> read_curve_file(const CurveFileName& name) {
  std::ifstream in(name.path());
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  try {
    const nlohmann::json j = nlohmann::json::parse(text.str());
    if (j.at("key").get<std::string>() != name.text()) return std::nullopt;
    DramCurve c;
    for (const auto& p : j.at("points")) {
      CurvePoint point;
      point.cores = p.at(0).get<int>();
      point.bandwidth = std::strtod(p.at(1).get<std::string>().c_str(), nullptr);
      point.read_latency = p.at(2).get<Tick>();
      c.points.push_back(point);
    }
    if (c.points.empty()) return std::nullopt;
    return c;
  } catch (const std::exception&) {
    return std::nullopt;  // unreadable: measured again and rewritten
  }
}

void write_curve_file(const CurveFileName& name, const DramCurve& curve) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : curve.points)
    points.push_back({p.cores, fmt::format("{:a}", p.bandwidth), p.read_latency});
  const nlohmann::json j = {{"key", name.text()}, {"points", points}};
  std::error_code ec;
  std::filesystem::create_directories(name.dir, ec);
  // Written next to its final name and renamed over it: a reader sees all of it or none.
  const std::string path = name.path();
  const std::string tmp = fmt::format("{}.{}-{}.tmp", path, ::getpid(),
                                      std::hash<std::thread::id>()(std::this_thread::get_id()));
  {
    std::ofstream out(tmp);
    if (!out) return;
    out << j.dump() << "\n";
    if (!out) {
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

std::string default_cache_dir() {
  if (const char* d = std::getenv("FUSIM_CACHE_DIR")) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return (std::filesystem::path(x) / "fusim").string();
  if (const char* h = std::getenv("HOME"); h && *h)
    return (std::filesystem::path(h) / ".cache" / "fusim").string();
  return "";
}

}  // namespace fusim::residency
