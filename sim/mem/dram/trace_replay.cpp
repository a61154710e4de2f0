#include "mem/dram/trace_replay.h"

#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "core/error.h"
#include "core/int_math.h"
#include "core/memory_budget.h"
#include "core/output_file.h"
#include "core/splitmix.h"
#include "mem/dram/direct_replay.h"

namespace fusim::dram {
namespace {

// One request line as the reader first took it (sscanf of three tokens, strtoull/strtoll):
// the reference for every line, and the path taken for any line the fast parse below does
// not take as plainly valid, so that odd lines get exactly the same request or error.
// `line` has its line end; returns false for a blank or comment line.
bool parse_line_slow(const std::string& path, std::int64_t line_no, std::string line,
                     TraceRequest& r) {
  const std::string where = fmt::format("line {}", line_no);
  if (line.find('\0') != std::string::npos)
    throw InputError(path, where, "a text line, got a NUL byte (binary data?)");
  if (line.size() > 1024)
    throw InputError(path, where,
                     fmt::format("a request line of at most 1024 characters, got {}", line.size()));
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  std::size_t first = line.find_first_not_of(" \t");
  if (first == std::string::npos || line[first] == '#') return false;
  char addr_s[128], op_s[64], cyc_s[64], extra[8];
  const int n = std::sscanf(line.c_str(), "%127s %63s %63s %7s", addr_s, op_s, cyc_s, extra);
  if (n != 3) {
    throw InputError(path, where,
                     fmt::format("\"0xADDR READ|WRITE CYCLE\", got \"{}\"", line.substr(0, 80)));
  }
  char* end = nullptr;
  const std::string a(addr_s);
  errno = 0;
  r.addr = std::strtoull(a.c_str(), &end, 0);
  if (*end != '\0' || errno != 0 || a[0] == '-') {
    throw InputError(path, where, fmt::format("an address such as 0x1f40, got \"{}\"", a));
  }
  const std::string op(op_s);
  if (op == "READ" || op == "read" || op == "P_MEM_RD" || op == "IFETCH")
    r.is_write = false;
  else if (op == "WRITE" || op == "write" || op == "P_MEM_WR")
    r.is_write = true;
  else
    throw InputError(path, where, fmt::format("READ or WRITE, got \"{}\"", op));
  errno = 0;
  const long long c = std::strtoll(cyc_s, &end, 10);
  if (*end != '\0' || errno != 0 || c < 0) {
    throw InputError(path, where, fmt::format("an arrival cycle >= 0, got \"{}\"", cyc_s));
  }
  r.arrival = c;
  return true;
}

constexpr std::size_t kChunk = 1 << 16;

// A regular file mapped read-only and populated at once (the page cache's pages, no copy).
class MappedText {
 public:
  MappedText() = default;
  MappedText(const MappedText&) = delete;
  MappedText& operator=(const MappedText&) = delete;
  ~MappedText() {
    if (data_) munmap(data_, size_);
  }
  bool map(int fd, std::size_t size) {
    void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (p == MAP_FAILED) return false;
    data_ = p;
    size_ = size;
    return true;
  }
  const char* data() const { return static_cast<const char*>(data_); }
  std::size_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

// The value of a hexadecimal digit, 16 for any other byte.
constexpr std::array<std::uint8_t, 256> kHexValue = [] {
  std::array<std::uint8_t, 256> t{};
  for (auto& v : t) v = 16;
  for (int c = '0'; c <= '9'; ++c) t[c] = static_cast<std::uint8_t>(c - '0');
  for (int c = 'a'; c <= 'f'; ++c) t[c] = static_cast<std::uint8_t>(c - 'a' + 10);
  for (int c = 'A'; c <= 'F'; ++c) t[c] = static_cast<std::uint8_t>(c - 'A' + 10);
  return t;
}();

bool is_digit(char c) {
  return static_cast<unsigned char>(c - '0') < 10;
}

// The plain case, in one pass and without allocating: "ADDR OP CYCLE" with a hexadecimal
// (0x, up to 16 digits) or decimal (no leading zero, up to 19 digits) address, one of the
// known operations and a decimal cycle of up to 18 digits. Returns false for anything else,
// a NUL byte anywhere included (it is no space, digit or operation letter), so such lines
// take the slow path and its error. (Accumulators are unsigned: a too-long number wraps
// harmlessly before it is refused.)
bool parse_line_fast(const char* p, const char* end, TraceRequest& r) {
  while (p < end && is_space(*p)) ++p;
  const char* const a = p;
  std::uint64_t addr = 0;
  if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
    p += 2;
    const char* const digits = p;
    for (std::uint8_t d; p < end && (d = kHexValue[static_cast<unsigned char>(*p)]) < 16; ++p)
      addr = addr << 4 | d;
    if (p == digits || p - digits > 16) return false;
  } else {
    for (; p < end && is_digit(*p); ++p) addr = addr * 10 + static_cast<std::uint64_t>(*p - '0');
    if (p == a || p - a > 19 || (a[0] == '0' && p - a > 1)) return false;  // (octal: slow path)
  }
  if (p == end || !is_space(*p)) return false;  // the address token ends here
  while (p < end && is_space(*p)) ++p;
  const char* const o = p;
  while (p < end && !is_space(*p)) ++p;
  const auto len = static_cast<std::size_t>(p - o);
  auto is = [o, len](const char* name, std::size_t n) {
    return n == len && std::memcmp(o, name, n) == 0;
  };
  if (is("READ", 4) || is("read", 4) || is("P_MEM_RD", 8) || is("IFETCH", 6))
    r.is_write = false;
  else if (is("WRITE", 5) || is("write", 5) || is("P_MEM_WR", 8))
    r.is_write = true;
  else
    return false;
  while (p < end && is_space(*p)) ++p;
  const char* const c = p;
  std::uint64_t cycle = 0;
  for (; p < end && is_digit(*p); ++p) cycle = cycle * 10 + static_cast<std::uint64_t>(*p - '0');
  if (p == c || p - c > 18) return false;
  while (p < end && is_space(*p)) ++p;
  if (p != end) return false;  // exactly three tokens
  r.addr = addr;
  r.arrival = static_cast<Cycle>(cycle);
  return true;
}

}  // namespace

std::vector<TraceRequest> read_dramsim3_trace(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (!f) throw InputError(path, "file", "a readable DRAMsim3 trace file (it does not open)");
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> guard(f, std::fclose);
  // The whole file in one buffer, then lines parsed in place: no allocation per line
  // (whole lines, not fixed-size reads: a long line must not be read as several requests,
  // and a NUL byte must not silently cut a line short; both found by fuzz_dram_trace).
  // A regular file is mapped rather than copied: the copy and the page faults of an
  // 11 MB buffer were a third of `fusim dram`'s time outside the replay.
  std::string text;
  const char* data = nullptr;
  std::size_t size = 0;
  struct stat st;
  const bool regular = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
  MappedText mapped;
  if (regular) {
    // The budget first, as the chunked read below checks it: refused at the first 64 KiB
    // chunk that crosses it, so with the same figure (and before a huge file is read in).
    const auto budget = static_cast<std::uint64_t>(memory_budget_bytes());
    const auto n = static_cast<std::uint64_t>(st.st_size);
    check_memory_budget(path, "file", "trace text",
                        n > budget ? std::min(n, (budget / kChunk + 1) * kChunk) : n, 1);
  }
  if (regular && mapped.map(fileno(f), static_cast<std::size_t>(st.st_size))) {
    data = mapped.data();
    size = mapped.size();
  } else {
    if (regular) text.reserve(static_cast<std::size_t>(st.st_size));  // one allocation
    char chunk[kChunk];
    for (std::size_t got; (got = std::fread(chunk, 1, sizeof chunk, f)) > 0;) {
      text.append(chunk, got);
      // A device or pipe has no size: /dev/zero read whole never ended.
      check_memory_budget(path, "file", "trace text", text.size(), 1);
    }
    if (std::ferror(f))
      throw InputError(path, "file", "a readable DRAMsim3 trace file (read failed)");
    data = text.data();
    size = text.size();
  }
  std::vector<TraceRequest> out;
  out.reserve(size / 16);
  std::int64_t line_no = 0;
  Cycle last = 0;
  const char* p = data;
  const char* const end = p + size;
  while (p < end) {
    ++line_no;
    const char* nl =
        static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
    const char* line_end = nl ? nl + 1 : end;  // with its line end
    const auto length = static_cast<std::size_t>(line_end - p);
    const char* body_end = line_end;
    while (body_end > p && (body_end[-1] == '\n' || body_end[-1] == '\r')) --body_end;
    TraceRequest r;
    bool request;
    if (length <= 1024 && parse_line_fast(p, body_end, r)) {
      request = true;  // (a blank or comment line is no plain request line)
    } else {
      const char* first = p;
      while (first < body_end && (*first == ' ' || *first == '\t')) ++first;
      if (length <= 1024 && std::memchr(p, '\0', length) == nullptr &&
          (first == body_end || *first == '#'))
        request = false;  // blank or comment
      else
        request = parse_line_slow(path, line_no, std::string(p, length), r);
    }
    p = line_end;
    if (!request) continue;
    if (r.arrival < last) {
      throw InputError(
          path, fmt::format("line {}", line_no),
          fmt::format("arrival cycles in non-decreasing order, got {} after {}", r.arrival, last));
    }
    last = r.arrival;
    out.push_back(r);
  }
  return out;
}

void write_dramsim3_trace(const std::string& path, const std::vector<TraceRequest>& trace) {
  fmt::memory_buffer text;
  for (const auto& r : trace)
    fmt::format_to(std::back_inserter(text), "0x{:X} {} {}\n", r.addr,
                   r.is_write ? "WRITE" : "READ", r.arrival);
  write_file_atomically(path, fmt::to_string(text), "-o");
}

std::vector<TraceRequest> generate_trace(const TraceGenOptions& o) {
  std::vector<TraceRequest> out;
  out.reserve(o.count);
  std::uint64_t state = o.seed;
  const std::uint64_t lines = std::max<std::uint64_t>(o.footprint / o.line, 1);
  const std::uint64_t mix = o.reads + o.writes;
  std::uint64_t addr = 0;
  for (std::uint64_t i = 0; i < o.count; ++i) {
    TraceRequest r;
    switch (o.pattern) {
      case TracePattern::Stream:
        r.addr = (i % lines) * o.line;
        break;
      case TracePattern::Random:
        r.addr = (splitmix64(state) % lines) * o.line;
        break;
      case TracePattern::Strided:
        r.addr = addr;
        addr = (addr + o.stride) % (lines * o.line);
        break;
    }
    // Writes spread evenly through the mix (Bresenham): i-th request is a write when the
    // running write quota crosses an integer.
    r.is_write = mix > 0 && ((i + 1) * o.writes / mix) != (i * o.writes / mix);
    r.arrival = static_cast<Cycle>(i) * o.interval;
    out.push_back(r);
  }
  return out;
}

namespace {

// Sends trace requests at their arrival ticks; when the controller is full it waits for
// the DramSystem's retry instead of polling.
class TraceFeeder {
 public:
  TraceFeeder(DramSystem& dram, EventQueue& queue, const std::vector<TraceRequest>& trace,
              Cycle max_cycles, std::uint32_t bytes)
      : dram_(dram),
        queue_(queue),
        trace_(trace),
        max_cycles_(max_cycles),
        bytes_(bytes),
        tck_(dram.spec().tCK) {
    dram_.set_retry([this] { feed(); });
  }
  void feed() {
    const Tick now = queue_.now();
    while (next_ < trace_.size()) {
      const TraceRequest& t = trace_[next_];
      if (t.arrival >= max_cycles_) {
        next_ = trace_.size();
        break;
      }
      const Tick at = t.arrival * tck_;
      if (at > now) {
        if (at != scheduled_) {
          scheduled_ = at;
          queue_.schedule(at, Priority::Compute, [this] { feed(); });
        }
        return;
      }
      mem::MemRequest r;
      r.addr = t.addr;
      r.bytes = bytes_;
      r.is_write = t.is_write;
      r.requester = t.requester;
      r.id = next_;
      if (!dram_.will_accept(r)) {
        dram_.request_retry();  // the retry calls feed() again
        return;
      }
      dram_.send(r);
      ++next_;
    }
  }
  std::uint64_t sent() const { return next_; }

