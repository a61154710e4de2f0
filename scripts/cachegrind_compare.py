#!/usr/bin/python3
"""Checks fusim's cache hierarchy against valgrind's cachegrind, an independent simulator.

For each access pattern, a small C program makes exactly those data accesses (one aligned
8-byte load or store per step, through a volatile pointer, on a 2 MiB-aligned array), and
the script writes the same accesses as a Dinero-style trace for `fusim cache`. Cachegrind
runs with --D1 and --LL set explicitly; fusim gets the same geometry (D1 + LL, LRU,
write-back + write-allocate, LL non-inclusive like cachegrind's). Cachegrind counts the
whole process (dynamic loader, libc start-up, exit), so each pattern is also run with 0
steps and that baseline is subtracted; both runs end by sweeping a 2 MiB scrub buffer so the
caches are in the same state when the exit path runs. Set-index bits of both caches lie below 2 MiB, so the trace's
base address (0x10000000) maps to the same sets as the real array.

Usage: scripts/cachegrind_compare.py [--fusim build/fusim] [--keep DIR]
Prints a table (pattern, D1 misses cachegrind/fusim, LL misses cachegrind/fusim) and
exits 1 if any count differs by more than --tolerance (default 4: start-up and exit code
move by a line or two with the stack layout, so cachegrind's side carries +-2 of noise).
Measured (valgrind 3.19, D1 32KiB/8/64, LL 1MiB/16/64): seq-read 131071 vs 131072 (D1),
131074 vs 131072 (LL); stride-4k 1599/1600, 18/16; reuse-512k 32767/32768, 8194/8192;
lcg-2m 196801/196802, 105549/105547; mixed 206489/206489, 16384/16384.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

D1 = (32768, 8, 64)
LL = (1048576, 16, 64)
BASE = 0x10000000
ARRAY_BYTES = 4 << 20

C_PROGRAM = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
/* usage: prog PATTERN STEPS ; every step is one aligned 8-byte access to a[] */
int main(int argc, char** argv) {
  const char* p = argv[1];
  long steps = atol(argv[2]);
  volatile uint64_t* a = aligned_alloc(1 << 21, %(bytes)d);
  volatile uint64_t* scrub = aligned_alloc(1 << 21, 2 << 20); /* allocated before the
     pattern: malloc's own data must not be touched between the pattern and the scrub */
  uint64_t n = %(bytes)d / 8, sum = 0;
  if (!strcmp(p, "seq-read")) {          /* sweep the 4 MiB array, element by element */
    for (long s = 0; s < steps; ++s) sum += a[s %% n];
  } else if (!strcmp(p, "seq-write")) {
    for (long s = 0; s < steps; ++s) a[s %% n] = s;
  } else if (!strcmp(p, "stride-4k")) {  /* 16 lines 4 KiB apart: one D1 set, 16 LL sets */
    for (long s = 0; s < steps; ++s) a[(s %% 16) * 512] = s;
  } else if (!strcmp(p, "reuse-512k")) { /* 512 KiB swept repeatedly: fits LL, not D1 */
    for (long s = 0; s < steps; ++s) sum += a[(s * 8) %% (65536)];
  } else if (!strcmp(p, "lcg-2m")) {     /* pseudo-random loads over 2 MiB */
    uint32_t x = 1;
    for (long s = 0; s < steps; ++s) {
      x = x * 1103515245u + 12345u;
      sum += a[(x >> 4) %% 262144];
    }
  } else if (!strcmp(p, "mixed")) {      /* random writes over 8 KiB + reads of 1 MiB */
    uint32_t x = 7;
    for (long s = 0; s < steps; ++s) {
      x = x * 1103515245u + 12345u;
      if (s & 1) a[(x >> 8) %% 1024] = s; else sum += a[(s * 4) %% 131072];
    }
  }
  /* Scrub: sweep 2 MiB (twice D1 and LL) that the pattern never touches, so both caches end
     in the same state whatever the pattern did, and the exit path misses the same lines in
     the measured run as in the 0-step baseline. */
  for (long i = 0; i < (2 << 20) / 8; i += 8) sum += scrub[i];
  return (int)(sum & 1);
}
"""


