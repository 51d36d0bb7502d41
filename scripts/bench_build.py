"""Build-time baselines of the tt-metal look-alike: what the container and bisect work is judged by.

Generates a look-alike whose clean build takes about a minute on 2 cores (``--tus``), then times,
each through its own ``./build_metal.sh --debug --build-tt-train --build-tests``:

  clean build (no ccache) · no-change rebuild · one-file change (a libtt_metal unit) ·
  kernel change (the LayerNorm backward kernel) · clean build with a cold ccache ·
  clean build with a warm ccache

and prints a Markdown table (seconds, and % of the clean build). Usage:

    python scripts/bench_build.py [--tus 150] [--repeat 1] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.lookalike import KERNEL, Spec, generate, use_compilers

FLAGS = ["--debug", "--build-tt-train", "--build-tests"]


def timed(checkout: Path, *extra: str, env: dict[str, str]) -> float:
    start = time.monotonic()
    res = subprocess.run(
        [str(checkout / "build_metal.sh"), *FLAGS, *extra],
        cwd=checkout,
        env=env,
        capture_output=True,
        check=False,
    )
    if res.returncode != 0:
        sys.exit(f"build failed:\n{(res.stdout + res.stderr).decode(errors='replace')[-3000:]}")
    return time.monotonic() - start


def clean(checkout: Path, env: dict[str, str]) -> None:
    subprocess.run(
        [str(checkout / "build_metal.sh"), "--clean"],
        cwd=checkout,
        env=env,
        check=True,
        capture_output=True,
    )


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(text)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--tus", type=int, default=150, help="generated translation units [150]")
    ap.add_argument("--repeat", type=int, default=1, help="repeat each incremental measurement")
    ap.add_argument("--keep", type=Path, help="generate here and keep it")
    ns = ap.parse_args()
    use_compilers()  # the clang-17/clang-20 the look-alike's toolchain files name
    if not shutil.which("ccache"):
        sys.exit("ccache is not installed (apt-get install ccache)")
    work = Path(tempfile.mkdtemp(prefix="lnrepro-bench-build-"))
    checkout = (ns.keep or work / "tt-metal").resolve()
    generate(checkout, Spec(commits=40, tus=ns.tus, tu_functions=24))
    env = {**os.environ, "CCACHE_DIR": str(work / "ccache")}
    rows: list[tuple[str, float]] = []
    rows.append(("clean build, no ccache", timed(checkout, env=env)))
    rows.append(
        ("no-change rebuild", statistics.median(timed(checkout, env=env) for _ in range(ns.repeat)))
    )
    samples = []
    for k in range(ns.repeat):
        append(checkout / "tt_metal/impl/gen/unit_000.cpp", f"\nstatic int touched_{k} = {k};\n")
        samples.append(timed(checkout, env=env))
    rows.append(("one-file change (a libtt_metal unit)", statistics.median(samples)))
    samples = []
    for k in range(ns.repeat):
        append(checkout / KERNEL, f"\n// touched {k}\n")
        samples.append(timed(checkout, env=env))
    rows.append(("kernel change (layernorm_bw_kernel.cpp)", statistics.median(samples)))
    clean(checkout, env)
    rows.append(("clean build, cold ccache", timed(checkout, "--enable-ccache", env=env)))
    clean(checkout, env)
    rows.append(("clean build, warm ccache", timed(checkout, "--enable-ccache", env=env)))
    base = rows[0][1]
    print(
        f"Look-alike with {ns.tus} generated units; {os.cpu_count()} cores, {platform.machine()}, "
        f"{platform.python_version()}; build_metal.sh {' '.join(FLAGS)} (Ninja)\n"
    )
    print("| build | seconds | of a clean build |")
    print("| --- | ---: | ---: |")
    for name, secs in rows:
        print(f"| {name} | {secs:.1f} | {100 * secs / base:.0f}% |")
    if not ns.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
