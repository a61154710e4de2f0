#pragma once
// Physical address -> (channel, rank, bank group, bank, row, column), by scheme name.
// A scheme lists the fields from the most to the least significant bits, DRAMsim3-style:
// "RoBaRaCoCh" = row | bank | rank | column | channel. "Ba" alone covers the bank groups
// too (bank-group bits lowest, so consecutive bank indices alternate groups and see the
// short tCCD_S/tRRD_S); "Bg" names them separately. "Ch" counts pseudo-channels as
// channels. Below the scheme sit the byte offset of one access atom and the column bits
// of one interleave unit (a 64-byte cache line by default), so a line never straddles
// channels or rows. Optional XOR bank hashing (permutation-based interleaving, Zhang, Zhu
// and Zhang, MICRO 2000) XORs the low row bits into the bank index to spread row-conflicting
// strides over banks. A channel count that is no power of two (DDR5 servers have 6 or 12)
// interleaves by modulo: the channel is (address / unit) mod channels at the Ch position,
// the fields above it are decoded from the quotient.
#include <array>
#include <cstdint>
#include <string>

#include "mem/dram/dram_spec.h"
#include "mem/memory_port.h"

namespace fusim::dram {

struct DramAddress {
  int channel = 0;  // logical channel (pseudo-channels included)
  int rank = 0;
  int bankgroup = 0;
  int bank = 0;  // within its bank group
  std::int64_t row = 0;
  std::int64_t column = 0;  // atom index within the row (one atom = BL device columns)
  // Flat bank index within the channel: (rank * bankgroups + bankgroup) * banks + bank.
  int flat_bank = 0;
};

class AddressMapping {
 public:
  // Throws InputError (file `where_file`, path `where_path`) for unknown scheme names.
  AddressMapping(const DramSpec& spec, const std::string& where_file = "",
                 const std::string& where_path = "mapping");
  DramAddress decode(mem::Addr addr) const;
  // decode(addr).channel alone.
  int channel_of(mem::Addr addr) const {
    if (mixed_radix_) return decode(addr).channel;
    mem::Addr ch = 0;
    for (int i = 0; i < n_channel_slices_; ++i) {
      const Slice& s = slices_[channel_slices_[i]];
      ch |= ((addr >> s.shift) & ((mem::Addr{1} << s.bits) - 1)) << s.field_shift;
    }
    return static_cast<int>(ch);
  }
  // Bytes of one interleave unit (a cache line by default): the atoms of one unit differ only
  // in their column, the unit's atoms being consecutive columns of one row (the lowest
  // column bits sit right above the atom offset).
  std::uint64_t unit_bytes() const { return unit_bytes_; }
  // Inverse of decode (for trace generators and tests): the atom's first byte address.
  mem::Addr encode(const DramAddress& a) const;
  const std::string& scheme() const { return scheme_; }

 private:
  enum Field : int { kCh, kRa, kBg, kBa, kRo, kCo, kFields };
  struct Slice {
    int field;
    int shift;  // position in the address (power-of-two mappings)
    int bits;
    int field_shift;         // position inside the field's value (column is split in two)
    std::int64_t radix = 0;  // a channel count that is no power of two (then bits = 0)
  };
  DramAddress from_fields(const std::int64_t* v) const;
  DramAddress decode_pow2(mem::Addr addr) const;
  // Where every field has a power-of-two size (every preset): each field is (addr >> shift)
  // & mask (the column in two parts, the upper one at column bit co_hi_at_), and the bank
  // arithmetic is shifts.
  struct Bits {
    int shift = 0;
    mem::Addr mask = 0;
  };
  bool pow2_ = false;
  Bits ch_, ra_, bg_, ba_, ro_, co_lo_, co_hi_;
  int co_hi_at_ = 0, bg_bits_ = 0, ba_bits_ = 0;
  std::string scheme_;
  std::array<Slice, 8> slices_{};
  int n_slices_ = 0;
  std::array<int, 8> channel_slices_{};  // indices of the channel's slices in slices_
  int n_channel_slices_ = 0;
  // Channels not a power of two (3, 6, 12): the slices are digits of a mixed-radix number,
  // the channel one the remainder modulo the channel count (modulo interleaving).
  bool mixed_radix_ = false;
  int offset_bits_ = 0;
  std::uint64_t unit_bytes_ = 0;
  int bankgroups_, banks_per_group_, ranks_, channels_;
  bool xor_hash_;
  bool separate_bg_ = false;
  int bank_bits_total_;  // bits of (bankgroup, bank) for hashing
};

}  // namespace fusim::dram
