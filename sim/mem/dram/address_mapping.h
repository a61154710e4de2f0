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
// strides over banks.
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
    mem::Addr ch = 0;
    for (int i = 0; i < n_channel_slices_; ++i) {
      const Slice& s = slices_[channel_slices_[i]];
      ch |= ((addr >> s.shift) & ((mem::Addr{1} << s.bits) - 1)) << s.field_shift;
    }
    return static_cast<int>(ch);
  }
  // Inverse of decode (for trace generators and tests): the atom's first byte address.
  mem::Addr encode(const DramAddress& a) const;
  const std::string& scheme() const { return scheme_; }

 private:
  enum Field : int { kCh, kRa, kBg, kBa, kRo, kCo, kFields };
  struct Slice {
    int field;
    int shift;  // position in the address
    int bits;
    int field_shift;  // position inside the field's value (column is split in two)
  };
  std::string scheme_;
  std::array<Slice, 8> slices_{};
  int n_slices_ = 0;
  std::array<int, 8> channel_slices_{};  // indices of the channel's slices in slices_
  int n_channel_slices_ = 0;
  int offset_bits_ = 0;
  int bankgroups_, banks_per_group_, ranks_, channels_;
  bool xor_hash_;
  bool separate_bg_ = false;
  int bank_bits_total_;  // bits of (bankgroup, bank) for hashing
};

}  // namespace fusim::dram
