"""`lnrepro bisect` next to `git bisect run` on the same look-alike histories and the same oracle.

In one run:

1. evaluations: on deterministic histories (the culprit on a merged branch, and on the
   first-parent line), the test commands each tool ran to find the culprit — lnrepro's endpoint
   checks and its re-test of the culprit counted apart (git does neither);
2. per-step overhead on a >= 50,000-file look-alike: lnrepro's preparation of a commit (worktree
   checkout, submodules, the BugRepro pick) against raw `git checkout` + `git submodule update`
   of the same commits (target <= 1.2x);
3. build per step: the incremental builds of a real build+test bisect (`--runner local`) against
   one clean build, which tt-metal's tt_bisect.sh does at every step (`rm -rf build*`);
4. noise (``--only noise``): lnrepro's search engines, driven in-process on the same histories'
   commit graphs by a seeded simulated test — buggy commits fail 70% of runs, clean ones 5%,
   and optionally 10% of runs hit an infrastructure error — against ``git bisect``'s policy
   (one run, trusted), a tt_bisect.sh-style policy (3 tries, any pass is good) and
   git-bayesect's entropy rule (the same posterior, the next run chosen by expected entropy,
   cost-blind). Costs: a 30-minute build, a 1-minute run, a 72-second rebuild of a commit
   built before (warm ccache, ~4% of a build as bench_run.py measured).

5. scale (``--only scale``): a simulated 5,000-commit first-parent range, deterministic bug, with
   prebuilt artifacts on every 50th commit. Costs (issue 24's): a build 30 minutes, a rebuild 1.2
   (a commit within 50 commits of the one last built in that worktree: the build tree and ccache
   are warm), a run 1, an artifact fetched in 3. Machine-hours and wall hours to the culprit for
   lnrepro's search (artifacts first, then builds inside the last interval; its endpoint checks
   and the culprit's confirmation included), ``--jobs 1`` and ``--jobs 4``; ``git bisect run``
   building at every step (a clean 30-minute build, as the issue has it, and the kinder
   incremental model); tt_bisect.sh (``rm -rf build*``: a clean build per step). The search is
   lnrepro's own code (lnrepro.bisect.core.Search with ``prefer``); the costs are a model.

    python scripts/bench_bisect.py [--histories 8] [--bulk-files 50000] [--tus 150] [--trials 200]
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.lookalike import KERNEL, Spec, build, device_env, generate, use_compilers

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
    doc = json.loads(p.stdout)  # the bisect record: its result, with its steps beside it
    return {**doc["result"], "steps_taken": doc["steps"]}


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
    t = generate(work / "build" / "tt-metal", Spec(seed=3, commits=200, tus=tus, tu_functions=24))
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
    for s in doc["steps"]:
        if s.get("record"):
            rec = json.loads((Path(s["record"]) / "record.json").read_text())
            if rec.get("build"):
                per_step.append(float(rec["build"]["seconds"]))
    clean_tree = work / "build" / "clean"
    git(repo, "worktree", "add", "-q", "--detach", str(clean_tree), good)
    git(clean_tree, "submodule", "update", "--init", "-q")
    res = build(clean_tree, "--debug", "--build-tt-train", "--build-tests")
    return per_step, res.seconds


# ---------------------------------------------------------------------------------- noise
BUILD_S, REBUILD_S, RUN_S = 1800.0, 72.0, 60.0
Q_BAD, Q_GOOD = 0.7, 0.05


def graphs(work: Path, n: int) -> list[tuple[Any, str, str]]:
    """The commit graphs (and endpoints) of the look-alike histories the other parts use."""
    from lnrepro.bisect.core import graph_from_rev_list

    out = []
    for i in range(n):
        t = generate(
            work / f"g{i}" / "tt-metal",
            Spec(seed=100 + i, commits=200, tus=1, culprit_on_branch=i % 4 != 3),
        )
        lines = git(
            Path(t.path), "rev-list", "--parents", "--reverse", "--topo-order", t.bad, f"^{t.good}"
        ).splitlines()
        out.append((graph_from_rev_list([t.good, *lines]), t.bad, t.good))
        shutil.rmtree(work / f"g{i}", ignore_errors=True)
    return out


class Sim:
    """A seeded test of one trial: which commits are buggy, and what each run shows.

    Common random numbers: the k-th real run of a commit shows the same outcome with or without
    infrastructure errors (drawn from a stream of their own), so the two tables compare the same
    trials, and a difference between them is what the errors did, not sampling.
    """

    def __init__(self, graph: Any, culprit: str, seed: int, infra: float) -> None:
        import random

        self.graph, self.seed, self.infra = graph, seed, infra
        self.infra_rng = random.Random(seed * 7919 + 1)
        self.bit = graph.bit(culprit)
        self.count: dict[str, int] = {}

    def buggy(self, sha: str) -> bool:
        return bool(self.graph.ancestors(sha) & self.bit)

    def run(self, sha: str) -> str:
        """fail | pass | infra."""
        import random

        if self.infra and self.infra_rng.random() < self.infra:
            return "infra"
        k = self.count[sha] = self.count.get(sha, 0) + 1
        u = random.Random(f"{self.seed}:{sha}:{k}").random()
        return "fail" if u < (Q_BAD if self.buggy(sha) else Q_GOOD) else "pass"


@dataclass
class Trial:
    right: bool
    runs: int
    builds: int
    rebuilds: int = 0
    wall_s: float = 0.0
    rounds: int = 0
    stated: float = 1.0


def trial_git(sim: Sim, graph: Any, tip: str, good: str, tries: int, any_pass_good: bool) -> Trial:
    """git bisect run (tries=1: one run, trusted) or tt_bisect.sh-style (3 tries, any pass good).
    An infrastructure error is a non-zero exit: to both, a failure."""
    from lnrepro.bisect.core import Mark, Search

    s = Search(graph, tip, [good])
    runs = builds = 0
    while (c := s.next()) is not None:
        builds += 1
        failed = True
        for _ in range(tries):
            runs += 1
            if sim.run(c) == "pass":
                failed = False
                if any_pass_good:
                    break
        s.record(c, Mark.BAD if failed else Mark.GOOD)
    wall = builds * BUILD_S + runs * RUN_S
    return Trial(s.first_bad() is not None and sim.buggy(s.first_bad() or "") and _parents_clean(sim, graph, s.first_bad()),
                 runs, builds, 0, wall, builds)  # fmt: skip


def _parents_clean(sim: Sim, graph: Any, sha: str | None) -> bool:
    return (
        sha is not None
        and sim.buggy(sha)
        and not any(sim.buggy(p) for p in graph.parents.get(sha, ()) if p in graph)
    )


def trial_bayes(
    sim: Sim, graph: Any, tip: str, good: str, confidence: float, rule: str, jobs: int,
    equal: bool = False, known: bool = False,
) -> Trial:  # fmt: skip
    """``equal``: every evaluation costs the same (``--command``, no build phase); ``known``: the
    fail rates are given (``--fail-rates``), not learned."""
    from lnrepro.bisect.bayes import BayesSearch, Costs, Rates
    from lnrepro.model.bisect import RunOutcome

    costs = Costs(0.0, 0.0, RUN_S, 0.0) if equal else Costs(BUILD_S, REBUILD_S, RUN_S)
    rates = Rates(fixed=(Q_BAD, Q_GOOD)) if known else Rates()
    b = BayesSearch(graph, tip, [good], confidence, rates, costs=costs, rule=rule)
    outcome = {"fail": RunOutcome.FAIL, "pass": RunOutcome.PASS, "infra": RunOutcome.NOISE}
    # asynchronous jobs, as the session runs them: an idle job picks at once; time jumps to the
    # next job to finish
    now, running, rounds = 0.0, {}, 0  # job -> (finish time, action)
    while True:
        for job in range(jobs):
            if job not in running and (
                a := b.next_for(job, {j: x.sha for j, (_, x) in running.items()})
            ):
                fixed = {"none": 0.0, "rebuild": REBUILD_S, "build": BUILD_S}[a.build.value]
                cost = (0.0 if equal else fixed) + RUN_S
                running[job] = (now + cost, a)
                rounds += 1
        if not running:
            break
        job = min(running, key=lambda j: running[j][0])
        now, a = running.pop(job)
        b.observe(a, [(outcome[sim.run(a.sha)], "")])
        if b.done:
            break
    wall = now
    r = b.answer("first bad commit")
    return Trial(_parents_clean(sim, graph, r.first_bad), b.runs + b.noise, b.builds, b.rebuilds, wall, rounds,
                 r.confidence or 0.0)  # fmt: skip


def noise(work: Path, n_hist: int, trials: int) -> dict[str, Any]:
    import random

    gs = graphs(work, n_hist)
    plans = []
    for t in range(trials):
        graph, tip, good = gs[t % len(gs)]
        cands = Search_candidates(graph, tip, good)
        plans.append((graph, tip, good, random.Random(t).choice(cands), 10_000 + t))
    res: dict[str, Any] = {"histories": len(gs), "trials": trials,
                           "candidates": statistics.mean(len(Search_candidates(g, tp, gd)) for g, tp, gd in gs)}  # fmt: skip
    clean = [trial_git(Sim(g, c, seed, 0.0), g, tp, gd, 1, False) for g, tp, gd, c, seed in plans]
    res["deterministic_steps"] = statistics.mean(
        trial_git(Sim_det(g, c), g, tp, gd, 1, False).runs
        for g, tp, gd, c, _ in plans[: len(gs) * 4]
    )
    for infra in (0.0, 0.1):
        key = f"infra={infra:g}"
        rows: dict[str, list[Trial]] = {}
        started = time.monotonic()
        rows["git bisect run (1 run, trusted)"] = clean if infra == 0 else [
            trial_git(Sim(g, c, seed, infra), g, tp, gd, 1, False) for g, tp, gd, c, seed in plans]  # fmt: skip
        rows["tt_bisect.sh-style (3 tries, any pass good)"] = [
            trial_git(Sim(g, c, seed, infra), g, tp, gd, 3, True) for g, tp, gd, c, seed in plans]  # fmt: skip
        rows["git-bayesect entropy rule, 0.95"] = [
            trial_bayes(Sim(g, c, seed, infra), g, tp, gd, 0.95, "entropy", 1) for g, tp, gd, c, seed in plans]  # fmt: skip
        rows["lnrepro --confidence 0.95"] = [
            trial_bayes(Sim(g, c, seed, infra), g, tp, gd, 0.95, "cost", 1) for g, tp, gd, c, seed in plans]  # fmt: skip
        if infra == 0:  # the flaky case where every evaluation costs the same (--command)
            rows["git-bayesect entropy rule, 0.95, equal costs"] = [
                trial_bayes(Sim(g, c, seed, infra), g, tp, gd, 0.95, "entropy", 1, True) for g, tp, gd, c, seed in plans]  # fmt: skip
            rows["lnrepro --confidence 0.95, equal costs"] = [
                trial_bayes(Sim(g, c, seed, infra), g, tp, gd, 0.95, "cost", 1, True) for g, tp, gd, c, seed in plans]  # fmt: skip
            rows[f"lnrepro --confidence 0.95 --fail-rates {Q_BAD:g},{Q_GOOD:g}, equal costs"] = [
                trial_bayes(Sim(g, c, seed, infra), g, tp, gd, 0.95, "cost", 1, True, True) for g, tp, gd, c, seed in plans]  # fmt: skip
        rows["lnrepro --confidence 0.95 --jobs 4"] = [
            trial_bayes(Sim(g, c, seed, infra), g, tp, gd, 0.95, "cost", 4) for g, tp, gd, c, seed in plans]  # fmt: skip
        res[key] = {"rows": rows, "seconds": time.monotonic() - started}
    calib = {}
    for conf in (0.8, 0.9, 0.95, 0.99):
        calib[conf] = [
            trial_bayes(Sim(g, c, seed + 7, 0.0), g, tp, gd, conf, "cost", 1)
            for g, tp, gd, c, seed in plans
        ]
    res["calibration"] = calib
    return res


def Search_candidates(graph: Any, tip: str, good: str) -> list[str]:
    from lnrepro.bisect.core import Search

    return [c for c in Search(graph, tip, [good]).candidates() if c != good]


class Sim_det(Sim):
    """The noise-free test: what git's step count is measured on."""

    def __init__(self, graph: Any, culprit: str) -> None:
        super().__init__(graph, culprit, 0, 0.0)

    def run(self, sha: str) -> str:
        return "fail" if self.buggy(sha) else "pass"


