#include "mem/dram/first_ready.h"

#include <algorithm>

#include "core/error.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// (GCC 12 reports its own _mm512_undefined_* placeholders inside these intrinsics as
// uninitialized: a known false positive, silenced for this header only.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#define FUSIM_DRAM_AVX512 1
#endif

namespace fusim::dram {
namespace {

// One first-ready pass over the occupied banks (KeyPass, first_ready.h): each candidate's key
// (ready - base, not a hit, age, bank) packed into 64 bits, the smallest wins; a blocked
// candidate's key is all ones. `far` collects the bits of ready - base above 24 (a key that
// would not fit).
constexpr int kDeltaShift = 40, kBankBits = 7;

std::uint64_t key_pass_scalar(const KeyPass& p, Cycle base, std::uint64_t seq0,
                              std::uint64_t& far) {
  // (Candidates are fresh: choose() worked out the stale ones first.)
  std::uint64_t best = UINT64_MAX, f = 0;
  for (std::size_t w = 0; w * 64 < p.lanes; ++w) {
    for (std::uint64_t bits = p.occupied[w]; bits != 0; bits &= bits - 1) {
      const std::size_t i = w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits));
      const Cycle e = std::max(p.near_levels[p.near_at[i]], p.rank_levels[p.rank_at[i]]);
      const Cycle ready = std::max(base, e);
      const auto delta = static_cast<std::uint64_t>(ready - base);
      f |= delta >> 24;
      // A due refresh blocks its rank (all-bank) or its bank (per-bank) from then on.
      const std::uint64_t blocked =
          std::uint64_t{0} - static_cast<std::uint64_t>(ready >= p.block_at[i]);
      const std::uint64_t key =
          (delta << kDeltaShift | (p.seq[i] - seq0) << kBankBits | p.key_low[i]) | blocked;
      best = std::min(best, key);
    }
  }
  far = f;
  return best;
}

#ifdef FUSIM_DRAM_AVX512
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// The same pass eight banks at a time (the same integer arithmetic, so the same key): on
// a channel with many banks occupied (DDR4 under random traffic: ~12 of 16) it does in a
// few instructions what the scalar loop does in ~40 per bank; with few occupied, the
// scalar loop over their bits is cheaper. No gathers (slow on AMD cores: they were half
// the pass): a block's merged levels are its column command's row with the ACT and PRE
// candidates' lanes loaded over it under their masks, and where the block lies in one
// rank, its rank levels are that rank's three values broadcast under the same masks.
__attribute__((target("avx512f"))) std::uint64_t key_pass_avx512(const KeyPass& p, Cycle base_cycle,
                                                                 std::uint64_t first_seq,
                                                                 std::uint64_t& far) {
  const __m512i base = _mm512_set1_epi64(base_cycle);
  const __m512i seq0 = _mm512_set1_epi64(static_cast<long long>(first_seq));
  const __m512i ones = _mm512_set1_epi64(-1);
  const int act = static_cast<int>(Command::ACT), pre = static_cast<int>(Command::PRE);
  const Cycle* const near_column = p.near_levels + p.column * p.lanes;
  const Cycle* const near_act = p.near_levels + act * p.lanes;
  const Cycle* const near_pre = p.near_levels + pre * p.lanes;
  __m512i best = ones, f = _mm512_setzero_si512();
  for (std::size_t i = 0; i < p.lanes; i += 8) {
    const auto m = static_cast<__mmask8>(p.occupied[i / 64] >> (i % 64));
    if (m == 0) continue;
    const auto ma = static_cast<__mmask8>(p.act[i / 64] >> (i % 64));
    const auto mp = static_cast<__mmask8>(p.pre[i / 64] >> (i % 64));
    __m512i near = _mm512_loadu_si512(near_column + i);
    near = _mm512_mask_loadu_epi64(near, ma, near_act + i);
    near = _mm512_mask_loadu_epi64(near, mp, near_pre + i);
    __m512i rank;
    const int r = p.block_rank[i / 8];
    if (r >= 0) {
      const Cycle* const levels = p.rank_levels + r * kCommandKinds;
      rank = _mm512_set1_epi64(levels[p.column]);
      rank = _mm512_mask_set1_epi64(rank, ma, levels[act]);
      rank = _mm512_mask_set1_epi64(rank, mp, levels[pre]);
    } else {
      const __m256i ri = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p.rank_at + i));
      rank = _mm512_mask_i32gather_epi64(_mm512_setzero_si512(), m, ri, p.rank_levels, 8);
    }
    const __m512i ready = _mm512_max_epi64(base, _mm512_max_epi64(near, rank));
    const __m512i delta = _mm512_sub_epi64(ready, base);
    f = _mm512_or_si512(f, _mm512_maskz_srli_epi64(m, delta, 24));
    const __mmask8 blocked = _mm512_cmpge_epi64_mask(ready, _mm512_loadu_si512(p.block_at + i));
    const __m512i age = _mm512_sub_epi64(_mm512_loadu_si512(p.seq + i), seq0);
    __m512i key = _mm512_or_si512(
        _mm512_or_si512(_mm512_slli_epi64(delta, kDeltaShift), _mm512_slli_epi64(age, kBankBits)),
        _mm512_loadu_si512(p.key_low + i));
    key = _mm512_mask_mov_epi64(key, static_cast<__mmask8>(blocked | static_cast<__mmask8>(~m)),
                                ones);
    best = _mm512_min_epu64(best, key);
  }
  far = static_cast<std::uint64_t>(_mm512_reduce_or_epi64(f));
  return static_cast<std::uint64_t>(_mm512_reduce_min_epu64(best));
}

