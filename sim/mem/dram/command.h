#pragma once
// DRAM commands and the record of one issued command: what the controller sends on the
// command bus, what the protocol checker and command traces consume.
#include <cstdint>

#include "mem/dram/dram_spec.h"

namespace fusim::dram {

enum class Command : std::uint8_t {
  ACT,    // activate a row
  PRE,    // precharge one bank
  RD,     // column read (one burst)
  WR,     // column write (one burst)
  REFab,  // all-bank refresh of a rank (DDR4 REF, DDR5 REFab, HBM REFab)
  REFpb,  // per-bank refresh (HBM REFpb; DDR5 REFsb modelled bank by bank)
};
constexpr int kCommandKinds = 6;

constexpr const char* to_string(Command c) {
  switch (c) {
    case Command::ACT:
      return "ACT";
    case Command::PRE:
      return "PRE";
    case Command::RD:
      return "RD";
    case Command::WR:
      return "WR";
    case Command::REFab:
      return "REFab";
    case Command::REFpb:
      return "REFpb";
  }
  return "?";
}

struct IssuedCommand {
  Cycle cycle = 0;
  Command command = Command::ACT;
  int channel = 0;
  int rank = 0;
  int bankgroup = 0;      // unused for REFab
  int bank = 0;           // within its group; unused for REFab
  std::int64_t row = -1;  // ACT, RD, WR: the row; else -1
};

}  // namespace fusim::dram