def _h(p: float) -> float:
    import math

    return 0.0 if p <= 0 or p >= 1 else -(p * math.log2(p) + (1 - p) * math.log2(1 - p))


def fano_runs(n: float, delta: float) -> tuple[float, float]:
    """(C, a lower bound on the mean runs): C is the most one run at these fail rates can tell
    (bits, over the split), and Fano's inequality bounds any method that is right 1-delta of the
    time: runs >= (log2 N - h(delta) - delta log2(N-1)) / C."""
    import math

    c = max(
        _h(a * Q_BAD + (1 - a) * Q_GOOD) - a * _h(Q_BAD) - (1 - a) * _h(Q_GOOD)
        for a in (i / 1000 for i in range(1001))
    )
    return c, (math.log2(n) - _h(delta) - delta * math.log2(n - 1)) / c


def print_noise(res: dict[str, Any]) -> None:
    mean = statistics.mean
    det = res["deterministic_steps"]
    cap, bound = fano_runs(res["candidates"], 0.05)
    print(f"Noise: {res['trials']} seeded trials on {res['histories']} look-alike histories "
          f"({res['candidates']:.0f} candidate commits on average); buggy commits fail {Q_BAD:.0%} of runs, "
          f"clean ones {Q_GOOD:.0%}. Without noise git needs {det:.1f} runs. Costs: build {BUILD_S / 60:.0f} min, "
          f"rebuild {REBUILD_S / 60:.1f} min, run {RUN_S / 60:.0f} min. One run tells at most {cap:.2f} bits, so by "
          f"Fano's inequality no method right 95% of the time averages fewer than {bound:.1f} runs ({bound / det:.1f}x git's).\n")  # fmt: skip
    base = {name: mean(t.right for t in ts) for name, ts in res["infra=0"]["rows"].items()}
    for key, title in (
        ("infra=0", "no infrastructure errors"),
        ("infra=0.1", "10% of runs hit an infrastructure error"),
    ):
        print(
            f"| {title} | accuracy | runs (x git's {det:.1f}) | builds | rebuilds | machine hours | wall hours |"
        )
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for name, ts in res[key]["rows"].items():
            acc = mean(t.right for t in ts)
            drop = f" ({(acc - base[name]) * 100:+.1f})" if key != "infra=0" else ""
            equal = "equal costs" in name  # no build phase: every evaluation is one run
            machine = (
                mean(
                    (0 if equal else t.builds * BUILD_S + t.rebuilds * REBUILD_S) + t.runs * RUN_S
                    for t in ts
                )
                / 3600
            )
            print(f"| {name} | {acc:.1%}{drop} | {mean(t.runs for t in ts):.1f} ({mean(t.runs for t in ts) / det:.1f}x) | "
                  f"{mean(t.builds for t in ts):.1f} | {mean(t.rebuilds for t in ts):.1f} | {machine:.1f} | "
                  f"{mean(t.wall_s for t in ts) / 3600:.1f} |")  # fmt: skip
        print(f"\n({res[key]['seconds']:.0f} s to simulate)\n")
    print("| stated confidence | observed accuracy | trials | mean stated posterior at stop |")
    print("| ---: | ---: | ---: | ---: |")
    allt = []
    for conf, ts in res["calibration"].items():
        allt += ts
        print(
            f"| {conf:g} | {mean(t.right for t in ts):.1%} | {len(ts)} | {mean(t.stated for t in ts):.3f} |"
        )
    print("\n| posterior at stop (all levels pooled) | trials | observed accuracy |")
    print("| --- | ---: | ---: |")
    for lo, hi in ((0.8, 0.9), (0.9, 0.95), (0.95, 0.99), (0.99, 1.01)):
        b = [t for t in allt if lo <= t.stated < hi]
        if b:
            print(f"| [{lo:g}, {min(hi, 1):g}) | {len(b)} | {mean(t.right for t in b):.1%} |")
    one, four = (
        res["infra=0"]["rows"]["lnrepro --confidence 0.95"],
        res["infra=0"]["rows"]["lnrepro --confidence 0.95 --jobs 4"],
    )
    print(f"\n--jobs 4 against --jobs 1: actions started {mean(t.rounds for t in four):.1f} vs {mean(t.rounds for t in one):.1f}, "
          f"wall time {mean(t.wall_s for t in four) / 3600:.1f} h vs {mean(t.wall_s for t in one) / 3600:.1f} h "
          f"({mean(t.wall_s for t in one) / mean(t.wall_s for t in four):.2f}x faster)\n")  # fmt: skip


