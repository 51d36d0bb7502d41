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

``--help-ratio`` measures what issue 45 asks of every ``lnrepro COMMAND --help`` (and of
``lnrepro --help``): its CPU against a bare ``python -c 'import click'``, both with their bytecode
compiled as installed, median of ``--times`` pairs (15 by default), each pair run back to back so
a loaded machine slows both alike, and which of numpy, docker, git and msgspec it imports. With
``--check`` it exits 1 when a ratio is over ``--max-ratio`` (1.5).

    python scripts/bench_startup.py [--times 10]
    python scripts/bench_startup.py --help-ratio [--times 15] [--check]
"""

from __future__ import annotations

import argparse
import importlib.metadata
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
    ap.add_argument("--times", type=int, default=None, help="10; with --help-ratio 15")
    ap.add_argument(
        "--help-ratio", action="store_true", help="each COMMAND --help against `import click`"
    )
    ap.add_argument(
        "--check", action="store_true", help="with --help-ratio: exit 1 over --max-ratio"
    )
    ap.add_argument("--max-ratio", type=float, default=1.5)
    args = ap.parse_args()
    args.times = args.times or (15 if args.help_ratio else 10)
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


HEAVY = ("numpy", "docker", "git", "msgspec")  # what no --help may import (issue 45)


def heavy_of(command: list[str]) -> list[str]:
    """The packages of :data:`HEAVY` that ``lnrepro COMMAND --help`` imports."""
    code = (
        "import sys; from lnrepro.cli import main\n"
        f"try: main({[*command, '--help']!r})\n"
        "except SystemExit: pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [m for m in HEAVY if repr(m) in out.stdout.splitlines()[-1]]


def help_ratio(times: int) -> float:
    """Per command, the median CPU of ``lnrepro COMMAND --help`` over that of a bare ``python -c
    'import click'``, the two run in pairs (a loaded machine slows both alike); printed as a
    table with what each imports of :data:`HEAVY`. Returns the worst ratio."""
    from lnrepro.cli.commands import COMMANDS

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    click_argv = [sys.executable, "-c", "import click"]
    py = [sys.executable, "-m", "lnrepro"]
    commands = {"lnrepro --help": [], **{f"lnrepro {c} --help": [c] for c in sorted(COMMANDS)}}
    print(
        f"# {platform.node()}: {platform.machine()}, {os.cpu_count()} cores, load "
        f"{os.getloadavg()[0]:.1f}, Python {platform.python_version()}, click "
        f"{importlib.metadata.version('click')}; median of {times} paired runs, CPU s per run "
        "(user + system), bytecode compiled"
    )
    print(f"{'command':<30} {'help s':>7} {'click s':>7} {'ratio':>6}  imports")
    worst = 0.0
    for name, command in commands.items():
        argv = [*py, *command, "--help"]
        cpu_of(argv, env, ROOT)  # bytecode written, page cache warm
        pairs = [(cpu_of(argv, env, ROOT), cpu_of(click_argv, env, ROOT)) for _ in range(times)]
        help_s = sorted(h for h, _ in pairs)[times // 2]
        click_s = sorted(c for _, c in pairs)[times // 2]
        ratio = sorted(h / c for h, c in pairs)[times // 2]  # of the pairs: each pair's own load
        worst = max(worst, ratio)
        heavy = ", ".join(heavy_of(command)) or "-"
        print(f"{name:<30} {help_s:>7.3f} {click_s:>7.3f} {ratio:>6.2f}  {heavy}")
    return worst


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