// The same pass four banks at a time with AVX2 (CPUs without AVX-512, and valgrind, which
// has AVX2 but no AVX-512): the same integer key again. AVX2 has no 64-bit max or unsigned
// min, so each is a compare and a blend (unsigned: a signed compare with the sign bits
// flipped). Lanes of unoccupied banks read stale but in-range values (every array is lanes
// long and the level indices are always valid ones) and are masked out. Like the AVX-512
// form it gathers nothing where a block of banks lies in one rank: on an AMD EPYC without
// AVX-512 (2026-12-06) the two gathers per four banks made this pass 24% of a DDR4 random
// replay (perf).
__attribute__((target("avx2"))) inline __m256i max64(__m256i a, __m256i b) {
  return _mm256_blendv_epi8(a, b, _mm256_cmpgt_epi64(b, a));
}
__attribute__((target("avx2"))) inline __m256i load(const void* q) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(q));
}
// All ones in the lanes whose bit is set in the low four bits of `bits`.
__attribute__((target("avx2"))) inline __m256i lanes_of(std::uint64_t bits, __m256i lane_bit) {
  const __m256i b = _mm256_set1_epi64x(static_cast<long long>(bits & 15));
  return _mm256_cmpeq_epi64(_mm256_and_si256(b, lane_bit), lane_bit);
}
__attribute__((target("avx2"))) std::uint64_t key_pass_avx2(const KeyPass& p, Cycle base_cycle,
                                                            std::uint64_t first_seq,
                                                            std::uint64_t& far) {
  const __m256i base = _mm256_set1_epi64x(base_cycle);
  const __m256i seq0 = _mm256_set1_epi64x(static_cast<long long>(first_seq));
  const __m256i ones = _mm256_set1_epi64x(-1);
  const __m256i sign = _mm256_set1_epi64x(static_cast<long long>(0x8000000000000000ULL));
  const __m256i lane_bit = _mm256_set_epi64x(8, 4, 2, 1);
  const int act = static_cast<int>(Command::ACT), pre = static_cast<int>(Command::PRE);
  const Cycle* const near_column = p.near_levels + p.column * p.lanes;
  const Cycle* const near_act = p.near_levels + act * p.lanes;
  const Cycle* const near_pre = p.near_levels + pre * p.lanes;
  __m256i best = ones, f = _mm256_setzero_si256();
  for (std::size_t i = 0; i < p.lanes; i += 4) {
    const std::uint64_t m = (p.occupied[i / 64] >> (i % 64)) & 15;
    if (m == 0) continue;
    const __m256i is_act = lanes_of(p.act[i / 64] >> (i % 64), lane_bit);
    const __m256i is_pre = lanes_of(p.pre[i / 64] >> (i % 64), lane_bit);
    __m256i nl = load(near_column + i);
    nl = _mm256_blendv_epi8(nl, load(near_act + i), is_act);
    nl = _mm256_blendv_epi8(nl, load(near_pre + i), is_pre);
    __m256i rl;
    const int r = p.block_rank[i / 8];
    if (r >= 0) {
      const Cycle* const levels = p.rank_levels + r * kCommandKinds;
      rl = _mm256_set1_epi64x(levels[p.column]);
      rl = _mm256_blendv_epi8(rl, _mm256_set1_epi64x(levels[act]), is_act);
      rl = _mm256_blendv_epi8(rl, _mm256_set1_epi64x(levels[pre]), is_pre);
    } else {
      const __m128i ri = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p.rank_at + i));
      rl = _mm256_i32gather_epi64(reinterpret_cast<const long long*>(p.rank_levels), ri, 8);
    }
    const __m256i ready = max64(base, max64(nl, rl));
    const __m256i delta = _mm256_sub_epi64(ready, base);
    const __m256i occupied = lanes_of(m, lane_bit);
    f = _mm256_or_si256(f, _mm256_and_si256(occupied, _mm256_srli_epi64(delta, 24)));
    // A candidate: an occupied lane not blocked by a due refresh (block_at > ready).
    const __m256i open =
        _mm256_and_si256(occupied, _mm256_cmpgt_epi64(load(p.block_at + i), ready));
    const __m256i age = _mm256_sub_epi64(load(p.seq + i), seq0);
    __m256i key = _mm256_or_si256(
        _mm256_or_si256(_mm256_slli_epi64(delta, kDeltaShift), _mm256_slli_epi64(age, kBankBits)),
        load(p.key_low + i));
    key = _mm256_or_si256(key, _mm256_andnot_si256(open, ones));
    const __m256i smaller =
        _mm256_cmpgt_epi64(_mm256_xor_si256(best, sign), _mm256_xor_si256(key, sign));
    best = _mm256_blendv_epi8(best, key, smaller);
  }
  alignas(32) std::uint64_t b[4], o[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(b), best);
  _mm256_store_si256(reinterpret_cast<__m256i*>(o), f);
  far = o[0] | o[1] | o[2] | o[3];
  return std::min(std::min(b[0], b[1]), std::min(b[2], b[3]));
}
#pragma GCC diagnostic pop
#endif

}  // namespace