def pattern_accesses(name, steps):
    """The (is_write, element index) sequence the C program makes."""
    n = ARRAY_BYTES // 8
    if name == "seq-read":
        return (("R", s % n) for s in range(steps))
    if name == "seq-write":
        return (("W", s % n) for s in range(steps))
    if name == "stride-4k":
        return (("W", (s % 16) * 512) for s in range(steps))
    if name == "reuse-512k":
        return (("R", (s * 8) % 65536) for s in range(steps))
    if name == "lcg-2m":
        def gen():
            x = 1
            for _ in range(steps):
                x = (x * 1103515245 + 12345) & 0xFFFFFFFF
                yield ("R", (x >> 4) % 262144)
        return gen()
    if name == "mixed":
        def gen():
            x = 7
            for s in range(steps):
                x = (x * 1103515245 + 12345) & 0xFFFFFFFF
                yield ("W", (x >> 8) % 1024) if s & 1 else ("R", (s * 4) % 131072)
        return gen()
    raise ValueError(name)


PATTERNS = [("seq-read", 1048576), ("seq-write", 1048576), ("stride-4k", 1600),
            ("reuse-512k", 32768), ("lcg-2m", 200000), ("mixed", 400000)]


def cachegrind_misses(prog, name, steps, workdir):
    cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=yes",
           "--D1=%d,%d,%d" % D1, "--LL=%d,%d,%d" % LL, "--I1=32768,8,64",
           "--cachegrind-out-file=" + os.path.join(workdir, "cg.out"), prog, name, str(steps)]
    out = subprocess.run(cmd, capture_output=True, text=True).stderr

    def grab(label):
        m = re.search(r"==\d+== " + re.escape(label) + r"\s+misses:\s+([\d,]+)", out)
        if not m:
            sys.exit("cannot find '%s misses' in cachegrind output:\n%s" % (label, out))
        return int(m.group(1).replace(",", ""))
    return grab("D1"), grab("LLd")


def fusim_misses(fusim, name, steps, workdir):
    trace = os.path.join(workdir, name + ".trace")
    with open(trace, "w") as f:
        for op, index in pattern_accesses(name, steps):
            f.write("%s 0x%x 8\n" % (op, BASE + index * 8))
    config = os.path.join(workdir, "cachegrind_like.json")
    with open(config, "w") as f:
        json.dump({"levels": [
            {"name": "D1", "size": D1[0], "assoc": D1[1], "line": D1[2], "policy": "lru",
             "latency_cycles": 4},
            {"name": "LL", "size": LL[0], "assoc": LL[1], "line": LL[2], "policy": "lru",
             "latency_cycles": 40, "shared": True, "inclusion": "non-inclusive"}]}, f)
    out = subprocess.run([fusim, "cache", "--config", config, "--trace", trace, "--json"],
                         capture_output=True, text=True, check=True).stdout
    levels = json.loads(out)["levels"]
    return levels[0]["misses"], levels[1]["misses"]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fusim", default=os.path.join(here, "..", "build", "fusim"))
    ap.add_argument("--keep", help="keep the program, traces and configs in this folder")
    # Start-up and exit code shifts by a line or two with the stack layout (the program's path
    # and environment), so a few misses of difference remain however the baseline is taken.
    ap.add_argument("--tolerance", type=int, default=4)
    args = ap.parse_args()
    workdir = args.keep or tempfile.mkdtemp(prefix="fusim-cg-")
    os.makedirs(workdir, exist_ok=True)
    src = os.path.join(workdir, "access.c")
    prog = os.path.join(workdir, "access")
    with open(src, "w") as f:
        f.write(C_PROGRAM % {"bytes": ARRAY_BYTES})
    subprocess.run(["cc", "-O1", "-o", prog, src], check=True)

    print("%-11s %8s | %12s %12s %6s | %12s %12s %6s" %
          ("pattern", "steps", "D1 cg", "D1 fusim", "diff", "LL cg", "LL fusim", "diff"))
    worst = 0
    for name, steps in PATTERNS:
        d1_full, ll_full = cachegrind_misses(prog, name, steps, workdir)
        d1_base, ll_base = cachegrind_misses(prog, name, 0, workdir)
        d1_cg, ll_cg = d1_full - d1_base, ll_full - ll_base
        d1_f, ll_f = fusim_misses(args.fusim, name, steps, workdir)
        worst = max(worst, abs(d1_cg - d1_f), abs(ll_cg - ll_f))
        print("%-11s %8d | %12d %12d %6d | %12d %12d %6d" %
              (name, steps, d1_cg, d1_f, d1_f - d1_cg, ll_cg, ll_f, ll_f - ll_cg))
    print("largest difference: %d misses (tolerance %d)" % (worst, args.tolerance))
    return 0 if worst <= args.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
