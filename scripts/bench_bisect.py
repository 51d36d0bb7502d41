"""`lnrepro bisect` next to `git bisect run` on the same look-alike histories and the same oracle.

In one run:

1. evaluations: on deterministic histories (the culprit on a merged branch, and on the
   first-parent line), the test commands each tool ran to find the culprit — lnrepro's endpoint
   checks and its re-test of the culprit counted apart (git does neither);
2. per-step overhead on a >= 50,000-file look-alike: lnrepro's preparation of a commit (worktree
   checkout, submodules, the BugRepro pick) against raw `git checkout` + `git submodule update`
   of the same commits (target <= 1.2x);
3. build per step: the incremental builds of a real build+test bisect (`--runner local`) against
   one clean build, which tt-metal's tt_bisect.sh does at every step (`rm -rf build*`).

    python scripts/bench_bisect.py [--histories 8] [--bulk-files 50000] [--tus 150]
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

from tests.lookalike import KERNEL, Spec, build, device_env, generate

GIT_FILE_OK = {
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "protocol.file.allow",
    "GIT_CONFIG_VALUE_0": "always",
}
ENV = {**os.environ, **GIT_FILE_OK}
HAS_FIX = f"grep -q 'zero_dst_reg(dest, kMeanDyGamma);' {KERNEL}"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, env=ENV
    ).stdout


def lnrepro_bisect(repo: Path, *args: str) -> dict:
    p = subprocess.run([sys.executable, "-m", "lnrepro", "bisect", "--repo", str(repo), *args, "--json"],
                       capture_output=True, text=True, env=ENV, check=False)  # fmt: skip
    if p.returncode != 0:
        sys.exit(f"lnrepro bisect failed: {p.stderr[-2000:]}")
    return json.loads(p.stdout)


def git_bisect_run(repo: Path, good: str, bad: str, counter: Path) -> tuple[str, int]:
    clone = repo.parent / (repo.name + "-gitbisect")
    subprocess.run(
        ["git", "clone", "-q", "--no-checkout", str(repo), str(clone)], check=True, env=ENV
    )
    git(clone, "checkout", "-q", "--detach", bad)
    git(clone, "bisect", "start", bad, good)
    out = git(clone, "bisect", "run", "sh", "-c", f"echo x >> {counter}; {HAS_FIX}")
    first = next(line.split()[0] for line in out.splitlines() if "is the first bad commit" in line)
    return first, len(counter.read_text().splitlines())


def evaluations(work: Path, n: int) -> list[tuple[str, int, int, int, bool, bool]]:
    rows = []
    for i in range(n):
        on_branch = i % 4 != 3
        t = generate(
            work / f"h{i}" / "tt-metal",
            Spec(seed=100 + i, commits=200, tus=1, culprit_on_branch=on_branch),
        )
        repo = Path(t.path)
        r = lnrepro_bisect(repo, "--good", t.good, "--bad", t.bad, "--command", HAS_FIX)
        counter = work / f"h{i}" / "count"
        g_first, g_evals = git_bisect_run(repo, t.good, t.bad, counter)
        confirms = sum(s["kind"] == "confirm" for s in r["steps_taken"])
        rows.append(("merged branch" if on_branch else "first-parent", r["steps"], r["endpoint_checks"] + confirms,
                     g_evals, r["first_bad"] == t.culprit, g_first == t.culprit))  # fmt: skip
    return rows


def overhead(work: Path, bulk: int) -> tuple[float, float, float, int]:
    t = generate(work / "big" / "tt-metal", Spec(seed=7, commits=200, tus=1, bulk_files=bulk))
    repo = Path(t.path)
    r = lnrepro_bisect(
        repo, "--good", t.good, "--bad", t.bad, "--command", HAS_FIX, "--pick", t.bugrepro
    )
    shas = [s["sha"] for s in r["steps_taken"]]
    mine = sum(s["checkout_s"] for s in r["steps_taken"])
    picks = sum(s["prepare_s"] - s["checkout_s"] for s in r["steps_taken"])
    raw = work / "big" / "raw"
    git(repo, "worktree", "add", "-q", "--detach", str(raw), t.good)
    start = time.monotonic()
    for sha in shas:
        git(raw, "checkout", "-q", "--detach", sha)
        git(raw, "submodule", "update", "--init", "--recursive", "-q")
    theirs = time.monotonic() - start
    return mine / len(shas), picks / len(shas), theirs / len(shas), len(shas)


def builds(work: Path, tus: int) -> tuple[list[float], float]:
    t = generate(work / "build" / "tt-metal", Spec(seed=3, commits=200, tus=tus))
    repo = Path(t.path)
    env = device_env(work / "build", repo)
    env.pop("TT_METAL_HOME")
    fp = t.first_parent
    good = fp[fp.index(t.culprit_merge) - 16]
    p = subprocess.run(
        [sys.executable, "-m", "lnrepro", "bisect", "--repo", str(repo), "--good", good, "--bad", t.culprit_merge,
         "--pick", t.bugrepro, "--runner", "local", "--filter", "*Deterministic_2048Features",
         "--record-dir", str(work / "build" / "runs"), "--json"],
        capture_output=True, text=True, env={**ENV, **env}, check=False,
    )  # fmt: skip
    if p.returncode != 0:
        sys.exit(f"build bisect failed: {p.stderr[-2000:]}")
    doc = json.loads(p.stdout)
    per_step = []
    for s in doc["steps_taken"]:
        if s.get("record"):
            rec = json.loads((Path(s["record"]) / "record.json").read_text())
            if rec.get("build"):
                per_step.append(float(rec["build"]["seconds"]))
    clean_tree = work / "build" / "clean"
    git(repo, "worktree", "add", "-q", "--detach", str(clean_tree), good)
    git(clean_tree, "submodule", "update", "--init", "-q")
    res = build(clean_tree, "--debug", "--build-tt-train", "--build-tests")
    return per_step, res.seconds


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--histories", type=int, default=8)
    ap.add_argument("--bulk-files", type=int, default=50_000)
    ap.add_argument("--tus", type=int, default=150)
    ap.add_argument("--only", nargs="*", default=["evaluations", "overhead", "builds"])
    ns = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lnrepro-bench-bisect-"))
    try:
        rows = evaluations(work, ns.histories) if "evaluations" in ns.only else []
        mine, picks, theirs, n = (
            overhead(work, ns.bulk_files) if "overhead" in ns.only else (0, 0, 1, 0)
        )
        per_step, clean = builds(work, ns.tus) if "builds" in ns.only else ([0.0], 0.0)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}, "
          f"{subprocess.run(['git', '--version'], capture_output=True, text=True).stdout.strip()}\n")  # fmt: skip
    mean = statistics.mean
    if rows:
        print("| history (200 first-parent commits) | lnrepro steps | + endpoint/confirm runs "
              "| `git bisect run` evaluations | right (lnrepro / git) |")  # fmt: skip
        print("| --- | ---: | ---: | ---: | --- |")
        for kind, steps, extra, g, ok, gok in rows:
            right = f"{'yes' if ok else 'NO'} / {'yes' if gok else 'NO'}"
            print(f"| culprit on the {kind} | {steps} | {extra} | {g} | {right} |")
        print(f"| **mean** | **{mean(r[1] for r in rows):.1f}** | {mean(r[2] for r in rows):.1f} | "
              f"**{mean(r[3] for r in rows):.1f}** | |\n")  # fmt: skip
    if n:
        print(f"| per step, {ns.bulk_files:,}-file look-alike ({n} commits) | seconds |")
        print("| --- | ---: |")
        print(f"| lnrepro: worktree checkout and submodules | {mine:.3f} |")
        print(f"| raw `git checkout` + `git submodule update` | {theirs:.3f} |")
        print(f"| ratio (target <= 1.2x) | {mine / theirs:.2f}x |")
        print(
            f"| then the BugRepro pick (`git cherry-pick --no-commit`), which raw git lacks | {picks:.3f} |\n"
        )
    if "builds" in ns.only:
        print(f"| build per step ({ns.tus}-unit look-alike, `--runner local`) | seconds |")
        print("| --- | ---: |")
        print(f"| lnrepro, incremental in its reused worktree: median of {len(per_step)} steps "
              f"(the first, from nothing: {per_step[0]:.1f}) | {statistics.median(per_step):.1f} |")  # fmt: skip
        print(f"| a clean build, as tt_bisect.sh does at every step | {clean:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