SCALE_N, SCALE_EVERY, NEAR = 5000, 50, 50
MIN = 60.0
BUILD_M, REBUILD_M, RUN_M, FETCH_M = 30.0, 1.2, 1.0, 3.0


def _scale_trial(culprit: int, jobs: int, prefer: bool) -> tuple[float, float, int, int, bool]:
    """(machine minutes, wall minutes, builds, fetches, right) of one lnrepro bisect of the
    5,000-commit line [0 good .. N-1 bad] with the culprit at ``culprit``."""
    from lnrepro.bisect.core import Graph, Mark, Search

    order = tuple(f"c{i}" for i in range(SCALE_N))
    g = Graph(order, {c: ((order[i - 1],) if i else ()) for i, c in enumerate(order)})
    artifacts = frozenset(order[::SCALE_EVERY]) | {order[0], order[-1]} if prefer else frozenset()
    s = Search(g, order[-1], [order[0]], prefer=artifacts)
    last_built: dict[int, int] = {}  # job -> position built last in its worktree
    machine = wall = 0.0
    builds = fetches = 0

    def cost(job: int, pos: int) -> float:
        nonlocal builds, fetches
        if order[pos] in artifacts:
            fetches += 1
            return FETCH_M + RUN_M
        builds += 1
        near = job in last_built and abs(last_built[job] - pos) <= NEAR
        last_built[job] = pos
        return (REBUILD_M if near else BUILD_M) + RUN_M

    # the endpoint checks (lnrepro tests both ends first; git trusts them)
    for job, pos in enumerate((SCALE_N - 1, 0)):
        c = cost(job % jobs, pos)
        machine += c
    wall += machine / min(jobs, 2)
    while batch := s.next_batch(jobs):
        costs = []
        for job, c in enumerate(batch):
            pos = g.position(c)
            costs.append(cost(job, pos))
            s.record(c, Mark.BAD if pos >= culprit else Mark.GOOD)
        machine += sum(costs)
        wall += max(costs)
    fb = s.first_bad()
    for pos in (culprit, culprit - 1):  # the confirmation: the culprit and its parent again
        c = cost(0, pos)
        machine += c
        wall += c
    return machine, wall, builds, fetches, fb == order[culprit]


