#!/usr/bin/env python3
"""What a Python process of lnrepro costs with and without its bytecode cache.

With PYTHONDONTWRITEBYTECODE=1 and no ``__pycache__`` (a sandbox or CI image that sets it, and
an editable install, whose sources pip does not compile), every process compiles each module it
imports anew. This script copies ``lnrepro/`` to a temporary folder, runs each command there
``--times`` times without a cache, then compiles the copy (``compileall``, as scripts/test.sh
does) and runs them again, and prints the CPU (user + system, of the process and its children)
per run. The commands are the ones a test run starts most often: a CLI run of the emulator (the
CLI and the emulator's own process), ``lnrepro parse --json`` and ``lnrepro --help``. Then the
emulator's process with a BLAS thread per core (numpy's default) and with one (its own).

``--help-ratio`` measures only what issue 37 asks of ``lnrepro --help``: its CPU against a bare
``python -c 'import click'``, both with their bytecode compiled as installed, median of
``--times`` runs each, interleaved so a loaded machine slows both alike. With ``--check`` it
exits 1 when the ratio is over ``--max-ratio`` (2).

    python scripts/bench_startup.py [--times 10]
    python scripts/bench_startup.py --help-ratio [--times 40] [--check]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOG = """[==========] Running 1 test from 1 test suite.
[ RUN      ] S.T
[       OK ] S.T (1 ms)
[==========] 1 test from 1 test suite ran. (1 ms total)
[  PASSED  ] 1 test.
"""


def cpu_of(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """CPU seconds of ``argv`` and everything it waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=False)
    assert done.returncode in (0, 1), done.stderr.decode()[-500:]  # 1: the bug reproduced
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--times", type=int, default=10)
    ap.add_argument(
        "--help-ratio", action="store_true", help="only `lnrepro --help` against `import click`"
    )
    ap.add_argument(
        "--check", action="store_true", help="with --help-ratio: exit 1 over --max-ratio"
    )
    ap.add_argument("--max-ratio", type=float, default=2.0)
    args = ap.parse_args()
    if args.help_ratio:
        ratio = help_ratio(args.times)
        return 1 if args.check and ratio > args.max_ratio else 0
    with tempfile.TemporaryDirectory(prefix="lnrepro-bench-startup-") as tmp:
        work = Path(tmp)
        shutil.copytree(
            ROOT / "lnrepro", work / "lnrepro", ignore=shutil.ignore_patterns("__pycache__")
        )
        (work / "g.log").write_text(LOG)
        env = {**os.environ, "PYTHONPATH": str(work), "PYTHONDONTWRITEBYTECODE": "1"}
        py = sys.executable
        commands = {
            "lnrepro run (emulator, 1 test)": [
                py,
                "-m",
                "lnrepro",
                "run",
                "--backend",
                "emulator",
                "-n",
                "1",
                "--filter",
                "*Deterministic_2048Features",
                "--record-dir",
                str(work / "runs"),
            ],
            "lnrepro parse --json": [py, "-m", "lnrepro", "parse", str(work / "g.log"), "--json"],
            "lnrepro --help": [py, "-m", "lnrepro", "--help"],
        }
        rows: dict[str, list[float]] = {}
        for state in ("no cache", "compiled"):
            if state == "compiled":
                subprocess.run(
                    [py, "-m", "compileall", "-q", str(work / "lnrepro")],
                    check=True,
                    capture_output=True,
                    env={**env, "PYTHONDONTWRITEBYTECODE": ""},
                )
            for name, argv in commands.items():
                cpu_of(argv, env, work)  # warm the page cache
                runs = [cpu_of(argv, env, work) for _ in range(args.times)]
                rows.setdefault(name, []).append(sorted(runs)[len(runs) // 2])
    print(
        f"# {platform.node()}: {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"median of {args.times} runs, CPU s per run (user + system, children included)"
    )
    print(f"{'command':<34} {'no cache':>9} {'compiled':>9} {'saved':>7}")
    for name, (cold, warm) in rows.items():
        print(f"{name:<34} {cold:>9.3f} {warm:>9.3f} {cold - warm:>7.3f}")
    blas_threads(args.times)
    return 0


def help_ratio(times: int) -> float:
    """Median CPU of ``lnrepro --help`` over that of ``python -c 'import click'``; printed."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    argvs = {
        "python -c 'import click'": [sys.executable, "-c", "import click"],
        "lnrepro --help": [sys.executable, "-m", "lnrepro", "--help"],
    }
    runs: dict[str, list[float]] = {name: [] for name in argvs}
    for argv in argvs.values():
        cpu_of(argv, env, ROOT)  # bytecode written, page cache warm
    for _ in range(times):
        for name, argv in argvs.items():
            runs[name].append(cpu_of(argv, env, ROOT))
    med = {name: sorted(r)[len(r) // 2] for name, r in runs.items()}
    click_s, help_s = med["python -c 'import click'"], med["lnrepro --help"]
    print(
        f"# {platform.node()}: {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"median of {times} runs, CPU s per run (user + system)"
    )
    for name, value in med.items():
        print(f"{name:<28} {value:>7.3f}")
    print(f"{'ratio':<28} {help_s / click_s:>7.2f}")
    return help_s / click_s


def blas_threads(times: int) -> None:
    """The emulator's process with numpy's default, a BLAS thread per core, against its own
    default of one (``lnrepro.emulator.main``): the threads start, and spin, in every process."""
    argv = [sys.executable, "-m", "lnrepro.emulator", "--gtest_filter=*OneTile"]
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    cases = {
        f"{os.cpu_count()} (numpy's default)": {**env, "OPENBLAS_NUM_THREADS": str(os.cpu_count())},
        "1 (the emulator's)": env,
    }
    print(f"\nthe emulator, 1 test; BLAS threads, median CPU s of {times} runs")
    for name, e in cases.items():
        cpu_of(argv, e, ROOT)
        runs = sorted(cpu_of(argv, e, ROOT) for _ in range(times))
        print(f"{name:<34} {runs[len(runs) // 2]:>9.3f}")


if __name__ == "__main__":
    raise SystemExit(main())