FirstReadyChoice::FirstReadyChoice(const DramSpec& spec, Scheduler::Order order, BankQueues& queues,
                                   const std::vector<BankRow>& rows, const BankTiming& timing,
                                   const std::vector<Cycle>& block_at)
    : order_(order),
      banks_(static_cast<std::size_t>(spec.org.banks_per_channel())),
      keyed_(order == Scheduler::Order::FirstReady && banks_ <= (std::size_t{1} << kBankBits)),
      lanes_(lanes(spec.org.banks_per_channel())),
      words_((banks_ + 63) / 64),
      queues_(queues),
      rows_(rows),
      near_levels_(timing.near_levels()),
      rank_levels_(timing.rank_levels()),
      block_at_(block_at),
      near_at_(2 * lanes_, 0),
      rank_at_(2 * lanes_, 0),
      seq_(2 * lanes_, 0),
      key_low_(2 * lanes_, 0),
      act_bits_(2 * words_, 0),
      pre_bits_(2 * words_, 0),
      chosen_(2 * lanes_),
      stale_(2 * words_, ~std::uint64_t{0}),
#ifdef FUSIM_DRAM_AVX512
      vector_pass_(__builtin_cpu_supports("avx512f") ? 8
                   : __builtin_cpu_supports("avx2")  ? 4
                                                     : 0)
#else
      vector_pass_(0)
