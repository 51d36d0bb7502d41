#!/usr/bin/env python3
"""What lnrepro's process door costs per short command, on a machine with many processes.

A bisect step runs a hundred or so short commands (git, mostly) through ``lnrepro.doors.proc``.
After each one the door makes sure nothing of it is left: members of its process group, and
processes that escaped the group and were re-parented to lnrepro (a subreaper). This script
times ``proc.capture(["true"])`` (wall, and this process's CPU) against a bare
``subprocess.run(["true"])``, with ``--others`` idle processes alive beside it (a card host
runs hundreds: containers, shims, a watcher, ssh sessions).

    python scripts/bench_proc.py [--calls 200] [--others 300]
"""

from __future__ import annotations

import argparse
import os
import platform
import signal
import subprocess
import time

from lnrepro.doors import proc


def measure(fn, calls: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """(wall, CPU of this process) per call, in ms."""
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls * 1e3, (time.process_time() - c0) / calls * 1e3


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--others", type=int, default=300)
    args = ap.parse_args()
    # the others are orphans in a group of their own, re-parented away from this process before
    # it becomes a subreaper: its children would be escapees, killed by the first capture
    launcher = subprocess.run(
        [
            "sh",
            "-c",
            f"for i in $(seq {args.others}); do sleep 600 >/dev/null 2>&1 & done; echo $$",
        ],
        stdout=subprocess.PIPE,
        text=True,
        check=True,
        start_new_session=True,
    )
    others = int(launcher.stdout)  # the group's id
    proc.become_subreaper()
    try:
        processes = sum(1 for e in os.scandir("/proc") if e.name.isdigit())
        print(
            f"machine: {platform.machine()}, {os.cpu_count()} cpu(s), Python "
            f"{platform.python_version()}, {processes} processes, {args.calls} calls each"
        )
        rows = {
            "subprocess.run(['true'])": lambda: subprocess.run(["true"], check=False),
            "proc.capture(['true'])": lambda: proc.capture(["true"]),
        }
        for name, fn in rows.items():
            wall, cpu = measure(fn, args.calls)
            print(f"  {name:<26} {wall:6.2f} ms wall  {cpu:6.2f} ms CPU per call")
        left = sum(1 for e in os.scandir("/proc") if e.name.isdigit())
        print(f"processes at the end: {left}")
    finally:
        os.killpg(others, signal.SIGKILL)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
