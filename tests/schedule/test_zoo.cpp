// resnet50 and gpt2-small: every ordering x optimizer x impl passes the checker and
// updates every param exactly once per step. The bundled traces are used when present,
// else the same networks are generated in memory.
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <set>

#include "networks/networks.h"
#include "schedule/optimizer.h"
#include "schedule/schedule.h"
#include "workload/trace_io.h"

using namespace fusim::schedule;

namespace {
fusim::workload::Trace zoo_trace(const std::string& name) {
  std::string path = std::string(FUSIM_SOURCE_DIR) + "/traces/" + name + ".json";
  if (std::filesystem::exists(path)) return fusim::workload::load_trace(path);
  fusim::networks::NetworkOptions options;
  options.batch = 32;
  return fusim::networks::make_network(name, options);
}

// Updates per (param name, step), counted from the params each U op writes.
std::map<std::pair<std::string, int>, int> updates(const Schedule& s) {
  std::map<std::pair<std::string, int>, int> count;
  for (const auto& op : s.ops) {
    if (op.kind != OpKind::Update) continue;
    std::set<int> written;
    for (const auto& pass : op.passes)
      for (auto a : pass.accesses)
        if (s.tensors[std::size_t(a.tensor)].category == TensorCategory::Weights &&
            a.mode != AccessMode::Read)
          written.insert(a.tensor);
    for (int t : written) ++count[{s.tensors[std::size_t(t)].name, op.step}];
  }
  return count;
}

void check_all(const fusim::workload::Trace& trace) {
  std::vector<std::string> params;
  for (const auto& layer : trace.layers)
    for (const auto& p : layer.params) params.push_back(p.name);
  REQUIRE(!params.empty());
  for (auto ordering : {Ordering::Eager, Ordering::BackwardFused, Ordering::ForwardFused})
    for (const auto& spec : optimizer_table())
      for (auto impl : {OptimizerImpl::Loop, OptimizerImpl::Foreach, OptimizerImpl::Fused}) {
        ScheduleOptions o;
        o.ordering = ordering;
        o.optimizer = std::string(spec.name);
        o.impl = impl;
        o.gpu_streams = true;
        auto s = build_schedule(trace, o);
        INFO(trace.model << " " << to_string(ordering) << " " << spec.name << " "
                         << to_string(impl));
        auto errors = check_schedule(trace, s);
        CHECK(errors.empty());
        if (!errors.empty()) FAIL_CHECK(errors.front());
        auto count = updates(s);
        CHECK(count.size() == params.size() * std::size_t(s.steps));
        for (const auto& p : params)
          for (int t = 0; t < s.steps; ++t) CHECK(count[{p, t}] == 1);
      }
}
}  // namespace

TEST_CASE("resnet50: every ordering x optimizer x impl is valid") {
  auto trace = zoo_trace("resnet50");
  CHECK(trace.param_count() == 25557032);  // torchvision resnet50
  check_all(trace);
}

TEST_CASE("gpt2-small: every ordering x optimizer x impl is valid") {
  auto trace = zoo_trace("gpt2-small");
  check_all(trace);
}
