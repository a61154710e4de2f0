#include "parallel/pipeline_order.h"

#include <fmt/format.h>
#include <algorithm>
#include <array>
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

// ZB-H2 as a unit-time list schedule (T_F = T_B = T_W), the greedy of Qi et al. 2024's
// automatic scheduler: each time unit every stage runs one pass: a ready B (lowest
// microbatch), else a ready F while it holds fewer than 2p - 1 microbatches (F done, W not:
// Qi et al. Sec. 2.2, ZB-H2's peak (2p - 1) M_B), else its oldest pending W. F needs F of the
// stage before finished, B the B of the stage after (the last stage: its own F), W its B. The
// extra forwards fill the warm-up bubble and the deferred W passes the cool-down one.
std::vector<Pass> zb_h2(int p, int stage, int m) {
  const int limit = 2 * p - 1;
  // done time per (stage, mb); -1 not yet.
  std::vector<std::vector<int>> f(p, std::vector<int>(m, -1)), b = f;
  std::vector<std::vector<Pass>> order(p);
  std::vector<int> held(p, 0);
  std::vector<std::deque<int>> pending_w(p);  // microbatches in B order
  int remaining = 3 * p * m;
  for (int t = 0; remaining > 0; ++t) {
    FUSIM_ASSERT(t < 64 * p * (m + 1), "zero-bubble list schedule makes progress");
    auto ready = [&](const std::vector<std::vector<int>>& dep, int s, int j) {
      return dep[std::size_t(s)][std::size_t(j)] >= 0 && dep[std::size_t(s)][std::size_t(j)] < t;
    };
    std::vector<Pass> chosen(p, {PassKind::F, -1, 0});
    for (int s = 0; s < p; ++s) {
      auto& c = chosen[std::size_t(s)];
      for (int j = 0; j < m && c.microbatch < 0; ++j)
        if (b[std::size_t(s)][std::size_t(j)] < 0 && ready(f, s, j) &&
            (s == p - 1 || ready(b, s + 1, j)))
          c = {PassKind::B, j, 0};
      if (c.microbatch < 0 && held[std::size_t(s)] < limit)
        for (int j = 0; j < m && c.microbatch < 0; ++j)
          if (f[std::size_t(s)][std::size_t(j)] < 0 && (s == 0 || ready(f, s - 1, j)))
            c = {PassKind::F, j, 0};
      auto& w = pending_w[std::size_t(s)];
      if (c.microbatch < 0 && !w.empty() && ready(b, s, w.front())) {
        c = {PassKind::W, w.front(), 0};
        w.pop_front();
      }
    }
    for (int s = 0; s < p; ++s) {
      const Pass& c = chosen[std::size_t(s)];
      if (c.microbatch < 0) continue;
      const auto j = std::size_t(c.microbatch);
      if (c.kind == PassKind::F) {
        f[std::size_t(s)][j] = t;
        ++held[std::size_t(s)];
      } else if (c.kind == PassKind::B) {
        b[std::size_t(s)][j] = t;
        pending_w[std::size_t(s)].push_back(c.microbatch);
      } else {
        --held[std::size_t(s)];
      }
      order[std::size_t(s)].push_back(c);
      --remaining;
    }
  }
  return order[std::size_t(stage)];
}

// ZB-V (Qi et al. 2024, Sec. 6 and Fig. 8): stage s holds model chunks s (local 0) and
// 2p - 1 - s (local 1), so each microbatch goes down the stages and back up, and the loss is
// on stage 0. The order is the handcrafted V of the paper as PyTorch builds it
// (torch/distributed/pipelining/schedules.py, ScheduleZBVZeroBubble): 2(p - s) - 1 forwards
// of chunk 0; s pairs F1 F0; p - s triples F1 B1 W1; then F0 B0 W0 F1 B1 W1 until every
// forward ran; the cool-down s pairs B0 B1, p - s pairs B0 W0, and the W passes left (chunk 1
// first). At T_F = T_B = T_W it has no bubble once m >= 2p - 1 and holds 2p
// chunk-microbatches of half a stage: 1F1B's p microbatches (tests/parallel). The order is
// built for max(m, 2p - 1) microbatches and the passes of those beyond m dropped, as PyTorch
// does (their slots become idle time).
std::vector<Pass> zb_v(int p, int s, int m) {
  const int n = std::max(m, 2 * p - 1);
  std::array<int, 2> f{0, 0}, b{0, 0}, w{0, 0};
  std::vector<Pass> out;
  auto run = [&](PassKind kind, int chunk) {
    int& next = kind == PassKind::F   ? f[std::size_t(chunk)]
                : kind == PassKind::B ? b[std::size_t(chunk)]
                                      : w[std::size_t(chunk)];
    if (next < m) add(out, kind, next, chunk);
    ++next;
  };
  auto triple = [&](int chunk) {  // B then W of the same microbatch
    run(PassKind::B, chunk);
    run(PassKind::W, chunk);
  };
  for (int i = 0; i < 2 * (p - s) - 1; ++i) run(PassKind::F, 0);
  for (int i = 0; i < s; ++i) {
    run(PassKind::F, 1);
    run(PassKind::F, 0);
  }
  for (int i = 0; i < p - s; ++i) {
    run(PassKind::F, 1);
    triple(1);
  }
  while (f[1] < f[0] || f[0] < n) {
    if (f[0] < n) run(PassKind::F, 0);
    triple(0);
    run(PassKind::F, 1);
    triple(1);
  }
  for (int i = 0; i < s; ++i) {
    run(PassKind::B, 0);
    run(PassKind::B, 1);
  }
  for (int i = 0; i < p - s; ++i) {
    run(PassKind::B, 0);
    run(PassKind::W, 0);
  }
  while (w[1] < b[1]) run(PassKind::W, 1);
  while (w[0] < b[0]) run(PassKind::W, 0);
  FUSIM_ASSERT(f == b && b == w && f[0] == n && f[1] == n, "ZB-V runs every pass once");
  return out;
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
      return zb_v(p, stage, m);
    case PipelineSchedule::ZbH2:
      return zb_h2(p, stage, m);
    case PipelineSchedule::OneFOneB:
    case PipelineSchedule::ZbH1:
    case PipelineSchedule::PipeDream2BW:
    case PipelineSchedule::AsyncOneStep:
      return one_f_one_b(p, stage, m, plan.schedule);
  }
  return {};
}

bool is_asynchronous(PipelineSchedule schedule) {
  return schedule == PipelineSchedule::PipeDream2BW || schedule == PipelineSchedule::AsyncOneStep;
}

std::vector<Pass> asynchronous_passes(const ParallelPlan& plan, int stage, int steps) {
  FUSIM_ASSERT(is_asynchronous(plan.schedule), "an asynchronous schedule");
  FUSIM_ASSERT(stage >= 0 && stage < plan.pp && steps >= 1, "stage and steps in range");
  return one_f_one_b(plan.pp, stage, steps * int(plan.microbatches()), plan.schedule);
}

std::string to_string(const Pass& pass) {
  const char* k = pass.kind == PassKind::F ? "F" : pass.kind == PassKind::B ? "B" : "W";
  return fmt::format("{}{}.{}", k, pass.microbatch, pass.chunk);
}

}  // namespace fusim::parallel
