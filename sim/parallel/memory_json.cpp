#include "parallel/memory_json.h"

namespace fusim::parallel {

nlohmann::json plan_json(const MemoryQuery& q) {
  const ParallelPlan& p = q.plan;
  return {{"tp", p.tp},
          {"pp", p.pp},
          {"dp", p.dp},
          {"cp", p.cp},
          {"gpus", p.gpus()},
          {"microbatch", p.microbatch},
          {"global_batch", p.global_batch},
          {"microbatches", p.microbatches()},
          {"pipeline_schedule", std::string(to_string(p.schedule))},
          {"virtual_stages", p.virtual_stages},
          {"recompute", std::string(to_string(p.recompute))},
          {"sequence_parallel", p.sequence_parallel},
          {"distributed_optimizer", p.distributed_optimizer},
          {"ordering", std::string(schedule::to_string(q.ordering))},
          {"optimizer", q.optimizer},
          {"impl", std::string(schedule::to_string(q.impl))},
          {"mixed_precision", q.mixed_precision},
          {"attention", std::string(schedule::to_string(q.attention))}};
}

nlohmann::json memory_json(const MemoryReport& r, const MemoryQuery& q) {
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& s : r.stages)
    stages.push_back({{"stage", s.stage},
                      {"weights_bytes", s.weights},
                      {"grads_bytes", s.grads},
                      {"optimizer_state_bytes", s.optimizer_state},
                      {"activations_bytes", s.activations},
                      {"buffers_bytes", s.buffers},
                      {"total_bytes", s.total},
                      {"temporaries_bytes", s.temporaries},
                      {"collective_buffers_bytes", s.collectives},
                      {"fragmentation_bytes", s.fragmentation},
                      {"layers", s.layers},
                      {"blocks", s.blocks},
                      {"in_flight_microbatches", s.in_flight}});
  return {{"model", r.model},
          {"params", r.params},
          {"plan", plan_json(q)},
          {"stages", stages},
          {"max_total_bytes", r.max_total},
          {"gpu_memory_bytes", r.gpu_memory},
          {"usable_fraction", kUsableFraction},
          {"fits", r.fits}};
}

nlohmann::json search_json(const std::vector<SearchResult>& results, const SearchSpace& space) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : results) {
    nlohmann::json row = plan_json(r.query);
    row["max_total_bytes"] = r.max_total;
    row["headroom"] = r.headroom;
    rows.push_back(row);
  }
  return {{"gpus", space.gpus}, {"fitting", rows}};
}

}  // namespace fusim::parallel
