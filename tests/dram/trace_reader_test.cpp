// The DRAMsim3 trace reader: plain lines parsed in place, every odd form (octal and signed
// numbers, CR line ends, comments, tabs, DRAMsim3's other operation names) read as strtoull /
// strtoll read them, and each kind of bad line refused with its line number.
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <string>

#include "core/error.h"
#include "mem/dram/trace_replay.h"

using namespace fusim;
using namespace fusim::dram;

namespace {
std::string write(const std::string& name, const std::string& text) {
  const std::string path = std::string(FUSIM_BINARY_DIR) + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}
std::string error_of(const std::string& text) {
  try {
    read_dramsim3_trace(write("bad.trc", text));
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST_CASE("trace reader: plain and odd request lines") {
  const std::string text =
      "0x1F40 READ 0\n"
      "# a comment\n"
      "\n"
      "   \t\n"
      "4096 WRITE 3\n"           // decimal address
      "010 read 3\r\n"           // octal (strtoull base 0): 8; CR line end
      "\t0XaB\tP_MEM_WR\t+7 \n"  // tabs, 0X, a signed cycle
      "0 IFETCH 18\n"
      "0xFFFFFFFFFFFFFFFF P_MEM_RD 999999999999999999";  // no final line end
  const auto t = read_dramsim3_trace(write("odd.trc", text));
  REQUIRE(t.size() == 6);
  CHECK(t[0].addr == 0x1f40);
  CHECK_FALSE(t[0].is_write);
  CHECK(t[0].arrival == 0);
  CHECK(t[1].addr == 4096);
  CHECK(t[1].is_write);
  CHECK(t[1].arrival == 3);
  CHECK(t[2].addr == 8);
  CHECK_FALSE(t[2].is_write);
  CHECK(t[3].addr == 0xab);
  CHECK(t[3].is_write);
  CHECK(t[3].arrival == 7);
  CHECK(t[4].addr == 0);
  CHECK(t[4].arrival == 18);
  CHECK(t[5].addr == 0xffffffffffffffffULL);
  CHECK(t[5].arrival == 999999999999999999LL);
}

TEST_CASE("trace reader: bad lines name their line") {
  CHECK(error_of("0x40 READ 0\n0x40 READ\n").find("line 2") != std::string::npos);
  CHECK(error_of("0x40 READ 0 extra\n").find("0xADDR READ|WRITE CYCLE") != std::string::npos);
  CHECK(error_of("0x READ 0\n").find("an address such as 0x1f40") != std::string::npos);
  CHECK(error_of("-64 READ 0\n").find("an address such as 0x1f40") != std::string::npos);
  CHECK(error_of("0x1FFFFFFFFFFFFFFFF READ 0\n").find("an address") != std::string::npos);
  CHECK(error_of("0x40 FETCH 0\n").find("READ or WRITE, got \"FETCH\"") != std::string::npos);
  CHECK(error_of("0x40 READ -1\n").find("an arrival cycle >= 0") != std::string::npos);
  CHECK(error_of("0x40 READ 5\n0x80 READ 4\n").find("line 2") != std::string::npos);
  CHECK(error_of("0x40 READ 5\n0x80 READ 4\n").find("got 4 after 5") != std::string::npos);
  CHECK(error_of(std::string("0x40 READ 0\0 x\n", 15)).find("NUL byte") != std::string::npos);
  CHECK(error_of("# ok\n0x40 READ 0" + std::string(1100, ' ') + "\n")
            .find("line 2: expected a request line of at most 1024 characters, got 1112") !=
        std::string::npos);
}

// The one-pass parse of plain lines hands every line it does not take whole to the strtoull /
// strtoll path; at each of its limits the two must agree (values worked out by hand).
TEST_CASE("trace reader: the limits of the plain-line parse") {
  const std::string text =
      "0xFFFFFFFFFFFFFFFF READ 0\n"            // 16 hex digits: the widest plain
      "0x0000000000000000040 READ 1\n"         // 19 hex digits: strtoull takes it
      "18446744073709551615 WRITE 2\n"         // 20 decimal digits: 2^64 - 1
      "9999999999999999999 READ 3\n"           // 19 decimal digits: the widest plain
      "0x40 READ 123456789012345678\n"         // 18 digits: the widest plain cycle
      "0x40 READ 1234567890123456789\n"        // 19 digits: strtoll takes it
      "0x40 READ 0001234567890123456789\n"     // leading zeros: base 10 all the same
      "0x40\r READ\v1234567890123456789 \f\n"  // every space strtoll's sscanf splits on
      "0x40 READ 1234567890123456790\r\r\n";   // CRs before the line end
  const auto t = read_dramsim3_trace(write("limits.trc", text));
  REQUIRE(t.size() == 9);
  CHECK(t[0].addr == 0xffffffffffffffffULL);
  CHECK(t[1].addr == 0x40);
  CHECK(t[1].arrival == 1);
  CHECK(t[2].addr == 18446744073709551615ULL);
  CHECK(t[2].is_write);
  CHECK(t[3].addr == 9999999999999999999ULL);
  CHECK(t[4].arrival == 123456789012345678LL);
  CHECK(t[5].arrival == 1234567890123456789LL);
  CHECK(t[6].arrival == 1234567890123456789LL);
  CHECK(t[7].arrival == 1234567890123456789LL);
  CHECK(t[8].arrival == 1234567890123456790LL);
  // Just past each limit, or with a stray byte inside a token: the same errors as before.
  CHECK(error_of("0x1FFFFFFFFFFFFFFFF READ 0\n").find("line 1: expected an address") !=
        std::string::npos);  // 17 significant hex digits overflow
  CHECK(error_of("18446744073709551616 READ 0\n").find("an address") != std::string::npos);
  CHECK(error_of("0xZ READ 0\n").find("an address such as 0x1f40, got \"0xZ\"") !=
        std::string::npos);
  CHECK(error_of("0x40 READ 9223372036854775808\n").find("an arrival cycle >= 0") !=
        std::string::npos);  // 2^63 does not fit
  CHECK(error_of("0x40 READ 12a\n").find("an arrival cycle >= 0, got \"12a\"") !=
        std::string::npos);
  CHECK(error_of("0x40 READS 1\n").find("READ or WRITE, got \"READS\"") != std::string::npos);
  CHECK(error_of(std::string("0x4\0 READ 1\n", 12)).find("NUL byte") != std::string::npos);
  CHECK(error_of(std::string("0x40 RE\0D 1\n", 12)).find("NUL byte") != std::string::npos);
  CHECK(error_of(std::string("0x40 READ 1\0\n", 13)).find("NUL byte") != std::string::npos);
  CHECK(error_of(std::string("# \0\n", 4)).find("NUL byte") != std::string::npos);
  CHECK(error_of("0x40 READ 1\n0x40 READ\n").find("line 2: expected \"0xADDR") !=
        std::string::npos);
}
