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
   commit graphs by a seeded simulated test. With a build phase (70%/5% fail rates, optionally
   10% of runs hitting an infrastructure error): against ``git bisect``'s policy (one run,
   trusted), a tt_bisect.sh-style policy (3 tries, any pass is good) and git-bayesect (its
   entropy rule and its stop); costs: a 30-minute build, a 1-minute run, a 72-second rebuild of a
   commit built before (warm ccache, ~4% of a build as bench_run.py measured). Then every
   evaluation costing the same (``--command``) at 70/5, 90/10, 50/5 and 30/0: git-bayesect,
   lnrepro with the rates learned from nothing, the one-step entropy rule and a lookahead of two
   under lnrepro's stop, the endpoints' 20 runs each given (``--rates-from``), the true rates
   (``--fail-rates``); runs against git's deterministic steps, the fraction right with its Wilson
   interval, the mean stated confidence; where the runs go (the endpoints' runs, the search, and
   of it the end game: the runs once the culprit holds half the stated posterior). Then
   calibration at 70/5 per ``--confidence`` level, and a reliability table; ``--save FILE`` keeps
   every trial for scripts/plot_calibration.py.

5. scale (``--only scale``): a simulated 5,000-commit first-parent range, deterministic bug, with
   prebuilt artifacts on every 50th commit. Costs (issue 24's): a build 30 minutes, a rebuild 1.2
   (a commit within 50 commits of the one last built in that worktree: the build tree and ccache
   are warm), a run 1, an artifact fetched in 3. Machine-hours and wall hours to the culprit for
   lnrepro's search (artifacts first, then builds inside the last interval; its endpoint checks
   and the culprit's confirmation included), ``--jobs 1`` and ``--jobs 4``; ``git bisect run``
   building at every step (a clean 30-minute build, as the issue has it, and the kinder
   incremental model); tt_bisect.sh (``rm -rf build*``: a clean build per step). The search is
   lnrepro's own code (lnrepro.bisect.core.Search with ``prefer``); the costs are a model.

6. bound (``--only bound``): the least mean runs any search needs at 70%/5% with the rates
   known, on lines of 2 to 5 candidates, computed exactly by backward induction (any search
   right 95% of the time; any choice rule under lnrepro's stop at 0.95), next to Fano's bound,
   Burnashev's estimate and lnrepro's own search on the same lines.

    python scripts/bench_bisect.py [--histories 8] [--bulk-files 50000] [--tus 150] [--trials 200]
    python scripts/bench_bisect.py --only noise bound --trials 200 --costed-trials 100 --save noise.json
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
    p = subprocess.run(
        [sys.executable, "-m", "lnrepro", "bisect", "--repo", str(repo), *args, "--json"],
        capture_output=True,
        text=True,
        env=ENV,
        check=False,
    )
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
        rows.append(
            (
                "merged branch" if on_branch else "first-parent",
                r["steps"],
                r["endpoint_checks"] + confirms,
                g_evals,
                r["first_bad"] == t.culprit,
                g_first == t.culprit,
            )
        )
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
        [
            sys.executable,
            "-m",
            "lnrepro",
            "bisect",
            "--repo",
            str(repo),
            "--good",
            good,
            "--bad",
            t.culprit_merge,
            "--pick",
            t.bugrepro,
            "--runner",
            "local",
            "--filter",
            "*Deterministic_2048Features",
            "--record-dir",
            str(work / "build" / "runs"),
            "--json",
        ],
        capture_output=True,
        text=True,
        env={**ENV, **env},
        check=False,
    )
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
PAIRS = ((0.7, 0.05), (0.9, 0.1), (0.5, 0.05), (0.3, 0.0))  # (buggy, clean) fail rates
MEASURED = 20  # runs per endpoint measured before the bisect (`lnrepro run -n 20`)
LEVELS = (0.8, 0.9, 0.95, 0.99)  # --confidence levels whose calibration is measured


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

    Common random numbers: the k-th real run of a commit shows the same outcome whatever the
    search and with or without infrastructure errors (drawn from a stream of their own), so the
    rows of a table compare the same trials, and a difference between them is what the searches
    did, not sampling. The endpoints' runs measured before the bisect come from a third stream.
    The streams are keyed by a commit's place in the graph, not its sha: the look-alike histories
    get new shas each time they are generated (commit times), the same graphs.
    """

    def __init__(
        self,
        graph: Any,
        culprit: str,
        seed: int,
        infra: float,
        rates: tuple[float, float] = (Q_BAD, Q_GOOD),
    ) -> None:
        import random

        self.graph, self.seed, self.infra = graph, seed, infra
        self.q_bad, self.q_good = rates
        self.infra_rng = random.Random(seed * 7919 + 1)
        self.bit = graph.bit(culprit)
        self.culprit = culprit
        self.count: dict[str, int] = {}

    def buggy(self, sha: str) -> bool:
        return bool(self.graph.ancestors(sha) & self.bit)

    def _fails(self, u: float, sha: str) -> bool:
        return u < (self.q_bad if self.buggy(sha) else self.q_good)

    def run(self, sha: str) -> str:
        """fail | pass | infra."""
        import random

        if self.infra and self.infra_rng.random() < self.infra:
            return "infra"
        k = self.count[sha] = self.count.get(sha, 0) + 1
        u = random.Random(f"{self.seed}:{self.graph.position(sha)}:{k}").random()
        return "fail" if self._fails(u, sha) else "pass"

    def measured(self, sha: str, n: int = MEASURED) -> tuple[int, int]:
        """(fails, runs) of ``n`` runs of ``sha`` made before the bisect (`lnrepro run -n n`)."""
        import random

        rng = random.Random(f"{self.seed}:measured:{self.graph.position(sha)}")
        return sum(self._fails(rng.random(), sha) for _ in range(n)), n


@dataclass
class Trial:
    right: bool
    runs: int
    builds: int
    rebuilds: int = 0
    wall_s: float = 0.0
    rounds: int = 0
    stated: float = 1.0
    tip_runs: int = 0  # runs of the buggy endpoint (its check, and re-runs the rule chose)
    clean_runs: int = 0  # runs of the clean endpoint
    after_lead: int = 0  # runs once the culprit held over half the stated posterior


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
    return Trial(
        s.first_bad() is not None
        and sim.buggy(s.first_bad() or "")
        and _parents_clean(sim, graph, s.first_bad()),
        runs,
        builds,
        0,
        wall,
        builds,
    )


def _parents_clean(sim: Sim, graph: Any, sha: str | None) -> bool:
    return (
        sha is not None
        and sim.buggy(sha)
        and not any(sim.buggy(p) for p in graph.parents.get(sha, ()) if p in graph)
    )


def trial_bayes(
    sim: Sim,
    graph: Any,
    tip: str,
    good: str,
    confidence: float,
    rule: str,
    jobs: int,
    equal: bool = False,
    prior: str = "learned",
    stop: str = "stated",
) -> Trial:
    """``equal``: every evaluation costs the same (``--command``, no build phase). ``prior``:
    learned (from nothing), measured (``--rates-from``: the endpoints' 20 runs each, made before
    the bisect and not counted here) or known (``--fail-rates`` with the true rates). ``stop``:
    stated (lnrepro's) or exact (git-bayesect's: the rates integrated out per candidate)."""
    from lnrepro.bisect.bayes import BayesSearch, Costs
    from lnrepro.bisect.evidence import Rates
    from lnrepro.model.bisect import RunOutcome

    costs = Costs(0.0, 0.0, RUN_S, 0.0) if equal else Costs(BUILD_S, REBUILD_S, RUN_S)
    rates = {
        "learned": Rates(),
        "known": Rates(fixed=(sim.q_bad, sim.q_good)),
        "measured": Rates().with_runs(sim.measured(tip), sim.measured(good)),
    }[prior]
    kw = dict(
        graph=graph,
        tip=tip,
        bottoms=[good],
        confidence=confidence,
        rates=rates,
        costs=costs,
        stop=stop,
        measured=frozenset({good} if prior == "measured" else ()),  # as lnrepro.bisect.loop
    )
    b = (
        lookahead_search(**kw, rule="entropy")
        if rule == "lookahead"
        else BayesSearch(**kw, rule=rule)
    )
    outcome = {"fail": RunOutcome.FAIL, "pass": RunOutcome.PASS, "infra": RunOutcome.NOISE}
    # asynchronous jobs, as the session runs them: an idle job picks at once; time jumps to the
    # next job to finish
    now, running, rounds = 0.0, {}, 0  # job -> (finish time, action)
    at = {tip: 0, good: 0}  # where the runs go (issue 41): the endpoints' runs, the end game
    led: int | None = None
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
        at[a.sha] = at.get(a.sha, 0) + 1
        if led is None and b.post.stated()[b.post.index[sim.culprit]] > 0.5:
            led = b.runs + b.noise
        if b.done:
            break
    wall = now
    r = b.answer("first bad commit")
    total = b.runs + b.noise
    return Trial(
        _parents_clean(sim, graph, r.first_bad),
        total,
        b.builds,
        b.rebuilds,
        wall,
        rounds,
        r.confidence or 0.0,
        at[tip],
        at[good],
        total - (total if led is None else led),
    )


def lookahead_search(**kw: Any) -> Any:
    """git-bayesect's posterior with a lookahead of two: each commit scored by the entropy
    expected after its run and then the best second run (issue 41 asked whether it beats the
    one-step rule; it did not, so it lives here and not in lnrepro)."""
    import numpy as np

    from lnrepro.bisect.bayes import BayesSearch

    class Lookahead(BayesSearch):
        def rescore(self, pool: list[str], scores: list[float]) -> list[float]:
            post = self.post
            p, mb, mg = post._compute()
            live = p > 1e-12
            p, mb, mg = p[live] / p[live].sum(), mb[live], mg[live]
            fail = np.where(np.stack([post.row(s)[live] for s in pool]), mb[None, :], mg[None, :])

            def neg_entropy(w: Any) -> Any:  # w: (..., H) unnormalised
                z = w.sum(axis=-1, keepdims=True)
                q = w / np.where(z > 0, z, 1.0)
                with np.errstate(divide="ignore", invalid="ignore"):
                    return np.where(q > 0, q * np.log2(np.where(q > 0, q, 1.0)), 0.0).sum(axis=-1)

            total = np.zeros(len(pool))
            for lik1 in (fail, 1.0 - fail):
                w1 = p[None, :] * lik1
                z1 = w1.sum(axis=1)
                p1 = w1 / np.where(z1 > 0, z1, 1.0)[:, None]
                second = np.zeros((len(pool), len(pool)))
                for lik2 in (fail, 1.0 - fail):
                    w2 = p1[:, None, :] * lik2[None, :, :]
                    second += w2.sum(axis=-1) * neg_entropy(w2)
                total += z1 * second.max(axis=1)
            return list(total - total.min() + 1e-9 * np.asarray(scores))  # ties: one step's

    return Lookahead(**kw)


# the equal-cost rows: (name, rule, prior, stop), the same seeded trials for each
EQUAL_ROWS = (
    ("git-bayesect: entropy rule, its stop (rates integrated out)", "entropy", "learned", "exact"),
    ("lnrepro, rates learned from nothing", "cost", "learned", "stated"),
    ("the same, one-step entropy rule (as git-bayesect)", "entropy", "learned", "stated"),
    ("the same, a lookahead of two (entropy after two runs)", "lookahead", "learned", "stated"),
    (f"lnrepro, the endpoints' runs given ({MEASURED} each)", "cost", "measured", "stated"),
    ("lnrepro --fail-rates (the true rates)", "cost", "known", "stated"),
)


def noise(work: Path, n_hist: int, trials: int, costed: int) -> dict[str, Any]:
    import random

    gs = graphs(work, n_hist)
    plans = []
    for t in range(trials):
        graph, tip, good = gs[t % len(gs)]
        cands = Search_candidates(graph, tip, good)
        plans.append((graph, tip, good, random.Random(t).choice(cands), 10_000 + t))
    res: dict[str, Any] = {
        "histories": len(gs),
        "trials": trials,
        "candidates": statistics.mean(len(Search_candidates(g, tp, gd)) for g, tp, gd in gs),
    }
    clean = [
        trial_git(Sim(g, c, seed, 0.0), g, tp, gd, 1, False)
        for g, tp, gd, c, seed in plans[:costed]
    ]
    res["deterministic_steps"] = statistics.mean(
        trial_git(Sim_det(g, c), g, tp, gd, 1, False).runs
        for g, tp, gd, c, _ in plans[: len(gs) * 4]
    )
    full, plans = plans, plans[:costed]
    for infra in (0.0, 0.1):  # 70/5 with a build phase: machine-hours, as before issue 41
        key = f"infra={infra:g}"
        rows: dict[str, list[Trial]] = {}
        started = time.monotonic()
        rows["git bisect run (1 run, trusted)"] = (
            clean
            if infra == 0
            else [
                trial_git(Sim(g, c, seed, infra), g, tp, gd, 1, False)
                for g, tp, gd, c, seed in plans
            ]
        )
        rows["tt_bisect.sh-style (3 tries, any pass good)"] = [
            trial_git(Sim(g, c, seed, infra), g, tp, gd, 3, True) for g, tp, gd, c, seed in plans
        ]
        rows["git-bayesect entropy rule, 0.95"] = [
            trial_bayes(Sim(g, c, seed, infra), g, tp, gd, 0.95, "entropy", 1, stop="exact")
            for g, tp, gd, c, seed in plans
        ]
        rows["lnrepro --confidence 0.95"] = [
            trial_bayes(Sim(g, c, seed, infra), g, tp, gd, 0.95, "cost", 1)
            for g, tp, gd, c, seed in plans
        ]
        rows["lnrepro --confidence 0.95 --jobs 4"] = [
            trial_bayes(Sim(g, c, seed, infra), g, tp, gd, 0.95, "cost", 4)
            for g, tp, gd, c, seed in plans
        ]
        res[key] = {"rows": rows, "seconds": time.monotonic() - started}
    plans, res["costed_trials"] = full, len(plans)
    started = time.monotonic()
    equal: dict[str, dict[str, list[Trial]]] = {}
    for pair in PAIRS:  # every evaluation costs the same (--command): runs are what counts
        equal[_pair(pair)] = {
            name: [
                trial_bayes(Sim(g, c, seed, 0.0, pair), g, tp, gd, 0.95, rule, 1, True, prior, stop)
                for g, tp, gd, c, seed in plans
            ]
            for name, rule, prior, stop in EQUAL_ROWS
            if rule != "lookahead" or pair == PAIRS[0]  # three times the CPU: the headline pair
        }
    res["equal"] = equal
    calib: dict[str, dict[float, list[Trial]]] = {}
    same = {"learned": EQUAL_ROWS[1][0], "measured": EQUAL_ROWS[4][0]}  # 0.95: those trials
    for prior in ("learned", "measured"):  # 70/5, equal costs, lnrepro's rule at each level
        calib[prior] = {
            conf: equal[_pair(PAIRS[0])][same[prior]]
            if conf == 0.95
            else [
                trial_bayes(Sim(g, c, seed, 0.0), g, tp, gd, conf, "cost", 1, True, prior)
                for g, tp, gd, c, seed in plans
            ]
            for conf in LEVELS
        }
    res["calibration"] = calib
    # every pair at 0.9 too (0.95: the rows above): is the stated confidence calibrated beyond
    # the headline pair? (70/5 at 0.9: the calibration just measured)
    res["calibration_pairs"] = {
        _pair(pair): {
            prior: {
                0.9: calib[prior][0.9]
                if pair == PAIRS[0]
                else [
                    trial_bayes(Sim(g, c, seed, 0.0, pair), g, tp, gd, 0.9, "cost", 1, True, prior)
                    for g, tp, gd, c, seed in plans
                ],
                0.95: equal[_pair(pair)][same[prior]],
            }
            for prior in ("learned", "measured")
        }
        for pair in PAIRS
    }
    res["equal_seconds"] = time.monotonic() - started
    return res


# ---------------------------------------------------------------------- margins (issue 47)
# Each run reports margins (quantity -> share of its tolerance used; the test fails above 1),
# drawn on a log10 scale. The scenarios (buggy side, clean side): a list of (weight, mean, sd)
# components per quantity; the verdict is the margin of "dx" over 1 where dx is reported.
# Drift: the clean side's dx moved half-way (in log10) to the buggy side's (its passing runs).
MASKED = {  # the emulator's NIGHTLY test (issue 47): dx 0.0475-0.0626 max_diff against 0.0131-
    # 0.0139, atol 0.5; dgamma the same at both kernels; the test passes 100/100 at both
    "dx": ([(1.0, -0.97, 0.03)], [(1.0, -1.57, 0.007)]),
    "dgamma": ([(1.0, -0.52, 0.05)], [(1.0, -0.52, 0.05)]),
}
FLAKY_SEPARATING = {  # 70%/5%; a bad commit's passing runs still come close (30-50% used),
    # a clean commit's use 2-3%, its rare failure near the bad's
    "dx": ([(0.7, 0.3, 0.1), (0.3, -0.4, 0.1)], [(0.05, 0.2, 0.1), (0.95, -1.6, 0.1)]),
}
NOTHING = {  # the verdicts of 70%/5% (Sim's) and one quantity with the same spread at both
    "dgamma": ([(1.0, -1.0, 0.3)], [(1.0, -1.0, 0.3)]),
}


class MarginSim(Sim):
    """``Sim`` whose runs report margins. ``drift``: the commit (by place) from which every
    descendant's *clean* margin of dx is moved half-way (in log) toward the buggy one; a buggy
    commit's dx hardly moves (its error dominates: sqrt(bug^2 + drift^2) at these sizes)."""

    def __init__(
        self,
        graph: Any,
        culprit: str,
        seed: int,
        model: dict[str, Any],
        verdicts: tuple[float, float] | None = None,
        drift: str | None = None,
        shift: float = 0.0,
    ) -> None:
        super().__init__(graph, culprit, seed, 0.0, verdicts or (Q_BAD, Q_GOOD))
        self.model, self.verdicts, self.shift = model, verdicts, shift
        self.drift_bit = graph.bit(drift) if drift else 0

    def drifted(self, sha: str) -> bool:
        return bool(self.drift_bit and self.graph.ancestors(sha) & self.drift_bit)

    def observe(self, sha: str, k: int | None = None) -> tuple[str, dict[str, float]]:
        import random

        if k is None:
            k = self.count[sha] = self.count.get(sha, 0) + 1
        rng = random.Random(f"{self.seed}:m:{self.graph.position(sha)}:{k}")
        bad = self.buggy(sha)
        out: dict[str, float] = {}
        for q, (b, g) in self.model.items():
            comps = b if bad else g
            u, acc, pick = rng.random(), 0.0, comps[-1]
            for comp in comps:
                acc += comp[0]
                if u <= acc:
                    pick = comp
                    break
            x = rng.gauss(pick[1], pick[2])
            if q == "dx" and self.drifted(sha):
                x += 0.03 if bad else self.shift
            out[q] = 10**x
        if self.verdicts is not None:  # verdicts of their own: the margins say nothing of them
            u = random.Random(f"{self.seed}:{self.graph.position(sha)}:{k}").random()
            return ("fail" if self._fails(u, sha) else "pass"), out
        return ("fail" if out.get("dx", 0.0) > 1.0 else "pass"), out


def trial_margin(
    sim: MarginSim, graph: Any, tip: str, good: str, confidence: float, margin: str
) -> tuple[Trial, int, set[str]]:
    """One equal-cost bisect with runs that report margins; (trial, endpoint runs that taught the
    margins, commits flagged for drift)."""
    from lnrepro.bisect.bayes import BayesSearch, Costs
    from lnrepro.bisect.margins import MarginMode
    from lnrepro.model.bisect import RunOutcome

    b = BayesSearch(
        graph=graph,
        tip=tip,
        bottoms=[good],
        confidence=confidence,
        costs=Costs(0.0, 0.0, RUN_S, 0.0),
        margin=MarginMode(margin),
    )
    outcome = {"fail": RunOutcome.FAIL, "pass": RunOutcome.PASS}
    while (a := b.next_for(0, {})) is not None:
        verdict, margins = sim.observe(a.sha)
        b.observe(a, [(outcome[verdict], "")], margins=[margins])
        if b.done:
            break
    r = b.answer("first bad commit")
    t = Trial(
        _parents_clean(sim, graph, r.first_bad), b.runs + b.noise, 0, stated=r.confidence or 0.0
    )
    # the endpoint runs that taught the margins (and decided --margin auto); every other run,
    # an endpoint's re-run the search chose included, is the search's
    learned = sum(len(v) for v in b._learn.values())
    return t, learned, set(b.drifted)


def margin_bench(work: Path, n_hist: int, trials: int) -> dict[str, Any]:
    import random

    gs = graphs(work, n_hist)
    plans = []
    for t in range(trials):
        graph, tip, good = gs[t % len(gs)]
        cands = Search_candidates(graph, tip, good)
        rng = random.Random(t)
        culprit = rng.choice(cands)
        others = [c for c in cands if c != culprit]
        plans.append((graph, tip, good, culprit, 20_000 + t, rng.choice(others)))
    res: dict[str, Any] = {"trials": trials, "histories": len(gs)}
    res["git_steps"] = statistics.mean(
        trial_git(Sim_det(g, c), g, tp, gd, 1, False).runs for g, tp, gd, c, _, _ in plans
    )
    rows: dict[str, Any] = {}
    started = time.monotonic()

    def run(name: str, model: dict[str, Any], margin: str, conf: float = 0.95, **kw: Any) -> None:
        out = []
        for g, tp, gd, c, seed, d in plans:
            sim = MarginSim(
                g,
                c,
                seed,
                model,
                kw.get("verdicts"),
                d if kw.get("drift") else None,
                kw.get("drift") or 0.0,
            )
            t, ends, flagged = trial_margin(sim, g, tp, gd, conf, margin)
            drifted = {x for x in flagged if sim.drifted(x)} if kw.get("drift") else set()
            out.append((t, ends, len(flagged), len(drifted)))
        rows[name] = out

    run("masked (NIGHTLY passes everywhere), --margin auto", MASKED, "auto")
    run("flaky 70%/5%, margins separate, --margin auto", FLAKY_SEPARATING, "auto")
    run("flaky 70%/5%, margins separate, --margin off", FLAKY_SEPARATING, "off")
    run("70%/5%, margins carry nothing, --margin auto", NOTHING, "auto", verdicts=(Q_BAD, Q_GOOD))
    run("70%/5%, margins carry nothing, --margin off", NOTHING, "off", verdicts=(Q_BAD, Q_GOOD))
    run(
        "flaky 70%/5% with drift (one unrelated commit), --margin auto",
        FLAKY_SEPARATING,
        "auto",
        drift=0.6,
    )
    run("masked with drift (one unrelated commit), --margin auto", MASKED, "auto", drift=0.3)
    # calibration at 0.95: the rows above (the same trials); at 0.9 run here
    run(
        "calibration: flaky 70%/5%, margins separate, --confidence 0.9",
        FLAKY_SEPARATING,
        "auto",
        0.9,
    )
    run("calibration: masked, --confidence 0.9", MASKED, "auto", 0.9)
    res["rows"] = rows
    res["seconds"] = time.monotonic() - started
    return res


def print_margins(res: dict[str, Any]) -> None:
    git_steps = res["git_steps"]
    print(
        f"Margins: {res['trials']} trials on {res['histories']} histories; git's deterministic "
        f"steps {git_steps:.2f}; {res['seconds']:.0f} s\n"
    )
    print(
        "| scenario | runs in all | endpoint runs that taught the margins | search runs (x git's) "
        "| right [95% CI] | stated | stated - right | commits flagged for drift (of them drifted) |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, out in res["rows"].items():
        ts = [t for t, _, _, _ in out]
        n = len(ts)
        right = sum(t.right for t in ts)
        lo, hi = wilson(right, n)
        runs = statistics.mean(t.runs for t in ts)
        ends = statistics.mean(e for _, e, _, _ in out)
        stated = statistics.mean(t.stated for t in ts)
        flagged = statistics.mean(f for _, _, f, _ in out)
        drifted = statistics.mean(d for _, _, _, d in out)
        print(
            f"| {name} | {runs:.1f} | {ends:.1f} | {runs - ends:.1f} ({(runs - ends) / git_steps:.2f}x) "
            f"| {right / n:.1%} [{lo:.1%}, {hi:.1%}] | {stated:.3f} | {100 * (stated - right / n):+.1f} "
            f"| {flagged:.2f} ({drifted:.2f}) |"
        )
    rows = res["rows"]
    auto = rows.get("70%/5%, margins carry nothing, --margin auto")
    off = rows.get("70%/5%, margins carry nothing, --margin off")
    if auto and off:  # the same seeds: the difference per trial, and its standard error
        d = [a[0].runs - o[0].runs for a, o in zip(auto, off, strict=True)]
        se = statistics.stdev(d) / len(d) ** 0.5 if len(d) > 1 else 0.0
        print(
            f"\nMargins that carry nothing: auto - off = {statistics.mean(d):+.2f} runs a trial "
            f"(standard error {se:.2f}; sd of a trial's runs: auto "
            f"{statistics.stdev(t.runs for t, *_ in auto):.1f}, off "
            f"{statistics.stdev(t.runs for t, *_ in off):.1f})"
        )
    print()


def _pair(pair: tuple[float, float]) -> str:
    return f"{pair[0]:.0%}/{pair[1]:.0%}"


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


def fano_runs(
    n: float, delta: float, q_bad: float = Q_BAD, q_good: float = Q_GOOD
) -> tuple[float, float]:
    """(C, a lower bound on the mean runs): C is the most one run at these fail rates can tell
    (bits, over the split), and Fano's inequality bounds any method that is right 1-delta of the
    time: runs >= (log2 N - h(delta) - delta log2(N-1)) / C."""
    import math

    c = max(
        _h(a * q_bad + (1 - a) * q_good) - a * _h(q_bad) - (1 - a) * _h(q_good)
        for a in (i / 1000 for i in range(1001))
    )
    return c, (math.log2(n) - _h(delta) - delta * math.log2(n - 1)) / c


def burnashev_runs(n: float, delta: float, q_bad: float = Q_BAD, q_good: float = Q_GOOD) -> float:
    """Burnashev's estimate of the least mean runs (asymptotic: its O(1) is left out, so not a
    bound at these sizes): ((1-delta) log2 N - h(delta)) / C + ln(1/delta) / C1, C1 the largest
    divergence between the run's laws at a buggy and a clean commit (nats)."""
    import math

    def kl(a: float, b: float) -> float:
        a, b = min(max(a, 1e-12), 1 - 1e-12), min(max(b, 1e-12), 1 - 1e-12)
        return a * math.log(a / b) + (1 - a) * math.log((1 - a) / (1 - b))

    c, _ = fano_runs(n, delta, q_bad, q_good)
    c1 = max(kl(q_bad, q_good), kl(q_good, q_bad))
    return ((1 - delta) * math.log2(n) - _h(delta)) / c + math.log(1 / delta) / c1


def exact_runs(
    n: int, q_bad: float, q_good: float, horizon: int, lam: float, stop_at: float | None = None
) -> float:
    """The least E[runs] + lam * P(wrong) over every search of a line of ``n`` candidates (the
    culprit uniform, the rates known; the tip, buggy whatever the culprit, never worth a run),
    by backward induction over the runs and fails of each commit. Searches are cut at
    ``horizon`` runs and then answer for free, so this is a lower bound, exact as the horizon
    grows. ``stop_at``: the search must stop the first time a candidate's posterior reaches it
    (``--confidence``), and only then; the least E[runs] over choice rules (lam unused)."""
    import itertools
    import math

    import numpy as np

    k = n - 1  # testable commits 1..n-1; commit x is buggy when the culprit h <= x
    lq = ((math.log(q_bad), math.log1p(-q_bad)), (math.log(q_good), math.log1p(-q_good)))
    after: dict[tuple[int, ...], Any] = {}
    for total in range(horizon, -1, -1):
        now: dict[tuple[int, ...], Any] = {}
        for comp in itertools.product(range(total + 1), repeat=k):
            if sum(comp) != total:
                continue
            f = np.meshgrid(*[np.arange(c + 1) for c in comp], indexing="ij")
            lw = np.stack(
                [
                    sum(
                        f[x] * lq[x + 1 < h][0] + (comp[x] - f[x]) * lq[x + 1 < h][1]
                        for x in range(k)
                    )
                    + np.zeros(f[0].shape)
                    for h in range(1, n + 1)
                ]
            )
            w = np.exp(lw - lw.max(axis=0))
            p = w / w.sum(axis=0)
            top = p.max(axis=0)
            if total == horizon:
                now[comp] = np.zeros(top.shape)
                continue
            go = np.full(top.shape, np.inf)
            for x in range(k):
                pb = p[: x + 1].sum(axis=0)
                pf = pb * q_bad + (1 - pb) * q_good
                nxt = after[tuple(c + (i == x) for i, c in enumerate(comp))]
                lo = tuple(slice(0, -1) if i == x else slice(None) for i in range(k))
                hi = tuple(slice(1, None) if i == x else slice(None) for i in range(k))
                go = np.minimum(go, 1 + pf * nxt[hi] + (1 - pf) * nxt[lo])
            if stop_at is None:
                now[comp] = np.minimum(lam * (1 - top), go)
            else:
                now[comp] = np.where(top >= stop_at, 0.0, go)
        after = now
    return float(after[(0,) * k].reshape(-1)[0])


def exact_bound(n: int, delta: float, q_bad: float, q_good: float, horizon: int) -> float:
    """The least mean runs of any search of a line of ``n`` candidates right 1-delta of the
    time (the rates known): max over lam of exact_runs - lam * delta (weak duality: a search
    right that often has E[runs] >= E[runs] + lam P(wrong) - lam delta >= exact_runs - lam delta)."""
    lo, hi = 5.0, 120.0  # concave in lam: a ternary search

    def at(lam: float) -> float:
        return exact_runs(n, q_bad, q_good, horizon, lam) - lam * delta

    for _ in range(14):
        a, b = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        lo, hi = (a, hi) if at(a) < at(b) else (lo, b)
    return at((lo + hi) / 2)


def lnrepro_on_a_line(
    n: int, q_bad: float, q_good: float, trials: int, confidence: float
) -> tuple[float, float]:
    """(mean runs without the buggy endpoint's check, fraction right) of lnrepro's search with
    the true rates on a line of ``n`` candidates, seeded."""
    import random

    from lnrepro.bisect.bayes import BayesSearch, Costs
    from lnrepro.bisect.core import Graph
    from lnrepro.bisect.evidence import Rates
    from lnrepro.model.bisect import RunOutcome

    order = tuple(f"c{i}" for i in range(n + 1))
    g = Graph(order, {c: ((order[i - 1],) if i else ()) for i, c in enumerate(order)})
    runs = right = 0
    for t in range(trials):
        rng = random.Random(t)
        h = rng.randrange(1, n + 1)
        b = BayesSearch(
            g, order[-1], [order[0]], confidence, Rates(fixed=(q_bad, q_good)), Costs(0, 0, 60, 0)
        )
        while (a := b.next_for(0, {})) is not None:
            pos = g.position(a.sha)
            fail = rng.random() < (q_bad if pos >= h else q_good)
            runs += a.sha != order[-1]
            b.observe(a, [(RunOutcome.FAIL if fail else RunOutcome.PASS, "")])
        right += b.answer("x").first_bad == order[h]
    return runs / trials, right / trials


BOUND_LINES = ((2, 40), (3, 34), (4, 30), (5, 24))  # (candidates, horizon)


def bound(trials: int) -> list[tuple[int, float, float, float, float, float, float]]:
    """Per line size: Fano, Burnashev's estimate, the exact least mean runs right 95% of the
    time, the exact least under lnrepro's stop (--confidence 0.95) and lnrepro's own search
    (runs, right), all at 70%/5% with the rates known."""
    rows = []
    for n, horizon in BOUND_LINES:
        mine, right = lnrepro_on_a_line(n, Q_BAD, Q_GOOD, trials, 0.95)
        rows.append(
            (
                n,
                fano_runs(n, 0.05)[1],
                burnashev_runs(n, 0.05),
                exact_bound(n, 0.05, Q_BAD, Q_GOOD, horizon),
                exact_runs(n, Q_BAD, Q_GOOD, horizon, 0.0, stop_at=0.95),
                mine,
                right,
            )
        )
    return rows


def print_bound(rows: list[tuple[int, float, float, float, float, float, float]]) -> None:
    print(
        "Least mean runs at 70%/5%, the rates known, on a line of N candidates (the buggy "
        "endpoint's check not counted):\n"
    )
    print(
        "| N | Fano | Burnashev (estimate) | exact, any search right 95% | exact, stopping at "
        "0.95 | lnrepro (right) |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for n, fano, burn, exact, stop, mine, right in rows:
        print(
            f"| {n} | {fano:.2f} | {burn:.2f} | {exact:.2f} | {stop:.2f} | {mine:.2f} ({right:.1%}) |"
        )
    print()


def wilson(k: int, n: int) -> tuple[float, float]:
    from lnrepro.model.stats import wilson as w

    return w(k, n)


def _right(ts: list[Trial]) -> str:
    k = sum(t.right for t in ts)
    lo, hi = wilson(k, len(ts))
    return f"{k / len(ts):.1%} [{lo:.1%}, {hi:.1%}]"


def print_noise(res: dict[str, Any]) -> None:
    mean = statistics.mean
    det = res["deterministic_steps"]
    print(
        f"Noise: {res['trials']} seeded trials on {res['histories']} look-alike histories "
        f"({res['candidates']:.0f} candidate commits on average). Without noise git needs {det:.1f} runs.\n"
    )
    print(
        f"With a build phase ({res['costed_trials']} of those trials; buggy commits fail {Q_BAD:.0%} of runs, clean ones {Q_GOOD:.0%}; build "
        f"{BUILD_S / 60:.0f} min, rebuild {REBUILD_S / 60:.1f} min, run {RUN_S / 60:.0f} min):\n"
    )
    base = {name: mean(t.right for t in ts) for name, ts in res["infra=0"]["rows"].items()}
    for key, title in (
        ("infra=0", "no infrastructure errors"),
        ("infra=0.1", "10% of runs hit an infrastructure error"),
    ):
        print(
            f"| {title} | right | runs (x git's {det:.1f}) | builds | rebuilds | machine hours | wall hours |"
        )
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for name, ts in res[key]["rows"].items():
            acc = mean(t.right for t in ts)
            drop = f" ({(acc - base[name]) * 100:+.1f})" if key != "infra=0" else ""
            machine = (
                mean(t.builds * BUILD_S + t.rebuilds * REBUILD_S + t.runs * RUN_S for t in ts)
                / 3600
            )
            print(
                f"| {name} | {acc:.1%}{drop} | {mean(t.runs for t in ts):.1f} ({mean(t.runs for t in ts) / det:.1f}x) | "
                f"{mean(t.builds for t in ts):.1f} | {mean(t.rebuilds for t in ts):.1f} | {machine:.1f} | "
                f"{mean(t.wall_s for t in ts) / 3600:.1f} |"
            )
        print(f"\n({res[key]['seconds']:.0f} s to simulate)\n")
    one, four = (
        res["infra=0"]["rows"]["lnrepro --confidence 0.95"],
        res["infra=0"]["rows"]["lnrepro --confidence 0.95 --jobs 4"],
    )
    print(
        f"--jobs 4 against --jobs 1: actions started {mean(t.rounds for t in four):.1f} vs {mean(t.rounds for t in one):.1f}, "
        f"wall time {mean(t.wall_s for t in four) / 3600:.1f} h vs {mean(t.wall_s for t in one) / 3600:.1f} h "
        f"({mean(t.wall_s for t in one) / mean(t.wall_s for t in four):.2f}x faster)\n"
    )
    print(
        "Every evaluation costing the same (`--command`), --confidence 0.95: runs to the answer, "
        "the fraction right (Wilson 95% interval) and the mean stated confidence.\n"
    )
    print(f"| fail rates | search | runs (x git's {det:.1f}) | right | stated | stated - right |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for pair, rows in res["equal"].items():
        qb, qg = (float(x.rstrip("%")) / 100 for x in pair.split("/"))
        _, lo = fano_runs(res["candidates"], 0.05, qb, qg)
        for name, ts in rows.items():
            runs, right, stated = (
                mean(t.runs for t in ts),
                mean(t.right for t in ts),
                mean(t.stated for t in ts),
            )
            print(
                f"| {pair} | {name} | {runs:.1f} ({runs / det:.2f}x) | {_right(ts)} | {stated:.3f} | "
                f"{(stated - right) * 100:+.1f} |"
            )
        print(
            f"| {pair} | (Fano: no method right 95% of the time averages fewer) | {lo:.1f} ({lo / det:.2f}x) | | | |"
        )
        burn = burnashev_runs(res["candidates"], 0.05, qb, qg)
        print(
            f"| {pair} | (Burnashev's estimate: Fano's bits plus a confirmation; asymptotic) | {burn:.1f} ({burn / det:.2f}x) | | | |"
        )
    print(f"\n({res['equal_seconds']:.0f} s to simulate these and the calibration)\n")
    print(
        "Where the runs go (equal costs, --confidence 0.95; end game: the runs made once the "
        "culprit held over half the stated posterior, to the stop; no run follows the stop).\n"
    )
    print(
        "| fail rates | search | runs | buggy endpoint | clean endpoint | the search | of it, end game |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for pair, rows in res["equal"].items():
        for name, ts in rows.items():
            runs, tip, clean = (
                mean(t.runs for t in ts),
                mean(t.tip_runs for t in ts),
                mean(t.clean_runs for t in ts),
            )
            print(
                f"| {pair} | {name} | {runs:.1f} | {tip:.1f} | {clean:.1f} | {runs - tip - clean:.1f} | "
                f"{mean(t.after_lead for t in ts):.1f} |"
            )
    print()
    print("Calibration at 70%/5%, equal costs: each --confidence level on the same trials.\n")
    print("| rates | --confidence | right | mean stated | stated - right | runs |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for prior, levels in res["calibration"].items():
        label = "learned" if prior == "learned" else f"endpoints' runs given ({MEASURED} each)"
        for conf, ts in levels.items():
            right, stated = mean(t.right for t in ts), mean(t.stated for t in ts)
            print(
                f"| {label} | {conf:g} | {_right(ts)} | {stated:.3f} | {(stated - right) * 100:+.1f} | "
                f"{mean(t.runs for t in ts):.1f} |"
            )
    print("\nCalibration at every pair (stated - right in points; 0.95: the trials above).\n")
    print(
        "| fail rates | rates | --confidence 0.9: right, stated - right | 0.95: right, stated - right |"
    )
    print("| --- | --- | ---: | ---: |")
    for pair, priors in res["calibration_pairs"].items():
        for prior, levels in priors.items():
            label = "learned" if prior == "learned" else f"endpoints' runs given ({MEASURED} each)"
            cells = [
                f"{_right(ts)}, {(mean(t.stated for t in ts) - mean(t.right for t in ts)) * 100:+.1f}"
                for ts in levels.values()
            ]
            print(f"| {pair} | {label} | {cells[0]} | {cells[1]} |")
    print(
        "\n| stated confidence at the stop (all levels, both priors) | trials | mean stated | right |"
    )
    print("| --- | ---: | ---: | ---: |")
    allt = [t for levels in res["calibration"].values() for ts in levels.values() for t in ts]
    for lo, hi in RELIABILITY_BINS:
        b = [t for t in allt if lo <= t.stated < hi]
        if b:
            print(
                f"| [{lo:g}, {min(hi, 1):g}{')' if hi <= 1 else ']'} | {len(b)} | {mean(t.stated for t in b):.3f} | {_right(b)} |"
            )
    print()


RELIABILITY_BINS = ((0.0, 0.8), (0.8, 0.9), (0.9, 0.95), (0.95, 0.98), (0.98, 0.99), (0.99, 1.01))


def save_noise(res: dict[str, Any], path: Path) -> None:
    """The noise results as JSON (per row: right, stated, runs of each trial), for the plot."""

    def rows(ts: list[Trial]) -> list[list[float]]:
        return [
            [int(t.right), round(t.stated, 6), t.runs, t.tip_runs, t.clean_runs, t.after_lead]
            for t in ts
        ]

    doc = {
        "trials": res["trials"],
        "histories": res["histories"],
        "candidates": res["candidates"],
        "deterministic_steps": res["deterministic_steps"],
        "equal": {p: {n: rows(ts) for n, ts in r.items()} for p, r in res["equal"].items()},
        "calibration": {
            p: {f"{c:g}": rows(ts) for c, ts in lv.items()} for p, lv in res["calibration"].items()
        },
        "calibration_pairs": {
            pair: {p: {f"{c:g}": rows(ts) for c, ts in lv.items()} for p, lv in priors.items()}
            for pair, priors in res["calibration_pairs"].items()
        },
    }
    path.write_text(json.dumps(doc) + "\n")


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
    for name, jobs, prefer in (
        ("lnrepro, artifacts first, --jobs 1", 1, True),
        ("lnrepro, artifacts first, --jobs 4", 4, True),
        ("lnrepro without artifacts, --jobs 1", 1, False),
    ):
        res = [_scale_trial(c, jobs, prefer) for c in culprits]
        assert all(r[4] for r in res), name
        rows[name] = (
            statistics.mean(r[0] for r in res) / MIN,
            statistics.mean(r[1] for r in res) / MIN,
            statistics.mean(r[2] for r in res),
            statistics.mean(r[3] for r in res),
            1.0,
        )
    for name, clean in (
        ("git bisect run, a clean build every step", True),
        ("git bisect run, incremental builds (kinder to git)", False),
    ):
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
    print(
        f"| {SCALE_N:,}-commit range, artifacts every {SCALE_EVERY}th, {res['trials']} culprits | machine-hours "
        "| wall hours | builds | fetches | vs git (clean) | vs git (incremental) |"
    )
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
        "--costed-trials", type=int, default=100, help="trials of the table with builds"
    )
    ap.add_argument("--save", type=Path, help="write the noise results here as JSON (for the plot)")
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
        noisy = (
            noise(work, ns.histories, ns.trials, ns.costed_trials) if "noise" in ns.only else None
        )
        scaled = scale(ns.trials) if "scale" in ns.only else None
        bounded = bound(ns.trials * 10) if "bound" in ns.only else None
        margined = margin_bench(work, ns.histories, ns.trials) if "margins" in ns.only else None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}, "
        f"{subprocess.run(['git', '--version'], capture_output=True, text=True).stdout.strip()}\n"
    )
    mean = statistics.mean
    if rows:
        print(
            "| history (200 first-parent commits) | lnrepro steps | + endpoint/confirm runs "
            "| `git bisect run` evaluations | right (lnrepro / git) |"
        )
        print("| --- | ---: | ---: | ---: | --- |")
        for kind, steps, extra, g, ok, gok in rows:
            right = f"{'yes' if ok else 'NO'} / {'yes' if gok else 'NO'}"
            print(f"| culprit on the {kind} | {steps} | {extra} | {g} | {right} |")
        print(
            f"| **mean** | **{mean(r[1] for r in rows):.1f}** | {mean(r[2] for r in rows):.1f} | "
            f"**{mean(r[3] for r in rows):.1f}** | |\n"
        )
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
        print(
            f"| lnrepro, incremental in its reused worktree: median of {len(per_step)} steps "
            f"(the first, from nothing: {per_step[0]:.1f}) | {statistics.median(per_step):.1f} |"
        )
        print(f"| a clean build, as tt_bisect.sh does at every step | {clean:.1f} |\n")
    if noisy:
        print_noise(noisy)
        if ns.save:
            save_noise(noisy, ns.save)
    if scaled:
        print_scale(scaled)
    if bounded:
        print_bound(bounded)
    if margined:
        print_margins(margined)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