 private:
  DramSystem& dram_;
  EventQueue& queue_;
  const std::vector<TraceRequest>& trace_;
  Cycle max_cycles_;
  std::uint32_t bytes_;
  Tick tck_;
  std::size_t next_ = 0;
  Tick scheduled_ = -1;
};

}  // namespace

ReplayResult replay_trace(DramSystem& dram, EventQueue& queue,
                          const std::vector<TraceRequest>& trace, Cycle max_cycles,
                          std::uint32_t bytes, ReplayDriver driver) {
  const Tick tck = dram.spec().tCK;
  const DramStats before = dram.stats();
  const bool direct_ok = max_cycles == kNoCycle && dram.direct_replay_ok();
  FUSIM_ASSERT(driver != ReplayDriver::Direct || direct_ok,
               "direct replay asked for a partial trace or a system in use");
  // Auto keeps an observer's view identical too: with several channels, only the event
  // order fixes how their same-cycle commands interleave.
  if (driver == ReplayDriver::Direct || (driver == ReplayDriver::Auto && direct_ok &&
                                         (!dram.observed() || dram.channel_count() == 1))) {
    ReplayResult result;
    result.sent = DirectReplay(dram, queue).run(trace.data(), trace.size(), bytes);
    queue.run();  // the channels' last wake-ups, as the event-driven replay ends
    dram.finish();
    result.stats = dram.stats() - before;
    const Tick end = std::max(queue.now(), dram.last_completion());
    result.stats.elapsed = end - before.elapsed;
    result.cycles = ceil_div(end, tck);
    return result;
  }
  TraceFeeder feeder(dram, queue, trace, max_cycles, bytes);
  if (queue.now() == 0)
    feeder.feed();
  else
    queue.schedule(queue.now(), Priority::Compute, [&feeder] { feeder.feed(); });
  if (max_cycles == kNoCycle)
    queue.run();
  else
    queue.run_until(max_cycles * tck);
  dram.finish();
  dram.set_retry(nullptr);
  ReplayResult result;
  result.stats = dram.stats() - before;
  const Tick end =
      max_cycles == kNoCycle ? std::max(queue.now(), dram.last_completion()) : max_cycles * tck;
  result.stats.elapsed = end - before.elapsed;
  result.cycles = ceil_div(end, tck);
  result.sent = feeder.sent();
  return result;
}

}  // namespace fusim::dram
