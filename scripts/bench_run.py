"""`lnrepro run --tt-metal` in the container, against the same build run by hand with `docker run`.

On a look-alike whose clean build takes about a minute on 2 cores (``--tus``), in the toolchain
image the tests make (debootstrap, cached by name), in one run:

  builds through `lnrepro run --runner docker` (build seconds from the record):
      clean (cold ccache) · no-change rebuild · one-file change · clean with a warm ccache
  the same four by hand: `docker run --rm -v DIR:DIR -w DIR -u UID:GID -e CCACHE_DIR=…
      IMAGE ./build_metal.sh --debug --build-tt-train --build-tests --enable-ccache`
  per attempt: lnrepro's wall time per attempt (`run -n N`, build excluded) against a bare
      `docker run IMAGE ttml_tests --gtest_filter=…` of the same test

Targets (issue 9): no-change ≤ 10% of a clean build, one-file change ≤ 30%, overhead per attempt
≤ 0.5 s over a bare `docker run`. Needs root, dockerd and debootstrap (as scripts/test.sh sets up).

    python scripts/bench_run.py [--tus 150] [--attempts 5]
"""

from __future__ import annotations

import argparse
import json
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

from tests.lookalike import Spec, ensure_toolchain_image, generate

BUILD = ["./build_metal.sh", "--debug", "--build-tt-train", "--build-tests", "--enable-ccache"]
FILTER = "*OneTilePerRow"


def fake_card(checkout: Path) -> dict[str, str]:
    """A device node and hugepage mount as files inside the (mounted) checkout."""
    root = checkout / ".bench-card"
    (root / "dev").mkdir(parents=True, exist_ok=True)
    (root / "dev" / "0").touch()
    (root / "mounts").write_text("hugetlbfs /dev/hugepages-1G hugetlbfs rw 0 0\n")
    return {
        "TT_LOOKALIKE_DEV_ROOT": str(root / "dev"),
        "TT_LOOKALIKE_PROC_MOUNTS": str(root / "mounts"),
    }


def lnrepro_run(
    checkout: Path, image: str, home: Path, work: Path, *extra: str
) -> tuple[dict, float]:
    env_args = [a for k, v in fake_card(checkout).items() for a in ("--env", f"{k}={v}")]
    start = time.monotonic()
    p = subprocess.run(
        [sys.executable, "-m", "lnrepro", "run", "--tt-metal", str(checkout), "--image", image,
         "--filter", FILTER, "--record-dir", str(work / "runs"), "--json", *env_args, *extra],
        capture_output=True, text=True, env={**os.environ, "HOME": str(home)}, check=False,
    )  # fmt: skip
    wall = time.monotonic() - start
    if p.returncode != 0:
        sys.exit(f"lnrepro run failed ({p.returncode}):\n{p.stderr[-3000:]}")
    return json.loads(p.stdout), wall


def by_hand(
    checkout: Path,
    image: str,
    ccache: Path,
    argv: list[str],
    extra_env: dict[str, str] | None = None,
) -> float:
    uid, gid = os.getuid(), os.getgid()
    env = {"CCACHE_DIR": str(ccache), "TT_METAL_HOME": str(checkout), **(extra_env or {})}
    cmd = ["docker", "run", "--rm", "-v", f"{checkout}:{checkout}", "-v", f"{ccache}:{ccache}",
           "-w", str(checkout), "-u", f"{uid}:{gid}"]  # fmt: skip
    for k, v in env.items():
        cmd += ["-e", f"{k}={v}"]
    start = time.monotonic()
    p = subprocess.run([*cmd, image, *argv], capture_output=True, check=False)
    if p.returncode not in (0, 1):
        sys.exit(f"docker run failed ({p.returncode}): {p.stderr.decode()[-2000:]}")
    return time.monotonic() - start


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--tus", type=int, default=150)
    ap.add_argument("--attempts", type=int, default=5)
    ns = ap.parse_args()
    image = ensure_toolchain_image()
    work = Path(tempfile.mkdtemp(prefix="lnrepro-bench-run-"))
    try:
        rows: list[tuple[str, float, float]] = []
        checkout = work / "tt-metal"
        generate(checkout, Spec(commits=40, tus=ns.tus))
        home = work / "home"  # lnrepro's ccache lives under $HOME/.cache/lnrepro/ccache: cold
        unit = checkout / "tt_metal/impl/gen/unit_000.cpp"

        def lnrepro_build(*extra: str) -> float:
            doc, _ = lnrepro_run(checkout, image, home, work, *extra)
            return float(doc["build"]["seconds"])

        clean = lnrepro_build()
        nochange = lnrepro_build()
        unit.write_text(unit.read_text() + "\nstatic int bench_touched = 1;\n")
        onefile = lnrepro_build()
        shutil.rmtree(checkout / "build_Debug")
        warm = lnrepro_build()
        # the same by hand, in a second checkout with its own cold ccache
        hand = work / "by-hand" / "tt-metal"
        generate(hand, Spec(commits=40, tus=ns.tus))
        ccache = work / "hand-ccache"
        ccache.mkdir()
        h_clean = by_hand(hand, image, ccache, BUILD)
        h_nochange = by_hand(hand, image, ccache, BUILD)
        hunit = hand / "tt_metal/impl/gen/unit_000.cpp"
        hunit.write_text(hunit.read_text() + "\nstatic int bench_touched = 1;\n")
        h_onefile = by_hand(hand, image, ccache, BUILD)
        shutil.rmtree(hand / "build_Debug")
        h_warm = by_hand(hand, image, ccache, BUILD)
        rows = [
            ("clean build, cold ccache", clean, h_clean),
            ("no-change rebuild", nochange, h_nochange),
            ("one-file change", onefile, h_onefile),
            ("clean build, warm ccache", warm, h_warm),
        ]
        # per attempt
        doc, wall = lnrepro_run(checkout, image, home, work, "-n", str(ns.attempts))
        per_attempt = (wall - float(doc["build"]["seconds"])) / ns.attempts
        attempt_secs = statistics.median(a["seconds"] for a in doc["attempts"])
        binary = str(checkout / "build/tt-train/tests/ttml_tests")
        bare = statistics.median(
            by_hand(
                checkout, image, ccache, [binary, f"--gtest_filter={FILTER}"], fake_card(checkout)
            )
            for _ in range(ns.attempts)
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"Look-alike with {ns.tus} generated units; {os.cpu_count()} cores, {platform.machine()}, "
          f"Python {platform.python_version()}; image {image} (Debian bookworm toolchain)\n")  # fmt: skip
    print(
        "| build, in the container | `lnrepro run` | by hand (`docker run`) | of lnrepro's clean build |"
    )
    print("| --- | ---: | ---: | ---: |")
    for name, mine, theirs in rows:
        print(f"| {name} | {mine:.1f} s | {theirs:.1f} s | {100 * mine / clean:.0f}% |")
    print()
    print(f"| per attempt ({FILTER}, median of {ns.attempts}) | seconds |")
    print("| --- | ---: |")
    print(f"| bare `docker run` of the test binary | {bare:.2f} |")
    print(
        f"| `lnrepro run -n {ns.attempts}`: one attempt's container, as recorded | {attempt_secs:.2f} |"
    )
    print(
        f"| `lnrepro run -n {ns.attempts}`: wall time per attempt (start-up included, build excluded) | {per_attempt:.2f} |"
    )
    print(f"| overhead over a bare `docker run` | {per_attempt - bare:+.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