def _git_trial(culprit: int, clean: bool) -> tuple[float, int]:
    """(machine minutes, steps) of git bisect run building at every step."""
    from lnrepro.bisect.core import Graph, Mark, Search

    order = tuple(f"c{i}" for i in range(SCALE_N))
    g = Graph(order, {c: ((order[i - 1],) if i else ()) for i, c in enumerate(order)})
    s = Search(g, order[-1], [order[0]])
    minutes, steps, last = 0.0, 0, None
    while (c := s.next()) is not None:
        pos = g.position(c)
        near = not clean and last is not None and abs(last - pos) <= NEAR
        minutes += (REBUILD_M if near else BUILD_M) + RUN_M
        last, steps = pos, steps + 1
        s.record(c, Mark.BAD if pos >= culprit else Mark.GOOD)
    return minutes, steps


def scale(trials: int) -> dict[str, Any]:
    import random

    rng = random.Random(24)
    culprits = [rng.randrange(1, SCALE_N - 1) for _ in range(trials)]
    rows: dict[str, tuple[float, float, float, float, float]] = {}
    for name, jobs, prefer in (("lnrepro, artifacts first, --jobs 1", 1, True),
                               ("lnrepro, artifacts first, --jobs 4", 4, True),
                               ("lnrepro without artifacts, --jobs 1", 1, False)):  # fmt: skip
        res = [_scale_trial(c, jobs, prefer) for c in culprits]
        assert all(r[4] for r in res), name
        rows[name] = (statistics.mean(r[0] for r in res) / MIN, statistics.mean(r[1] for r in res) / MIN,
                      statistics.mean(r[2] for r in res), statistics.mean(r[3] for r in res), 1.0)  # fmt: skip
    for name, clean in (("git bisect run, a clean build every step", True),
                        ("git bisect run, incremental builds (kinder to git)", False)):  # fmt: skip
        res2 = [_git_trial(c, clean) for c in culprits]
        h = statistics.mean(r[0] for r in res2) / MIN
        rows[name] = (h, h, statistics.mean(r[1] for r in res2), 0.0, 1.0)
    tt = [_git_trial(c, True) for c in culprits]
    h = statistics.mean(r[0] for r in tt) / MIN
    rows["tt_bisect.sh (rm -rf build*: a clean build every step)"] = (
        h,
        h,
        statistics.mean(r[1] for r in tt),
        0.0,
        1.0,
    )
    return {"trials": trials, "rows": rows}