#endif
{
  FUSIM_ASSERT(block_at.size() >= lanes_, "block_at shorter than the banks' lanes");
  FUSIM_ASSERT(timing.near_lanes() == lanes_, "BankTiming with other lanes");
  const int per_rank = spec.org.banks_per_rank();
  for (int b = 0; b < spec.org.banks_per_channel(); ++b)
    bank_rank_.push_back(static_cast<std::uint8_t>(b / per_rank));
  for (std::size_t i = 0; i < lanes_; i += 8) {
    const auto first = static_cast<int>(i);
    const int last = std::min(first + 7, spec.org.banks_per_channel() - 1);
    block_rank_.push_back(
        static_cast<std::int8_t>(first / per_rank == last / per_rank ? first / per_rank : -1));
  }
  for (int q = 0; q < 2; ++q) {
    const std::size_t at = q * lanes_;
    passes_[q] = KeyPass{queues.occupied(q),
                         lanes_,
                         &near_at_[at],
                         &rank_at_[at],
                         &seq_[at],
                         &key_low_[at],
                         near_levels_,
                         rank_levels_,
                         block_at_.data(),
                         &act_bits_[q * words_],
                         &pre_bits_[q * words_],
                         static_cast<int>(q ? Command::WR : Command::RD),
                         block_rank_.data()};
  }
}

void FirstReadyChoice::refresh(int q, int bank) {
  const BankQueues::Summary& s = queues_.summary(q, bank);
  const std::size_t i = q * lanes_ + bank;
  Chosen& c = chosen_[i];
  std::uint64_t seq;
  c.hit = false;
  if (rows_[bank].open_row < 0) {
    // A closed bank: every request activates.
    c.cmd = Command::ACT, seq = s.other_seq, c.slot = s.other_slot;
  } else if (queues_.capped(bank, s)) {
    // Capped hits lose their status: every request of the bank wants the precharge.
    c.cmd = Command::PRE;
    const bool hit_older = s.hit_seq < s.other_seq;
    seq = hit_older ? s.hit_seq : s.other_seq;
    c.slot = hit_older ? s.hit_slot : s.other_slot;
  } else if (s.hit_seq != BankQueues::kNone) {
    // (its conflicts wait: never close a hit)
    c.cmd = q ? Command::WR : Command::RD, c.hit = true, seq = s.hit_seq, c.slot = s.hit_slot;
  } else {
    c.cmd = Command::PRE, seq = s.other_seq, c.slot = s.other_slot;
  }
  const int k = static_cast<int>(c.cmd);
  seq_[i] = seq;
  near_at_[i] = k * static_cast<int>(lanes_) + bank;
  rank_at_[i] = bank_rank_[bank] * kCommandKinds + k;
  const std::size_t w = q * words_ + bank / 64;
  act_bits_[w] = (act_bits_[w] & ~bit(bank)) | (c.cmd == Command::ACT ? bit(bank) : 0);
  pre_bits_[w] = (pre_bits_[w] & ~bit(bank)) | (c.cmd == Command::PRE ? bit(bank) : 0);
  key_low_[i] = static_cast<std::uint64_t>(!c.hit) << kHitShift | static_cast<std::uint64_t>(bank);
  const int commit = rows_[bank].commit_queue;
  if (c.cmd == Command::PRE && commit >= 0 && commit != q) {
    // The row was opened for a request of the other queue, which is served first (the
    // controller's commit part): no candidate here. An all-ones key never wins the pass.
    c.slot = -1;
    key_low_[i] = UINT64_MAX;
  }
  stale_[q * words_ + bank / 64] &= ~bit(bank);
}

// First-ready choice as one branch-free pass (KeyPass): the same lexicographic order as
// scan() (ages are unique, so the bank in the lowest bits never decides, it only names the
// winner). A field that would not fit (a ready cycle 2^24 cycles ahead, 2^32 requests
// between the oldest queued and the newest, more than 128 banks) falls back to that scan,
// as does FCFS (the oldest, whatever its ready cycle).
void FirstReadyChoice::choose(int q, Cycle base, Decision& request) {
  const std::uint64_t* const occupied = queues_.occupied(q);
  std::uint64_t* const stale = &stale_[q * words_];
  for (std::size_t w = 0; w < words_; ++w) {
    for (std::uint64_t bits = stale[w] & occupied[w]; bits != 0; bits &= bits - 1)
      refresh(q, static_cast<int>(w * 64 + __builtin_ctzll(bits)));
  }
  const RequestQueue& queue = queues_.queue(q);
  if (!keyed_ || queue.empty()) {
    scan(q, base, request);
    return;
  }
  const std::uint64_t seq0 = queue.front().seq;  // the oldest queued: the age origin
  if (queues_.next_seq() - seq0 >= (std::uint64_t{1} << kAgeBits)) {
    scan(q, base, request);
    return;
  }
  const KeyPass& pass = passes_[q];
  std::uint64_t far = 0;
#ifdef FUSIM_DRAM_AVX512
  // Either vector form pays from 8 occupied banks on: below, the scalar loop over their bits
  // is as cheap (callgrind, AVX2 form: DDR4 stream with 4 banks busy +7% at a threshold of 4).
  const std::uint64_t best = queues_.busy(q) < 8 || vector_pass_ == 0
                                 ? key_pass_scalar(pass, base, seq0, far)
                             : vector_pass_ == 8 ? key_pass_avx512(pass, base, seq0, far)
                                                 : key_pass_avx2(pass, base, seq0, far);
#else
  const std::uint64_t best = key_pass_scalar(pass, base, seq0, far);
#endif
  if (far != 0) {
    scan(q, base, request);
    return;
  }
  if (best == UINT64_MAX) return;
  fill(q, base + static_cast<Cycle>(best >> kDeltaShift),
       static_cast<int>(best & ((std::uint64_t{1} << kBankBits) - 1)), request);
}

