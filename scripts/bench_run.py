"""`lnrepro run --tt-metal` in the container: its target-only build against the same commands by
hand, and against the whole build with tt-metal's tests (`--build-tests`, lnrepro's old plan).

On a look-alike whose library takes about a minute to build on 2 cores (``--tus``) and whose
tt-metal tests as much again (``--test-tus``: on tt-metal the tests are most of a full build),
in the toolchain image the tests make (debootstrap, cached by name), in one run:

  builds through `lnrepro run --runner docker` (build seconds from the record): its plan,
      `build_metal.sh --debug --build-tt-train --enable-ccache --configure-only` then
      `cmake --build build_Debug --target ttml_tests`;
  the same commands by hand (`docker run --rm -v DIR:DIR -w DIR -u UID:GID -e CCACHE_DIR=… IMAGE`);
  by hand, the old plan: `./build_metal.sh --debug --build-tt-train --build-tests --enable-ccache`;
  each: clean (cold ccache) · no-change rebuild · one-file change in libtt_metal · clean with a
  warm ccache; each in its own checkout and ccache.
  per attempt: lnrepro's wall time per attempt (`run -n N`, build excluded) against a bare
      `docker run IMAGE ttml_tests --gtest_filter=…` of the same test

Targets (issue 9): no-change ≤ 10% of a clean build, one-file change ≤ 30%, overhead per attempt
≤ 0.5 s over a bare `docker run`. Needs root, dockerd and debootstrap (as scripts/test.sh sets up).

    python scripts/bench_run.py [--tus 150] [--test-tus 150] [--attempts 5]
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
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.lookalike import Spec, ensure_toolchain_image, generate

OLD_PLAN = [["./build_metal.sh", "--debug", "--build-tt-train", "--build-tests", "--enable-ccache"]]
TARGET_ONLY = [
    ["./build_metal.sh", "--debug", "--build-tt-train", "--enable-ccache", "--configure-only"],
    ["cmake", "--build", "build_Debug", "--target", "ttml_tests"],
]
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
        [
            sys.executable,
            "-m",
            "lnrepro",
            "run",
            "--tt-metal",
            str(checkout),
            "--image",
            image,
            "--filter",
            FILTER,
            "--record-dir",
            str(work / "runs"),
            "--json",
            *env_args,
            *extra,
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(home)},
        check=False,
    )
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
    cmd = [
        "docker",
        "run",
        "--rm",
        "--entrypoint",
        "",
        "-v",
        f"{checkout}:{checkout}",
        "-v",
        f"{ccache}:{ccache}",
        "-w",
        str(checkout),
        "-u",
        f"{uid}:{gid}",
    ]
    for k, v in env.items():
        cmd += ["-e", f"{k}={v}"]
    start = time.monotonic()
    p = subprocess.run([*cmd, image, *argv], capture_output=True, check=False)
    if p.returncode not in (0, 1):
        sys.exit(f"docker run failed ({p.returncode}): {p.stderr.decode()[-2000:]}")
    return time.monotonic() - start


def by_hand_all(checkout: Path, image: str, ccache: Path, commands: list[list[str]]) -> float:
    return sum(by_hand(checkout, image, ccache, argv) for argv in commands)


def four_builds(checkout: Path, build: Callable[[], float]) -> list[float]:
    """clean (cold ccache), no change, one libtt_metal unit changed, clean with a warm ccache."""
    unit = checkout / "tt_metal/impl/gen/unit_000.cpp"
    clean = build()
    nochange = build()
    unit.write_text(unit.read_text() + "\nstatic int bench_touched = 1;\n")
    onefile = build()
    shutil.rmtree(checkout / "build_Debug")
    return [clean, nochange, onefile, build()]


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--tus", type=int, default=150)
    ap.add_argument("--test-tus", type=int, default=150)
    ap.add_argument("--attempts", type=int, default=5)
    ns = ap.parse_args()
    image = ensure_toolchain_image()
    work = Path(tempfile.mkdtemp(prefix="lnrepro-bench-run-"))
    spec = Spec(commits=40, tus=ns.tus, tu_functions=24, test_tus=ns.test_tus)
    try:
        checkout = work / "tt-metal"
        generate(checkout, spec)
        home = work / "home"  # lnrepro's ccache lives under $HOME/.cache/lnrepro/ccache: cold

        def lnrepro_build() -> float:
            doc, _ = lnrepro_run(checkout, image, home, work)
            return float(doc["build"]["seconds"])

        mine = four_builds(checkout, lnrepro_build)
        columns = [mine]
        for name, commands in (("same", TARGET_ONLY), ("old", OLD_PLAN)):
            hand = work / name / "tt-metal"
            generate(hand, spec)
            ccache = work / f"{name}-ccache"
            ccache.mkdir()
            columns.append(
                four_builds(
                    hand, lambda h=hand, c=ccache, cmds=commands: by_hand_all(h, image, c, cmds)
                )
            )
        names = [
            "clean build, cold ccache",
            "no-change rebuild",
            "one-file change (libtt_metal)",
            "clean build, warm ccache",
        ]
        # per attempt
        doc, wall = lnrepro_run(checkout, image, home, work, "-n", str(ns.attempts))
        per_attempt = (wall - float(doc["build"]["seconds"])) / ns.attempts
        attempt_secs = statistics.median(a["seconds"] for a in doc["attempts"])
        binary = str(checkout / "build_Debug/tt-train/tests/ttml_tests")
        bare = statistics.median(
            by_hand(
                checkout,
                image,
                work / "same-ccache",
                [binary, f"--gtest_filter={FILTER}"],
                fake_card(checkout),
            )
            for _ in range(ns.attempts)
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"Look-alike with {ns.tus} generated library units and {ns.test_tus} tt-metal test units; "
        f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}; "
        f"image {image} (Debian bookworm toolchain)\n"
    )
    print(
        "| build, in the container | `lnrepro run` (ttml_tests only) | the same by hand "
        "| by hand, old plan (`--build-tests`) | lnrepro / old plan |"
    )
    print("| --- | ---: | ---: | ---: | ---: |")
    for i, name in enumerate(names):
        a, b, c = (col[i] for col in columns)
        print(f"| {name} | {a:.1f} s | {b:.1f} s | {c:.1f} s | {100 * a / c:.0f}% |")
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