def print_scale(res: dict[str, Any]) -> None:
    rows = res["rows"]
    git_h = rows["git bisect run, a clean build every step"][0]
    git_inc = rows["git bisect run, incremental builds (kinder to git)"][0]
    print(f"| {SCALE_N:,}-commit range, artifacts every {SCALE_EVERY}th, {res['trials']} culprits | machine-hours "
          "| wall hours | builds | fetches | vs git (clean) | vs git (incremental) |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, (mh, wh, b, f, _) in rows.items():
        print(
            f"| {name} | {mh:.2f} | {wh:.2f} | {b:.1f} | {f:.1f} | {mh / git_h:.2f} | {mh / git_inc:.2f} |"
        )
    print()


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--histories", type=int, default=8)
    ap.add_argument("--bulk-files", type=int, default=50_000)
    ap.add_argument("--tus", type=int, default=150)
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument(
        "--only", nargs="*", default=["evaluations", "overhead", "builds", "noise", "scale"]
    )
    ns = ap.parse_args()
    use_compilers()  # the clang-17/clang-20 the look-alike's toolchain files name
    work = Path(tempfile.mkdtemp(prefix="lnrepro-bench-bisect-"))
    try:
        rows = evaluations(work, ns.histories) if "evaluations" in ns.only else []
        mine, picks, theirs, n = (
            overhead(work, ns.bulk_files) if "overhead" in ns.only else (0, 0, 1, 0)
        )
        per_step, clean = builds(work, ns.tus) if "builds" in ns.only else ([0.0], 0.0)
        noisy = noise(work, ns.histories, ns.trials) if "noise" in ns.only else None
        scaled = scale(ns.trials) if "scale" in ns.only else None
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
        print(f"| a clean build, as tt_bisect.sh does at every step | {clean:.1f} |\n")
    if noisy:
        print_noise(noisy)
    if scaled:
        print_scale(scaled)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