void FirstReadyChoice::scan(int q, Cycle base, Decision& request) {
  const bool oldest_only = order_ == Scheduler::Order::Oldest;
  Cycle best_ready = kNoCycle;
  bool best_hit = false;
  std::uint64_t best_seq = BankQueues::kNone;
  int best_bank = -1;
  const std::uint64_t* const occupied = queues_.occupied(q);
  for (std::size_t w = 0; w < words_; ++w) {
    for (std::uint64_t bits = occupied[w]; bits != 0; bits &= bits - 1) {
      const int bank = static_cast<int>(w * 64 + __builtin_ctzll(bits));
      const std::size_t i = q * lanes_ + bank;
      if (chosen_[i].slot < 0) continue;  // waits for the other queue's committed request
      const bool hit = chosen_[i].hit;
      const std::uint64_t seq = seq_[i];
      if (oldest_only
              ? seq > best_seq
              : !(seq < best_seq || hit > best_hit) && best_bank >= 0 && base >= best_ready) {
        continue;  // cannot beat the best so far whatever its ready cycle
      }
      const Cycle ready = std::max(base, earliest(i));
      if (ready >= block_at_[bank]) continue;  // blocked by a due refresh
      const bool better =
          oldest_only
              ? seq < best_seq
              : ready < best_ready || (ready == best_ready &&
                                       (hit > best_hit || (hit == best_hit && seq < best_seq)));
      if (better) best_ready = ready, best_hit = hit, best_seq = seq, best_bank = bank;
    }
  }
  if (best_bank < 0) return;
  fill(q, best_ready, best_bank, request);
}

// The request of `bank`'s candidate (fresh) of queue `q`, at `cycle`.
void FirstReadyChoice::fill(int q, Cycle cycle, int bank, Decision& request) {
  const std::size_t i = q * lanes_ + bank;
  const Chosen& c = chosen_[i];
  chosen_hit_ = c.hit;
  chosen_seq_ = seq_[i];
  const QueueEntry& e = queues_.queue(q)[c.slot];
  FUSIM_ASSERT(e.seq == seq_[i] && e.flat_bank == bank, "decided request not queued");
  request.cycle = cycle;
  request.cmd = c.cmd;
  request.rank = e.rank;
  request.group = e.bankgroup;
  request.bank = e.flat_bank;
  request.row = e.row;
  request.entry = c.slot;
  request.queue = q;
}

void FirstReadyChoice::weigh(int q, int bank, Cycle base, Decision& request) {
  refresh(q, bank);
  const std::size_t i = q * lanes_ + bank;
  if (chosen_[i].slot < 0) return;  // waits for the other queue's committed request
  const bool hit = chosen_[i].hit;
  const Cycle ready = std::max(base, earliest(i));
  if (ready >= block_at_[bank]) return;  // blocked by a due refresh, as in choose()
  if (request.cycle != kNoCycle &&
      !(ready < request.cycle ||
        (ready == request.cycle &&
         (hit > chosen_hit_ || (hit == chosen_hit_ && seq_[i] < chosen_seq_))))) {
    return;
  }
  fill(q, ready, bank, request);
}

}  // namespace fusim::dram
