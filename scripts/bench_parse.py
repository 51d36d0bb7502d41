#!/usr/bin/env python3
"""Parse throughput and peak memory on a large tt-metal-shaped log, next to grep -c.

Generates a log (default 1 GiB) shaped like a tt-metal ttml_tests run: thousands of tests,
heavy logger and DPRINT noise between markers, failure blocks with metrics, and
--gtest_repeat iterations. Then, each in a fresh process on the same file:

  * ``lnrepro.gtest.files.parse_log_file`` (what ``lnrepro parse`` does), timed, with peak RSS;
  * ``grep -c '[ RUN'`` on the same file, as the floor any line-oriented tool pays.

Target (issue #2): >= 150 MB/s and < 100 MB peak RSS on one core. Memory does not grow with
the log's size but with the number of test results kept (one per test per iteration): the
``dense`` shape packs ten times more results into each GB than ``heavy``.

    python scripts/bench_parse.py                 # 1 GiB in $TMPDIR, removed afterwards
    python scripts/bench_parse.py --size-mb 200 --keep /tmp/big.log
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SUITE = "LayerNormBackwardOpTest"


def noise(rng: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.6:
            out.append(
                f"2025-12-16 13:55:{rng.randrange(60):02d}.{rng.randrange(1000):03d} | info     |"
                f"           Metal | Program cache hit for kernel layernorm_bw_kernel_{rng.randrange(99)}"
                f" on core ({rng.randrange(8)},{rng.randrange(8)}) (program_cache.cpp:{rng.randrange(900)})\n"
            )
        elif r < 0.9:
            out.append(
                f"0:({rng.randrange(8)},{rng.randrange(8)}):TR{rng.randrange(3)}: tile {rng.randrange(256)}"
                f" sum={rng.uniform(-9, 9):.5f} block_idx={rng.randrange(4)} [dst reg {rng.randrange(8)}]\n"
            )
        else:
            out.append(
                "2025-12-16 13:55:34.231 | debug    |          Always | DPRINT enabled on device 0, "
                "worker core (x=0,y=0) (virtual (x=18,y=18)). (dprint_server.cpp:688)\n"
            )
    return out


NOISE = {"heavy": (200, 600), "dense": (20, 60)}  # logger/DPRINT lines per test


def generate(path: Path, size: int, tests: int, seed: int, shape: str) -> dict[str, int]:
    rng = random.Random(seed)
    pool = noise(rng, 4000)
    lo, hi = NOISE[shape]
    written = iterations = blocks = 0
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        while written < size:
            iterations += 1
            parts = [
                f"\nRepeating all tests (iteration {iterations}) . . .\n\n",
                f"Note: Google Test filter = {SUITE}.*\n",
                f"[==========] Running {tests} tests from 1 test suite.\n",
                "[----------] Global test environment set-up.\n",
                f"[----------] {tests} tests from {SUITE}\n",
            ]
            for t in range(tests):
                name = f"{SUITE}.BugRepro_Case{t:05d}"
                parts.append(f"[ RUN      ] {name}\n")
                start = rng.randrange(len(pool) - hi)
                parts.extend(pool[start : start + rng.randrange(lo, hi)])
                if t % 3 == 0:
                    parts.append(
                        f"dx FAILED: max_diff={rng.uniform(900, 1000):.6g}, mean_diff={rng.uniform(900, 1010):.6g}\n"
                    )
                    parts.append(
                        "/home/u/tt-metal/tt-train/tests/ops/layernorm_bw_fused_op_test.cpp:183: Failure\n"
                        "Value of: xt::allclose(metal_dx_flat, dx_ref, 1.0e-3F, 5e-1F)\n  Actual: false\nExpected: true\n"
                    )
                    parts.append(f"[  FAILED  ] {name} ({rng.randrange(3000)} ms)\n")
                else:
                    parts.append(f"[       OK ] {name} ({rng.randrange(3000)} ms)\n")
                blocks += 1
            parts.append(
                f"[----------] {tests} tests from {SUITE} (9 ms total)\n\n"
                "[----------] Global test environment tear-down\n"
                f"[==========] {tests} tests from 1 test suite ran. (9 ms total)\n"
            )
            text = "".join(parts)
            fh.write(text)
            written += len(text)
    return {"bytes": path.stat().st_size, "iterations": iterations, "test_results": blocks}


# Peak RSS is read as VmHWM from /proc/self/status: ru_maxrss survives exec on Linux, so a
# child of this (large) process would report the parent's peak.
HWM = "int(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1])"
PARSE = f"""
import sys, time
from pathlib import Path
from lnrepro.gtest.files import parse_log_file
t = time.perf_counter()
run = parse_log_file(Path(sys.argv[1]), exit_code=1)
dt = time.perf_counter() - t
print(dt, len(run.tests), len(run.iterations), {HWM})
"""

BASELINE = f"print({HWM})"


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--tests", type=int, default=2000, help="tests per iteration")
    ap.add_argument(
        "--noise",
        choices=sorted(NOISE),
        default="heavy",
        help="heavy: 200-600 noise lines per test (a DPRINT-heavy run); "
        "dense: 20-60 (the worst case for the parser: 10x the results per GB)",
    )
    ap.add_argument("--keep", type=Path, help="write the log here and keep it")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    path = args.keep or Path(tempfile.mkstemp(prefix="lnrepro-bench-", suffix=".log")[1])
    try:
        t0 = time.perf_counter()
        shape = generate(path, args.size_mb * 1024 * 1024, args.tests, seed=1, shape=args.noise)
        gen_s = time.perf_counter() - t0
        mb = shape["bytes"] / 1e6
        subprocess.run(
            ["cat", str(path)], stdout=subprocess.DEVNULL, check=True
        )  # warm the page cache
        out = subprocess.run(
            [sys.executable, "-c", PARSE, str(path)], capture_output=True, text=True, check=True
        ).stdout.split()
        parse_s, n_tests, n_iter, rss_kb = float(out[0]), int(out[1]), int(out[2]), int(out[3])
        base_kb = int(
            subprocess.run(
                [sys.executable, "-c", "import lnrepro.gtest.files;" + BASELINE],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        t = time.perf_counter()
        grep = subprocess.run(["grep", "-cF", "[ RUN", str(path)], capture_output=True, text=True)
        grep_s = time.perf_counter() - t
        result = {
            "machine": f"{platform.machine()} {os.cpu_count()} cpu(s), Python {platform.python_version()}",
            "log_mb": round(mb, 1),
            "generated_in_s": round(gen_s, 1),
            **shape,
            "parse_s": round(parse_s, 2),
            "parse_mb_per_s": round(mb / parse_s, 1),
            "parse_peak_rss_mb": round(rss_kb / 1024, 1),
            "python_baseline_rss_mb": round(base_kb / 1024, 1),
            "parsed_test_results": n_tests,
            "parsed_iterations": n_iter,
            "grep_c_s": round(grep_s, 2),
            "grep_c_mb_per_s": round(mb / grep_s, 1),
            "grep_c_count": int(grep.stdout.strip() or 0),
            "target": ">= 150 MB/s, < 100 MB RSS",
        }
        ok = result["parse_mb_per_s"] >= 150 and result["parse_peak_rss_mb"] < 100
        assert n_tests == shape["test_results"] == result["grep_c_count"], (
            "parser and grep disagree"
        )
        if args.json:
            print(json.dumps(result, indent=2))
        else:
            for k, v in result.items():
                print(f"{k:>24}: {v}")
            print(f"{'verdict':>24}: {'meets target' if ok else 'MISSES target'}")
        return 0 if ok else 1
    finally:
        if not args.keep:
            path.unlink(missing_ok=True)


if __name__ == "__main__":
    raise SystemExit(main())
