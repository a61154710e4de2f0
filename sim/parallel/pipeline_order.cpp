#include "parallel/pipeline_order.h"

#include <fmt/format.h>
#include <algorithm>
#include <deque>

#include "core/error.h"

namespace fusim::parallel {
namespace {

void add(std::vector<Pass>& out, PassKind kind, int mb, int chunk = 0) {
  out.push_back({kind, mb, chunk});
}

// Megatron-LM forward_backward_pipelining_without_interleaving; ZB-H1 adds W.
std::vector<Pass> one_f_one_b(int p, int s, int m, PipelineSchedule schedule) {
  const bool h1 = schedule == PipelineSchedule::ZbH1, split = h1;
  const int warmup = std::min(p - s - 1, m);
  const int delay = h1 ? s : 0;  // ZB-H1: stage s runs W of microbatch i - s after B(i)
  std::vector<Pass> out;
  int next_w = 0;
  auto backward = [&](int i) {
    add(out, PassKind::B, i);
    if (split && i - delay >= next_w) add(out, PassKind::W, next_w++);
  };
  for (int i = 0; i < warmup; ++i) add(out, PassKind::F, i);
  for (int i = 0; i < m - warmup; ++i) {
    add(out, PassKind::F, warmup + i);
    backward(i);
  }
  for (int i = m - warmup; i < m; ++i) backward(i);
  while (split && next_w < m) add(out, PassKind::W, next_w++);
  return out;
}

// Megatron-LM forward_backward_pipelining_with_interleaving (get_model_chunk_id).
std::vector<Pass> interleaved(int p, int s, int m, int v) {
  const int total = m * v;
  const int warmup = m == p ? total : std::min((p - s - 1) * 2 + (v - 1) * p, total);
  auto chunk = [&](int k, bool forward) {
    int c = (k % (p * v)) / p;
    return forward ? c : v - 1 - c;
  };
  auto microbatch = [&](int k) { return (k / (p * v)) * p + k % p; };
  std::vector<Pass> out;
  for (int k = 0; k < warmup; ++k) add(out, PassKind::F, microbatch(k), chunk(k, true));
  for (int i = 0; i < total - warmup; ++i) {
    int k = warmup + i;
    add(out, PassKind::F, microbatch(k), chunk(k, true));
    add(out, PassKind::B, microbatch(i), chunk(i, false));
  }
  for (int k = total - warmup; k < total; ++k)
    add(out, PassKind::B, microbatch(k), chunk(k, false));
  return out;
}

// Zero-bubble schedules as unit-time list schedules (T_F = T_B = T_W), the greedy of Qi et al.
// 2024's automatic scheduler: each time unit every stage runs one pass: a ready B (lowest
// microbatch, the chunk nearer the loss first), else a ready F while it holds fewer than
// `limit` chunk-microbatches (F done, W not), else its oldest pending W. F(c) needs F(c-1) of
// the same microbatch finished, B(c) needs B(c+1) (the last chunk: its own F), W(c) its B.
//  zb-h2: one chunk per stage, limit 2p - 1 (Qi et al. Sec. 2.2: ZB-H2's peak (2p - 1) M_B);
//         stages hold the extra forwards that fill the warm-up and cool-down bubbles;
//  zb-v:  two chunks per stage in a V, chunk c on stage c for c < p and on 2p - 1 - c after,
//         limit 2p chunk-microbatches (ZB-V's 1F1B memory p M_B, Sec. 6).
std::vector<Pass> list_schedule(int p, int stage, int m, bool v_shape) {
  const int chunks = v_shape ? 2 * p : p;
  const int limit = v_shape ? 2 * p : 2 * p - 1;
  // done time per (kind, chunk, mb); -1 not yet.
  std::vector<std::vector<int>> f(chunks, std::vector<int>(m, -1)), b = f, w = f;
  std::vector<std::vector<Pass>> order(p);
  std::vector<int> held(p, 0);
  std::vector<std::deque<std::pair<int, int>>> pending_w(p);  // (chunk, mb) in B order
  int remaining = 3 * chunks * m;
  for (int t = 0; remaining > 0; ++t) {
    FUSIM_ASSERT(t < 64 * chunks * (m + 1), "zero-bubble list schedule makes progress");
    std::vector<std::tuple<PassKind, int, int>> chosen(p, {PassKind::F, -1, -1});
    for (int s = 0; s < p; ++s) {
      std::vector<int> mine{s};
      if (v_shape) mine = {2 * p - 1 - s, s};  // nearer the loss first
      auto ready = [&](const std::vector<std::vector<int>>& dep, int c, int j) {
        return dep[std::size_t(c)][std::size_t(j)] >= 0 && dep[std::size_t(c)][std::size_t(j)] < t;
      };
      bool found = false;
      for (int j = 0; j < m && !found; ++j)
        for (int c : mine)
          if (b[std::size_t(c)][std::size_t(j)] < 0 && ready(f, c, j) &&
              (c == chunks - 1 || ready(b, c + 1, j))) {
            chosen[std::size_t(s)] = {PassKind::B, c, j};
            found = true;
            break;
          }
      if (!found && held[std::size_t(s)] < limit)
        for (int j = 0; j < m && !found; ++j)
          for (int c : mine)
            if (f[std::size_t(c)][std::size_t(j)] < 0 && (c == 0 || ready(f, c - 1, j))) {
              chosen[std::size_t(s)] = {PassKind::F, c, j};
              found = true;
              break;
            }
      if (!found && !pending_w[std::size_t(s)].empty()) {
        auto [c, j] = pending_w[std::size_t(s)].front();
        if (ready(b, c, j)) {
          pending_w[std::size_t(s)].pop_front();
          chosen[std::size_t(s)] = {PassKind::W, c, j};
        }
      }
    }
    for (int s = 0; s < p; ++s) {
      auto [kind, c, j] = chosen[std::size_t(s)];
      if (c < 0) continue;
      auto& done = kind == PassKind::F ? f : kind == PassKind::B ? b : w;
      done[std::size_t(c)][std::size_t(j)] = t;
      if (kind == PassKind::F) ++held[std::size_t(s)];
      if (kind == PassKind::B) pending_w[std::size_t(s)].push_back({c, j});
      if (kind == PassKind::W) --held[std::size_t(s)];
      order[std::size_t(s)].push_back({kind, j, c == s ? 0 : 1});  // V: chunk 2p-1-s is 1
      --remaining;
    }
  }
  return order[std::size_t(stage)];
}

}  // namespace

bool splits_weight_gradient(PipelineSchedule schedule) {
  return schedule == PipelineSchedule::ZbH1 || schedule == PipelineSchedule::ZbH2 ||
         schedule == PipelineSchedule::ZbV;
}

std::vector<Pass> stage_passes(const ParallelPlan& plan, int stage) {
  const int p = plan.pp, m = int(plan.microbatches());
  FUSIM_ASSERT(stage >= 0 && stage < p, "stage within the pipeline");
  FUSIM_ASSERT(m >= 1, "a plan with at least one microbatch");
  switch (plan.schedule) {
    case PipelineSchedule::GPipe: {
      std::vector<Pass> out;
      for (int i = 0; i < m; ++i) add(out, PassKind::F, i);
      for (int i = 0; i < m; ++i) add(out, PassKind::B, i);
      return out;
    }
    case PipelineSchedule::Interleaved:
      return interleaved(p, stage, m, plan.virtual_stages);
    case PipelineSchedule::ZbV:
      return list_schedule(p, stage, m, true);
    case PipelineSchedule::ZbH2:
      return list_schedule(p, stage, m, false);
    case PipelineSchedule::OneFOneB:
    case PipelineSchedule::ZbH1:
    case PipelineSchedule::PipeDream2BW:
    case PipelineSchedule::AsyncOneStep:
      return one_f_one_b(p, stage, m, plan.schedule);
  }
  return {};
}

std::string to_string(const Pass& pass) {
  const char* k = pass.kind == PassKind::F ? "F" : pass.kind == PassKind::B ? "B" : "W";
  return fmt::format("{}{}.{}", k, pass.microbatch, pass.chunk);
}

}  // namespace fusim::parallel
