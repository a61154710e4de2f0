#include "mem/dram/address_mapping.h"

#include <fmt/format.h>

#include "core/error.h"

namespace fusim::dram {
namespace {

int log2_exact(std::int64_t v) {
  int b = 0;
  while ((std::int64_t{1} << b) < v) ++b;
  return b;
}

}  // namespace

AddressMapping::AddressMapping(const DramSpec& spec, const std::string& where_file,
                               const std::string& where_path)
    : scheme_(spec.ctrl.mapping),
      bankgroups_(spec.org.bankgroups),
      banks_per_group_(spec.org.banks_per_group),
      ranks_(spec.org.ranks),
      channels_(spec.org.logical_channels()),
      xor_hash_(spec.ctrl.xor_bank_hash) {
  const auto& o = spec.org;
  auto bad = [&](const std::string& why) -> InputError {
    return InputError(where_file.empty() ? "dram" : where_file, where_path,
                      fmt::format("a mapping scheme made of Ro, Ba, Bg, Ra, Co, Ch, each once "
                                  "(e.g. \"RoBaRaCoCh\", \"RoRaBaChCo\"); got \"{}\": {}",
                                  scheme_, why));
  };
  if (scheme_.size() % 2 != 0 || scheme_.empty()) throw bad("odd length");
  std::array<int, kFields> seen{};
  std::array<int, 6> order{};
  int n = 0;
  for (std::size_t i = 0; i < scheme_.size(); i += 2) {
    const std::string tok = scheme_.substr(i, 2);
    int f = tok == "Ch"   ? kCh
            : tok == "Ra" ? kRa
            : tok == "Bg" ? kBg
            : tok == "Ba" ? kBa
            : tok == "Ro" ? kRo
            : tok == "Co" ? kCo
                          : -1;
    if (f < 0) throw bad(fmt::format("unknown field \"{}\"", tok));
    if (seen[f]++) throw bad(fmt::format("field \"{}\" twice", tok));
    order[n++] = f;
  }
  for (int f : {kCh, kRa, kBa, kRo, kCo}) {
    if (!seen[f]) throw bad("every one of Ro, Ba, Ra, Co, Ch is needed");
  }
  separate_bg_ = seen[kBg] != 0;
  const bool separate_bg = separate_bg_;
  offset_bits_ = log2_exact(o.atom_bytes());
  const int atom_col_bits = log2_exact(o.columns / o.burst_length);
  const int line_col_bits = log2_exact(spec.ctrl.interleave_bytes / o.atom_bytes());
  unit_bytes_ = std::uint64_t{1} << (offset_bits_ + line_col_bits);
  const int bg_bits = log2_exact(o.bankgroups), ba_bits = log2_exact(o.banks_per_group);
  bank_bits_total_ = bg_bits + ba_bits;
  std::array<int, kFields> bits{};
  mixed_radix_ = (channels_ & (channels_ - 1)) != 0;
  bits[kCh] = mixed_radix_ ? 0 : log2_exact(channels_);
  bits[kRa] = log2_exact(o.ranks);
  bits[kBg] = separate_bg ? bg_bits : 0;
  bits[kBa] = separate_bg ? ba_bits : bg_bits + ba_bits;
  bits[kRo] = log2_exact(o.rows);
  bits[kCo] = atom_col_bits - line_col_bits;
  int shift = offset_bits_;
  n_slices_ = 0;
  if (line_col_bits > 0) {
    slices_[n_slices_++] = Slice{kCo, shift, line_col_bits, 0};
    shift += line_col_bits;
  }
  for (int i = n - 1; i >= 0; --i) {  // least significant field last in the name
    const int f = order[i];
    if (f == kCh && mixed_radix_) {
      slices_[n_slices_++] = Slice{f, shift, 0, 0, channels_};
      shift += log2_exact(channels_);  // (for the 63-bit limit below)
      continue;
    }
    if (bits[f] == 0) continue;
    slices_[n_slices_++] = Slice{f, shift, bits[f], f == kCo ? line_col_bits : 0};
    shift += bits[f];
  }
  if (shift > 63) throw bad("more than 63 address bits");
  for (int i = 0; i < n_slices_; ++i) {
    if (slices_[i].field == kCh) channel_slices_[n_channel_slices_++] = i;
  }
  auto pow2 = [](std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; };
  pow2_ = !mixed_radix_ && pow2(o.ranks) && pow2(o.bankgroups) && pow2(o.banks_per_group);
  bg_bits_ = bg_bits;
  ba_bits_ = ba_bits;
  for (int i = 0; i < n_slices_; ++i) {
    const Slice& sl = slices_[i];
    const Bits b{sl.shift, (mem::Addr{1} << sl.bits) - 1};
    switch (sl.field) {
      case kCh:
        ch_ = b;
        break;
      case kRa:
        ra_ = b;
        break;
      case kBg:
        bg_ = b;
        break;
      case kBa:
        ba_ = b;
        break;
      case kRo:
        ro_ = b;
        break;
      case kCo:
        if (sl.field_shift == 0) {
          co_lo_ = b;
        } else {
          co_hi_ = b;
          co_hi_at_ = sl.field_shift;
        }
        break;
    }
  }
}

DramAddress AddressMapping::decode_pow2(mem::Addr addr) const {
  auto field = [addr](const Bits& b) {
    return static_cast<std::int64_t>((addr >> b.shift) & b.mask);
  };
  DramAddress a;
  a.channel = static_cast<int>(field(ch_));
  a.rank = static_cast<int>(field(ra_));
  a.row = field(ro_);
  a.column = field(co_lo_) | field(co_hi_) << co_hi_at_;
  // bank = Ba * bankgroups + Bg (separate fields) or Ba (group bits lowest), as from_fields.
  std::int64_t bank = separate_bg_ ? field(ba_) << bg_bits_ | field(bg_) : field(ba_);
  if (xor_hash_) bank ^= a.row & ((std::int64_t{1} << bank_bits_total_) - 1);
  a.bankgroup = static_cast<int>(bank & (bankgroups_ - 1));
  a.bank = static_cast<int>(bank >> bg_bits_);
  a.flat_bank = (a.rank << bg_bits_ | a.bankgroup) << ba_bits_ | a.bank;
  return a;
}

DramAddress AddressMapping::decode(mem::Addr addr) const {
  if (pow2_) return decode_pow2(addr);
  std::int64_t v[kFields] = {0, 0, 0, 0, 0, 0};
  if (mixed_radix_) {
    // Digits from the least significant up: a power-of-two field takes its bits, the
    // channel the remainder modulo the channel count.
    mem::Addr x = addr >> offset_bits_;
    for (int i = 0; i < n_slices_; ++i) {
      const Slice& s = slices_[i];
      mem::Addr digit;
      if (s.radix > 0) {
        digit = x % static_cast<mem::Addr>(s.radix);
        x /= static_cast<mem::Addr>(s.radix);
      } else {
        digit = x & ((mem::Addr{1} << s.bits) - 1);
        x >>= s.bits;
      }
      v[s.field] |= static_cast<std::int64_t>(digit) << s.field_shift;
    }
    return from_fields(v);
  }
  for (int i = 0; i < n_slices_; ++i) {
    const Slice& s = slices_[i];
    v[s.field] |= static_cast<std::int64_t>((addr >> s.shift) & ((mem::Addr{1} << s.bits) - 1))
                  << s.field_shift;
  }
  return from_fields(v);
}

DramAddress AddressMapping::from_fields(const std::int64_t* v) const {
  DramAddress a;
  a.channel = static_cast<int>(v[kCh]);
  a.rank = static_cast<int>(v[kRa]);
  a.row = v[kRo];
  // With a separate Bg field bank = Ba * bankgroups + Bg; with Ba alone the group bits are
  // its low bits already: both give group = bank % bankgroups.
  std::int64_t bank = separate_bg_ ? v[kBa] * bankgroups_ + v[kBg] : v[kBa];
  if (xor_hash_) bank ^= a.row & ((std::int64_t{1} << bank_bits_total_) - 1);
  a.bankgroup = static_cast<int>(bank % bankgroups_);
  a.bank = static_cast<int>(bank / bankgroups_);
  a.column = v[kCo];
  a.flat_bank = (a.rank * bankgroups_ + a.bankgroup) * banks_per_group_ + a.bank;
  return a;
}

mem::Addr AddressMapping::encode(const DramAddress& a) const {
  std::int64_t bank = static_cast<std::int64_t>(a.bank) * bankgroups_ + a.bankgroup;
  if (xor_hash_) bank ^= a.row & ((std::int64_t{1} << bank_bits_total_) - 1);
  std::int64_t v[kFields] = {0, 0, 0, 0, 0, 0};
  v[kCh] = a.channel;
  v[kRa] = a.rank;
  v[kRo] = a.row;
  v[kCo] = a.column;
  if (separate_bg_) {
    v[kBg] = bank % bankgroups_;
    v[kBa] = bank / bankgroups_;
  } else {
    v[kBa] = bank;
  }
  if (mixed_radix_) {
    mem::Addr x = 0;
    for (int i = n_slices_ - 1; i >= 0; --i) {
      const Slice& s = slices_[i];
      if (s.radix > 0) {
        x = x * static_cast<mem::Addr>(s.radix) + static_cast<mem::Addr>(v[s.field]);
      } else {
        const mem::Addr part =
            static_cast<mem::Addr>(v[s.field] >> s.field_shift) & ((mem::Addr{1} << s.bits) - 1);
        x = (x << s.bits) | part;
      }
    }
    return x << offset_bits_;
  }
  mem::Addr addr = 0;
  for (int i = 0; i < n_slices_; ++i) {
    const Slice& s = slices_[i];
    const mem::Addr part =
        static_cast<mem::Addr>(v[s.field] >> s.field_shift) & ((mem::Addr{1} << s.bits) - 1);
    addr |= part << s.shift;
  }
  return addr;
}

}  // namespace fusim::dram
