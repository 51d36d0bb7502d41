"""More of the Bayesian search's rules (lnrepro.bisect.bayes), each pinned to a value a changed rule
would change: the progress note's estimate, margins' evidence, which job and build each kind of
action names, what an in-flight commit is worth, what the answer states, the expected information
of a run on small posteriors computed by hand. Pure, small graphs, milliseconds each."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lnrepro.bisect.bayes import BayesSearch, Costs, Posterior
from lnrepro.bisect.core import Graph
from lnrepro.bisect.evidence import Rates
from lnrepro.bisect.margins import MarginMode
from lnrepro.model.bisect import Action, ActionKind, BuildKind, RunOutcome
from tests.bisect.test_core import linear

FAIL, PASS, NOISE = RunOutcome.FAIL, RunOutcome.PASS, RunOutcome.NOISE
KNOWN = Rates(fixed=(0.9, 0.05))
SHOWN = Rates(fixed=(0.9, 0.05), bug_shown=True)


def search(n: int = 8, **kw: object) -> BayesSearch:
    g = linear(n)
    return BayesSearch(g, g.order[-1], [g.order[0]], **kw)  # type: ignore[arg-type]


def long_search(n: int = 5, **kw: object) -> BayesSearch:
    """A line of commits with 40-character names (what is shortened to 12 shows)."""
    order = tuple(f"{i:x}" * 40 for i in range(n))
    g = Graph(order, {c: ((order[i - 1],) if i else ()) for i, c in enumerate(order)})
    return BayesSearch(g, order[-1], [order[0]], **kw)  # type: ignore[arg-type]


def act(
    s: BayesSearch, sha: str, *outs: RunOutcome, build: BuildKind = BuildKind.NONE, job: int = 0
) -> None:
    s.observe(
        Action(job=job, sha=sha, kind=ActionKind.STEP, build=build), [(o, o.value) for o in outs]
    )


# ------------------------------------------------------------------------------ progress note
def _kl(a: float, b: float) -> float:
    return a * math.log(a / b) + (1 - a) * math.log((1 - a) / (1 - b))


def test_the_progress_note_at_known_rates_is_worked_out_by_hand() -> None:
    """Four equal candidates at 90%/5%: the leader (the first) is at 0.25; the runs to go are the
    log-odds missing, ln(0.95/0.05) - ln(0.25/0.75) = ln 57, over the smaller KL divergence,
    KL(0.05 || 0.9) = 0.05 ln(0.05/0.9) + 0.95 ln(0.95/0.1) = 1.994 nats: 4.043 / 1.994 -> 3."""
    s = search(5, rates=KNOWN)
    per_run = 0.05 * math.log(0.05 / 0.9) + 0.95 * math.log(0.95 / 0.1)
    assert per_run == pytest.approx(1.9943, abs=1e-4)
    assert math.ceil(math.log(57) / per_run) == 3
    assert s.progress_note() == "leading c1 at P=0.25 (stops at 0.95), ~3 runs to go"
    # the other direction is the larger: KL(0.9 || 0.05) = 2.376 would give 2
    assert math.ceil(math.log(57) / _kl(0.9, 0.05)) == 2


def test_the_progress_note_counts_the_stop_and_the_runs_left() -> None:
    """A leader at the stop needs one run still said as one ("~1 run"); the estimate is capped by
    the runs left before max_runs (noise counted), and is at least one."""
    s = search(3, rates=KNOWN, confidence=0.6)
    act(s, "c1", FAIL, FAIL, FAIL)
    act(s, "c0", PASS, PASS)
    sha, p = s._best()
    assert sha == "c1" and p > 0.6
    assert s.progress_note() == f"leading c1 at P={p:.2f} (stops at 0.6), ~1 run to go"
    t = search(5, rates=KNOWN, max_runs=4)
    act(t, "c2", NOISE)
    act(t, "c2", PASS)
    # 4 - 1 run - 1 noisy = 2 runs left: the estimate (more than 2 at a single pass) is capped
    assert t.progress_note().endswith("~2 runs to go")
    u = search(5, rates=KNOWN, max_runs=2)
    act(u, "c2", PASS, NOISE)
    assert u.progress_note().endswith("~1 run to go")  # none left: still one


def test_the_progress_note_with_rates_that_cannot_tell_is_the_runs_left() -> None:
    """Equal fail rates tell nothing (KL 0): the note says every run left, ``max_runs`` less
    runs and noise."""
    s = search(5, rates=Rates(fixed=(0.3, 0.3)), max_runs=50)
    act(s, "c2", PASS, NOISE)
    assert s.progress_note() == "leading c1 at P=0.25 (stops at 0.95), ~48 runs to go"


def test_the_progress_note_clamps_rates_at_a_thousandth_and_the_stop_at_a_billionth() -> None:
    """Rates of 1 and 0 are taken as 0.999 and 0.001 (KL 6.893 nats); a stop of 1 as 1 - 1e-9
    (log-odds 20.72): four equal candidates need (20.72 + ln 3) / 6.893 = 3.17 -> 4 runs."""
    s = search(5, rates=Rates(fixed=(1.0, 0.0)), confidence=1.0)
    per_run = _kl(0.999, 0.001)
    assert per_run == pytest.approx(6.8929, abs=1e-4)
    missing = math.log((1 - 1e-9) / 1e-9) + math.log(3)
    assert missing / per_run == pytest.approx(3.165, abs=1e-3)
    assert s.progress_note() == "leading c1 at P=0.25 (stops at 1), ~4 runs to go"
    # a stop where the clamp of the buggy rate decides: 3.002 runs at 0.999, 2.996 at 1 - 1e-9
    c = 1 - 3.1e-9
    missing = math.log(c / (1 - c)) + math.log(3)
    assert missing / per_run == pytest.approx(3.002, abs=1e-3)
    assert missing / _kl(1 - 1e-9, 0.001) < 3
    s = search(5, rates=Rates(fixed=(1.0, 0.0)), confidence=c)
    assert s.progress_note().endswith("~4 runs to go")


def test_the_progress_note_learns_the_rates_and_shortens_the_leaders_name() -> None:
    """With the rates learned, the note uses their posterior means (as ``rates_now``); a leader's
    name is its first 12 characters."""
    s = long_search(5)
    tip, good = s.tip, s.bottoms[0]
    act(s, tip, FAIL, FAIL, FAIL)
    act(s, good, PASS, PASS, PASS, PASS)
    qb, qg = s.post.rates_now()
    sha, p = s._best()
    missing = math.log(0.95 / 0.05) - math.log(p / (1 - p))
    runs = max(1, math.ceil(missing / min(_kl(qb, qg), _kl(qg, qb))))
    assert runs > 1
    assert s.progress_note() == (
        f"leading {sha[:12]} at P={p:.2f} (stops at 0.95), ~{runs} runs to go"
    )
    assert len(sha) == 40


# ------------------------------------------------------------------------------ margins' evidence
def test_a_runs_margin_adds_its_log_likelihoods_to_the_commit_they_concern() -> None:
    """Each run's margin adds ``log_bad`` to the candidates that make the commit bad and
    ``log_good`` to the others; a second run of the commit adds to the first."""
    g = linear(4)
    post = Posterior(g, "c3", ["c0"], KNOWN)
    post.observe_margin("c2", -1.0, -3.0)
    post.observe_margin("c2", -0.5, -0.25)
    post.observe_margin("c1", 0.0, 0.0)
    assert post.margins.ll == {"c2": (-1.5, -3.25), "c1": (0.0, 0.0)}
    # h=c1, c2: c2 bad (-1.5); h=c3: c2 clean (-3.25). No verdicts: the margins decide.
    like = np.exp([-1.5, -1.5, -3.25])
    assert np.allclose(post.probs(), like / like.sum())
    before = post.probs().copy()
    post.observe_margin("c3", 2.0, 0.0)  # the cache is dropped: every candidate makes c3 bad
    assert np.allclose(post.probs(), before)
    post.observe_margin("c1", 1.0, 0.0)  # h=c1 only
    like = np.exp([-0.5, -1.5, -3.25])
    assert np.allclose(post.probs(), like / like.sum())


def test_margins_weigh_in_the_stated_posterior_too() -> None:
    """The stated posterior (learned rates, drawn) counts the margins as the exact one does: a
    margin that makes c1 e^5 times likelier moves the statement to c1."""
    g = linear(4)
    post = Posterior(g, "c3", ["c0"])
    post.observe("c3", 2, 2)
    post.observe("c0", 0, 2)
    assert post.stated()[post.index["c1"]] < 0.5
    post.observe_margin("c1", 0.0, -5.0)
    post.observe_margin("c2", 0.0, 0.0)
    stated = post.stated()
    assert stated[post.index["c1"]] > 0.9
    # a candidate the margins speak against is not made likelier (the sign of the term)
    post.observe_margin("c2", -20.0, 0.0)
    assert post.stated()[post.index["c2"]] < 1e-6


# ------------------------------------------------------------------------------ what it runs
def test_each_kind_of_action_names_the_job_that_asked_and_its_build() -> None:
    """Every action is for the idle job that asked, with the build that job needs: the buggy
    endpoint, a merge base, a clean endpoint's check, a step, a revived commit."""
    s = search(5)
    s.current[1] = "c4"
    assert s.next_for(1, {}) == Action(
        job=1, sha="c4", kind=ActionKind.ENDPOINT, build=BuildKind.NONE
    )
    assert s.next_for(2, {}) == Action(
        job=2, sha="c4", kind=ActionKind.ENDPOINT, build=BuildKind.BUILD
    )
    s = search(5, merge_bases=["c1"], rates=Rates(bug_shown=True))
    s.current[3] = "c1"
    assert s.next_for(3, {}) == Action(
        job=3, sha="c1", kind=ActionKind.MERGE_BASE, build=BuildKind.NONE
    )
    s = search(5, rates=Rates(bug_shown=True), prefer=frozenset({"c0"}))
    s.current[2] = "c0"
    assert s.next_for(2, {}) == Action(
        job=2, sha="c0", kind=ActionKind.ENDPOINT, build=BuildKind.NONE
    )
    s = search(3, rates=SHOWN)
    act(s, "c0", PASS, PASS, PASS, job=1)
    act(s, "c2", FAIL, FAIL, FAIL, job=1)
    s.current[1] = "c1"
    s.built.add("c1")
    assert s.next_for(1, {}) == Action(job=1, sha="c1", kind=ActionKind.STEP, build=BuildKind.NONE)
    assert s.next_for(2, {}) == Action(
        job=2, sha="c1", kind=ActionKind.STEP, build=BuildKind.REBUILD
    )


def test_a_revived_commit_is_run_by_the_job_that_asked() -> None:
    s = search(4, rates=SHOWN, noise_limit=2)
    act(s, "c0", PASS, PASS, PASS)
    act(s, "c2", FAIL, FAIL, FAIL, FAIL)
    act(s, "c1", NOISE, NOISE, NOISE, build=BuildKind.BUILD, job=1)
    assert "c1" in s.set_aside_for_noise
    s.current[1] = "c1"
    a = s.next_for(1, {})
    assert a == Action(job=1, sha="c1", kind=ActionKind.STEP, build=BuildKind.NONE)
    assert "c1" not in s.set_aside_for_noise and "c1" not in s.untestable


def test_the_commit_worth_reviving_is_the_one_whose_run_tells_most() -> None:
    """Of two commits set aside, the one a run of tells more comes back (here c2, between
    culprit candidates c1..c3 that nothing has split; c1 tells less); the ratio is strict."""
    s = search(6, rates=SHOWN, noise_limit=2)
    act(s, "c0", PASS, PASS, PASS)
    act(s, "c5", FAIL, FAIL, FAIL)
    act(s, "c4", FAIL, FAIL, FAIL, FAIL, FAIL)
    act(s, "c1", NOISE, NOISE, NOISE)
    act(s, "c2", *[NOISE] * 6)  # the limit grew with c1's noise: 5 here
    assert s.set_aside_for_noise == {"c1", "c2"}
    gain = s.post.information(["c1", "c2"], (1,))[:, 0]
    assert gain[1] > gain[0] > 0
    # exactly at revive_ratio times the best: not revived (it must be worth more)
    s.revive_ratio = 1.0
    assert s._revived(set(), np.array([gain[1]])) is None
    assert s._revived(set(), np.zeros(0)) == "c2"  # nothing left to test at all
    assert s.set_aside_for_noise == {"c1"} and "c2" not in s.untestable


def test_a_clean_endpoint_that_only_failed_is_run_again_by_the_asking_job() -> None:
    """A clean endpoint whose every run failed is run again (not while in flight) until it
    passes; at ``endpoint_tries`` failures the search ends, naming it by 12 characters."""
    s = long_search(5, rates=Rates(bug_shown=True), endpoint_tries=3)
    good = s.bottoms[0]
    act(s, good, FAIL, FAIL)
    s.current[2] = good
    assert s.next_for(2, {}) == Action(
        job=2, sha=good, kind=ActionKind.ENDPOINT, build=BuildKind.NONE
    )
    assert s.next_for(1, {}) == Action(
        job=1, sha=good, kind=ActionKind.ENDPOINT, build=BuildKind.REBUILD
    )
    other = s.next_for(1, {2: good})  # in flight: the search goes on meanwhile
    assert other is not None and other.sha != good and other.kind is ActionKind.STEP
    act(s, good, FAIL)
    assert s.next_for(1, {2: good}) is not None and s.error is None  # its check is in flight
    assert s.next_for(1, {}) is None
    assert s.error == f"the clean endpoint {good[:12]} failed every one of its 3 run(s)"
    # a pass proves it: no rerun
    t = search(5, rates=Rates(bug_shown=True))
    act(t, "c0", FAIL, PASS)
    assert t._clean_unproven() == []
    t.untestable["c0"] = "no build"
    u = search(5, rates=Rates(bug_shown=True))
    act(u, "c0", FAIL)
    assert u._clean_unproven() == ["c0"]
    u.untestable["c0"] = "no build"
    assert u._clean_unproven() == []


def test_a_bad_merge_base_names_the_clean_endpoints_that_are_not_merge_bases() -> None:
    s = search(6, merge_bases=["c2"], endpoint_tries=1, rates=Rates(bug_shown=True))
    s.bottoms.append("c2")
    act(s, "c2", FAIL)
    assert s.next_for(0, {}) is None
    assert s.error is not None and s.error.startswith("the merge base c2 is bad")
    assert s.error.endswith("between c2 and [c0]")


def test_while_the_margins_are_learned_the_asking_job_runs_an_endpoint() -> None:
    s = search(5, margin=MarginMode.AUTO)
    s.current[1] = "c4"
    assert s.next_for(1, {}) == Action(
        job=1, sha="c4", kind=ActionKind.ENDPOINT, build=BuildKind.NONE
    )
    assert s.next_for(2, {1: "c4"}) == Action(
        job=2, sha="c0", kind=ActionKind.ENDPOINT, build=BuildKind.BUILD
    )


def test_a_noise_streak_is_forgiven_when_noise_everywhere_raises_the_limit() -> None:
    """A commit set aside after a streak comes back once the noise seen elsewhere makes that
    streak chance (the limit grew past it): testable again, its reason dropped."""
    s = search(5, rates=SHOWN, noise_limit=2)
    act(s, "c0", *[PASS] * 20)
    act(s, "c2", NOISE, NOISE)  # 0.5 / 25 noisy a priori: two in a row are the limit
    assert s.untestable["c2"].startswith("2 noisy runs in a row") and "c2" in s.set_aside_for_noise
    act(s, "c0", NOISE, PASS, NOISE, PASS)
    assert s.noise_streak_limit(2) > 2
    s.next_for(0, {})
    assert "c2" not in s.set_aside_for_noise and "c2" not in s.untestable
    assert s.untestable == {}


def test_nothing_to_run_when_every_commit_is_in_flight_or_untestable() -> None:
    s = search(3, rates=SHOWN)
    act(s, "c0", PASS)
    for sha in ("c1", "c2"):
        s.untestable[sha] = "no build"
    assert s.next_for(0, {1: "c0"}) is None
    assert s.error is None


def test_a_commit_this_job_built_is_scored_even_off_the_shortlist() -> None:
    """The shortlist keeps the best by one run's information, plus what this job has built: with
    a shortlist of one, a commit built here (a run costs no build) still wins over the best
    commit by information that needs a 30-minute build."""
    s = search(9, rates=SHOWN, shortlist=1, costs=Costs(rebuild_s=1800.0))
    act(s, "c0", PASS)
    act(s, "c8", FAIL)
    one = s.post.information(["c4", "c3"], (1,))[:, 0]
    assert one[0] > one[1]  # c4 splits best
    act(s, "c3", build=BuildKind.BUILD)  # built, not run: in this job's worktree
    s.current[0] = "c3"
    a = s.next_for(0, {})
    assert a == Action(job=0, sha="c3", kind=ActionKind.STEP, build=BuildKind.NONE)
    s.shortlist = 1
    s.current.clear()
    s.built.clear()
    assert s.next_for(0, {}).sha == "c4"  # type: ignore[union-attr]


def test_an_in_flight_commit_discounts_those_that_split_where_it_does() -> None:
    """A commit's score is multiplied by 1 - exp(-|P_bad - P_bad(in flight)| / 0.1) for each
    commit in flight: the same split is worth nothing twice, a far one nearly its full worth."""
    s = search(9, rates=SHOWN, costs=Costs(build_s=0.0, rebuild_s=0.0, run_s=60.0))
    act(s, "c0", PASS)
    act(s, "c8", FAIL)
    alone = s.next_for(0, {})
    assert alone is not None and alone.sha == "c4"
    # with c4 in flight, the next best is not its neighbour c5 or c3 but one further away
    other = s.next_for(1, {0: "c4"})
    assert other is not None
    pbad = {h: s.post.p_bad(h) for h in s.post.hyps}
    info = {h: float(s.post.information([h], (1,))[0, 0]) for h in s.post.hyps if h != "c4"}
    want = max(info, key=lambda h: info[h] * (1 - math.exp(-abs(pbad[h] - pbad["c4"]) / 0.1)))
    assert other.sha == want and want not in ("c3", "c5")
    # two in flight multiply: c2 and c6 taken, c4 is left
    assert s.next_for(2, {0: "c2", 1: "c6"}).sha == "c4"  # type: ignore[union-attr]
    # one run's worth (the entropy rule) against both discounts: with c4 and c5 in flight, c2;
    # c3 if only the last in flight counted, c1 at a discount ten times as wide (|d| / 1 or
    # |d| / 1.1), c3 too if a far commit were worth up to twice its information
    s.rule = "entropy"
    pool = ["c1", "c2", "c3", "c6", "c7"]
    info = {h: float(s.post.information([h], (1,))[0, 0]) for h in pool}

    def pick(width: float, running: tuple[str, ...] = ("c4", "c5")) -> str:
        def worth(h: str) -> float:
            d = [abs(pbad[h] - pbad[r]) for r in running]
            return info[h] * math.prod(1 - math.exp(-x / width) for x in d)

        return max(pool, key=worth)

    assert pick(0.1) == "c2"
    assert pick(0.1, ("c5",)) == "c3" and pick(1.0) == pick(1.1) == "c1"
    assert s.next_for(2, {0: "c4", 1: "c5"}).sha == "c2"  # type: ignore[union-attr]


def test_next_batch_gives_each_job_its_own_commit_until_none_is_left() -> None:
    s = search(8, rates=SHOWN)
    act(s, "c0", PASS)
    batch = s.next_batch(3)
    assert [a.job for a in batch] == [0, 1, 2]
    assert len({a.sha for a in batch}) == 3
    assert batch[0] == s.next_for(0, {}) and batch[1] == s.next_for(1, {0: batch[0].sha})
    # three candidates, known rates: c1 alone tells anything (c0 and c3 are the same under all)
    s = search(3, rates=SHOWN)
    act(s, "c0", PASS)
    one = Action(job=0, sha="c1", kind=ActionKind.STEP, build=BuildKind.BUILD)
    assert s.next_batch(4) == [one]  # then nothing: the loop ends
    t = search(8, rates=SHOWN)
    act(t, "c0", PASS)
    assert t.next_batch() == batch[:1]  # one job by default


def test_the_entropy_rule_picks_by_one_runs_information() -> None:
    """git-bayesect's rule: the commit whose single run tells most, whatever its cost."""
    s = search(9, rates=SHOWN, rule="entropy")
    act(s, "c0", PASS)
    act(s, "c8", FAIL)
    act(s, "c2", PASS, build=BuildKind.BUILD)
    assert s.next_for(0, {}).sha == "c5"  # type: ignore[union-attr]
    # at 99%/40% one run of c5 tells most, two runs of c4 would: the rule is one run's, and so
    # is the shortlist's
    s = search(9, rates=Rates(fixed=(0.99, 0.4), bug_shown=True), rule="entropy", shortlist=1)
    act(s, "c0", PASS)
    act(s, "c8", FAIL)
    info = s.post.information(["c4", "c5"], (1, 2))
    assert info[1, 0] > info[0, 0] and info[0, 1] > info[1, 1]
    assert s.next_for(0, {}).sha == "c5"  # type: ignore[union-attr]
    s.shortlist = 24
    assert s.next_for(0, {}).sha == "c5"  # type: ignore[union-attr]


def test_rescore_sees_the_pool_it_scores() -> None:
    seen: list[list[str]] = []

    class Watch(BayesSearch):
        def rescore(self, pool: list[str], scores: list[float]) -> list[float]:
            seen.append(list(pool))
            return scores

    g = linear(4)
    s = Watch(g, "c3", ["c0"], rates=SHOWN)
    a = s.next_for(0, {})
    assert a is not None and seen and a.sha in seen[0] and len(seen[0]) >= 2
    # rates learned: every commit's run tells something, endpoints included; each once
    seen.clear()
    s = Watch(g, "c3", ["c0"], rates=Rates(bug_shown=True))
    act(s, "c2", FAIL)
    act(s, "c1", PASS)
    s.next_for(0, {})
    assert "c3" in seen[0] and len(seen[0]) == len(set(seen[0]))


# ------------------------------------------------------------------------------ the answer
def test_the_answer_states_the_counts_the_margin_decision_and_the_drift() -> None:
    s = search(8, rates=KNOWN)
    act(s, "c3", FAIL, NOISE, build=BuildKind.BUILD)
    act(s, "c2", PASS, build=BuildKind.PREBUILT)
    act(s, "c3", PASS, build=BuildKind.REBUILD)
    s.drifted = {"c5": [0.3], "c4": [0.2]}
    a = s.answer("first fixed commit")
    assert a.kind.value == "first fixed commit"
    assert (a.runs, a.noisy_runs, a.builds, a.rebuilds, a.prebuilt) == (3, 1, 1, 1, 1)
    assert a.margin == "--margin off: verdicts only"
    assert a.drifted == ("c4", "c5")
    assert len(a.posterior) == 5 and len(s.post.hyps) == 7
    t = search(5, margin=MarginMode.AUTO)
    assert t.answer("first bad commit").margin is None  # still learning: nothing decided


# ------------------------------------------------------------------------------ information
def _h(p: list[float]) -> float:
    return -sum(x * math.log2(x) for x in p if x > 0)


def test_one_runs_information_is_the_entropy_it_removes_on_average() -> None:
    """Two candidates c1, c2 (equal), rates 0.9/0.05 known, a run of c1: c1 is bad under h=c1
    only. P(fail) = 0.5*0.9 + 0.5*0.05 = 0.475; after a fail P(h=c1) = 0.45/0.475, after a pass
    0.05/0.525. The gain is 1 bit less the expected entropy after."""
    g = linear(3)
    post = Posterior(g, "c2", ["c0"], KNOWN)
    pf, pp = 0.475, 0.525
    after = pf * _h([0.45 / pf, 0.025 / pf]) + pp * _h([0.05 / pp, 0.475 / pp])
    info = post.information(["c1", "c2", "c0"], (1, 2))
    assert info[0, 0] == pytest.approx(1 - after, abs=1e-12)
    assert info[1, 0] == pytest.approx(0.0, abs=1e-12) and info[2, 0] == pytest.approx(0.0)
    # two runs: outcomes 0, 1, 2 fails with binomial weights under each candidate
    two = 0.0
    for k in range(3):
        w = [0.5 * math.comb(2, k) * q**k * (1 - q) ** (2 - k) for q in (0.9, 0.05)]
        z = sum(w)
        two += z * _h([x / z for x in w])
    assert info[0, 1] == pytest.approx(1 - two, abs=1e-12)
    assert post.verdict_information(["c1"], (2,))[0, 0] == pytest.approx(1 - two, abs=1e-12)


def test_information_skips_candidates_ruled_out_and_counts_only_live_ones() -> None:
    """A candidate excluded (probability 0) adds nothing: the information is that of the others
    alone, computed as above for three candidates c1 (excluded), c2, c3."""
    g = linear(4)
    post = Posterior(g, "c3", ["c0"], KNOWN)
    post.equate("c0", "c1")  # no culprit at c1
    pf, pp = 0.475, 0.525
    after = pf * _h([0.45 / pf, 0.025 / pf]) + pp * _h([0.05 / pp, 0.475 / pp])
    assert post.information(["c2"], (1,))[0, 0] == pytest.approx(1 - after, abs=1e-12)


def test_information_at_rates_of_exactly_one_and_zero_is_the_whole_entropy() -> None:
    """Rates 1 and 0 (kept just inside by a billionth): a run of the middle commit of two
    candidates tells which one, one whole bit; a commit no candidate changes tells nothing."""
    g = linear(3)
    post = Posterior(g, "c2", ["c0"], Rates(fixed=(1.0, 0.0)))
    info = post.information(["c1", "c0", "c2"], (1, 16))
    assert info[0, 0] == pytest.approx(1.0, abs=1e-6) and info[0, 1] == pytest.approx(1.0, abs=1e-6)
    assert np.allclose(info[1:], 0.0, atol=1e-9)
    assert np.isfinite(info).all()


def test_the_information_with_a_margin_model_is_the_margin_rule(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With a margin model the information comes from margin_information_of, for exactly the
    commits and batch sizes asked for."""
    from lnrepro.bisect import bayes

    g = linear(4)
    post = Posterior(g, "c3", ["c0"], KNOWN)
    got: list[tuple[object, list[str], tuple[int, ...]]] = []

    def spy(p: Posterior, shas: list[str], ms: tuple[int, ...]) -> np.ndarray:
        got.append((p, list(shas), tuple(ms)))
        return np.full((len(shas), len(ms)), 7.0)

    post.margins.model = object()  # type: ignore[assignment]
    monkeypatch.setattr(bayes, "margin_information_of", spy)
    out = post.information(["c1", "c2"], (1, 4))
    assert got == [(post, ["c1", "c2"], (1, 4))] and out.shape == (2, 2)


# ------------------------------------------------------------------------------ counting
def test_equal_inputs_count_a_new_build_once_and_name_the_other_by_12_characters() -> None:
    s = long_search(5)
    a, b, c = s.graph.order[1:4]
    act(s, c, FAIL, build=BuildKind.BUILD)
    s.equate(Action(job=1, sha=b, kind=ActionKind.STEP, build=BuildKind.BUILD), c)
    assert s.builds == 2 and b in s.built
    assert s.untestable[b] == f"same inputs as {c[:12]}: its runs count for both"
    s.equate(Action(job=1, sha=a, kind=ActionKind.STEP, build=BuildKind.NONE), c)
    assert s.builds == 2  # no build: nothing counted


def test_each_prebuilt_fetch_counts_and_a_set_aside_commit_that_cannot_build_stays_out() -> None:
    s = search(5, noise_limit=2)
    act(s, "c1", PASS, build=BuildKind.PREBUILT)
    act(s, "c2", PASS, build=BuildKind.PREBUILT)
    assert s.prebuilt == 2
    act(s, "c3", NOISE, NOISE, NOISE)
    assert "c3" in s.set_aside_for_noise
    s.observe(Action(sha="c3", kind=ActionKind.STEP), [], cannot_test="no build")
    assert "c3" not in s.set_aside_for_noise and s.untestable["c3"] == "no build"


def test_a_learning_runs_margins_are_kept_for_its_endpoint() -> None:
    """While the margins are learned (``--margin auto``), each run of an endpoint keeps its
    margins and whether it failed, in the order given."""
    s = search(5, margin=MarginMode.AUTO)
    s.observe(
        Action(sha="c4", kind=ActionKind.ENDPOINT),
        [(FAIL, "f"), (PASS, "p")],
        margins=[{"q": 0.11}, {"q": 0.12}],
    )
    assert s._learn["c4"] == [({"q": 0.11}, True), ({"q": 0.12}, False)]
    assert s._learn["c0"] == []


def test_a_measured_build_bounds_the_rebuild_only_until_a_rebuild_is_measured() -> None:
    s = search(3, costs=Costs(build_s=50.0, rebuild_s=90.0))
    s.learn_costs(BuildKind.PREBUILT, 10.0, None)
    assert s.costs.rebuild_s == 90.0  # a fetch says nothing of a rebuild
    s.learn_costs(BuildKind.REBUILD, 100.0, None)
    s.learn_costs(BuildKind.BUILD, 40.0, None)
    assert (s.costs.build_s, s.costs.rebuild_s) == (40.0, 100.0)


def test_a_run_of_under_a_second_is_costed_as_it_is() -> None:
    """The cost rule divides by the run's own seconds (only a zero is kept off, at 1e-6)."""
    s = search(5, costs=Costs(run_s=0.5))
    act(s, "c1", PASS)
    info = np.array([1.0, 1.5, 2.0, 2.2, 2.3])
    assert s._score(info, 0, "c1") == pytest.approx(1.0 / 0.5)
    s.costs.run_s = 0.0
    assert s._score(info, 0, "c1") == pytest.approx(1.0 / 1e-6)


def test_progress_of_a_single_candidate_is_no_bit_missing() -> None:
    assert search(2).progress() == (1, 0)


# ------------------------------------------------------------------------------ the posterior
def test_the_candidates_are_those_no_clean_endpoint_contains() -> None:
    """Over a DAG with two roots and two clean endpoints: every commit the tip contains that
    neither clean endpoint contains, the other root included."""
    order = ("x", "c0", "c1", "y", "c2", "c3")
    parents = {
        "x": (),
        "c0": (),
        "c1": ("c0",),
        "y": ("x",),
        "c2": ("c1", "y"),
        "c3": ("c2",),
    }
    g = Graph(order, parents)
    assert Posterior(g, "c3", ["c0"]).hyps == ["x", "c1", "y", "c2", "c3"]
    assert Posterior(g, "c3", ["c1", "y"]).hyps == ["c2", "c3"]
    assert Posterior(g, "c3", ["y", "c1"]).hyps == ["c2", "c3"]
    with pytest.raises(ValueError, match=r"^no candidate commits between the endpoints$"):
        Posterior(g, "c1", ["c1"])


def test_a_commit_with_no_runs_is_not_counted() -> None:
    post = Posterior(linear(4), "c3", ["c0"], KNOWN)
    post.observe("c2", 0, 0)
    assert post.runs == {} and post.fails == {}


def test_two_equal_input_claims_both_exclude() -> None:
    post = Posterior(linear(6), "c5", ["c0"], KNOWN)
    post.equate("c1", "c2")  # no culprit at c2
    post.equate("c3", "c4")  # none at c4
    p = post.probs()
    assert p[post.index["c2"]] == 0 and p[post.index["c4"]] == 0
    assert p[post.index["c1"]] == pytest.approx(1 / 3)


def test_the_stated_posterior_gives_nothing_to_excluded_candidates() -> None:
    post = Posterior(linear(6), "c5", ["c0"])
    post.observe("c5", 3, 3)
    post.observe("c0", 0, 3)
    post.equate("c1", "c3")  # no culprit at c2, c3
    st = post.stated()
    assert st[post.index["c2"]] == 0 and st[post.index["c3"]] == 0
    assert st.sum() == pytest.approx(1.0) and np.isfinite(st).all()


def test_thousands_of_runs_keep_both_posteriors_finite() -> None:
    """Log-likelihoods of thousands of runs are far below exp's range: each posterior is
    normalised by its largest term, so it stays a probability vector."""
    post = Posterior(linear(5), "c4", ["c0"])
    post.observe("c4", 1400, 2000)
    post.observe("c2", 1400, 2000)
    post.observe("c1", 100, 2000)
    post.observe("c0", 100, 2000)
    for p in (post.probs(), post.stated()):
        assert np.isfinite(p).all() and p.sum() == pytest.approx(1.0)
        assert p[post.index["c2"]] > 0.99


def test_draws_at_exactly_zero_or_one_are_kept_inside_by_a_billionth() -> None:
    """Priors so lopsided that a Beta draw rounds to 0 or 1: each drawn rate is clipped to
    [1e-9, 1 - 1e-9], so the stated posterior stays a probability vector."""
    for rates, fails in (
        (Rates(bad=(1e-3, 1.0), good=(1e-3, 1.0)), 0),  # every run passes: draws of 0
        (Rates(bad=(1.0, 1e-3), good=(1.0, 1e-3)), 1),  # every run fails: draws of 1
    ):
        post = Posterior(linear(5), "c4", ["c0"], rates)
        post.observe("c4", fails, 1)
        post.observe("c0", 2 * fails, 2)
        st = post.stated()
        assert np.isfinite(st).all() and st.sum() == pytest.approx(1.0)


def _stated_by_hand(
    n: int, runs: dict[int, tuple[int, int]], bad: tuple[float, float], good: tuple[float, float]
) -> np.ndarray:
    """The stated posterior of a line c0..c{n-1} (candidates c1..), as its docstring says it:
    seeded (41); 256 rate pairs drawn from the Beta posteriors given the leading candidate of
    the exact posterior, the known-rates posterior averaged over them; then 256 pairs again,
    the i-th drawn given the candidate at (i + 0.5) / 256 of that first average's cumulative
    sum, and the known-rates posterior averaged over those."""
    hyps = range(1, n)
    counts = []
    for h in hyps:  # c_i contains h when i >= h
        kb = sum(k for i, (k, _) in runs.items() if i >= h)
        nb = sum(m for i, (_, m) in runs.items() if i >= h)
        kg = sum(k for i, (k, _) in runs.items() if i < h)
        ng = sum(m for i, (_, m) in runs.items() if i < h)
        counts.append((kb, nb, kg, ng))

    def lb(a: float, b: float) -> float:
        return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)

    exact = [
        lb(bad[0] + kb, bad[1] + nb - kb) + lb(good[0] + kg, good[1] + ng - kg)
        for kb, nb, kg, ng in counts
    ]
    lead = exact.index(max(exact))
    rng = np.random.default_rng(41)

    def average(kb: object, nb: object, kg: object, ng: object) -> np.ndarray:
        qb = np.clip(rng.beta(bad[0] + kb, bad[1] + nb - kb, 256), 1e-9, 1 - 1e-9)  # type: ignore[operator]
        qg = np.clip(rng.beta(good[0] + kg, good[1] + ng - kg, 256), 1e-9, 1 - 1e-9)  # type: ignore[operator]
        out = np.zeros(len(counts))
        for d in range(256):
            ll = np.array(
                [
                    k1 * math.log(qb[d]) + (m1 - k1) * math.log1p(-qb[d])
                    + k0 * math.log(qg[d]) + (m0 - k0) * math.log1p(-qg[d])
                    for k1, m1, k0, m0 in counts
                ]
            )  # fmt: skip
            w = np.exp(ll - ll.max())
            out += w / w.sum()
        return out / 256

    sharp = average(*counts[lead])
    cum = np.cumsum(sharp)
    pick = [min(int(np.searchsorted(cum, (i + 0.5) / 256)), len(counts) - 1) for i in range(256)]
    per = np.array([counts[h] for h in pick], dtype=float).T
    return average(*per)


@pytest.mark.parametrize(
    "runs",
    [
        {4: (2, 3), 2: (2, 3), 1: (0, 3), 0: (0, 2)},
        {4: (700, 1000), 3: (690, 1000), 2: (80, 1000), 0: (70, 1000)},
        {4: (3, 3), 2: (1, 2), 0: (0, 3)},
        {4: (3, 3), 3: (0, 3), 0: (0, 3)},  # the tip leads: the last stratum is its
    ],
)
def test_the_stated_posterior_is_its_two_passes_of_drawn_rates(
    runs: dict[int, tuple[int, int]],
) -> None:
    post = Posterior(linear(5), "c4", ["c0"])
    for i, (k, m) in runs.items():
        post.observe(f"c{i}", k, m)
    want = _stated_by_hand(5, runs, (1.0, 1.0), (0.5, 4.5))
    assert np.allclose(post.stated(), want, rtol=1e-9, atol=1e-12)
    if len(runs) == 4 and runs[4][1] < 10:  # the second pass tells here: without it, another
        post.rivals = False
        post._stated = None
        assert not np.allclose(post.stated(), want, rtol=1e-9, atol=1e-12)


def test_the_progress_note_at_rates_that_tell_little_per_run() -> None:
    """At 60%/30% a run moves the log-odds by KL(0.3 || 0.6) = 0.184 nats on average: a leader
    already at the stop needs one run (not 1 / 0.184); one at 0.25 of four needs
    ceil(ln 3 / 0.184) = 6 runs to reach 0.5 (not every run left)."""
    per_run = 0.3 * math.log(0.3 / 0.6) + 0.7 * math.log(0.7 / 0.4)
    assert per_run == pytest.approx(0.1838, abs=1e-4) and per_run < _kl(0.6, 0.3)
    s = search(3, rates=Rates(fixed=(0.6, 0.3)), confidence=0.5)
    assert s.progress_note() == "leading c1 at P=0.50 (stops at 0.5), ~1 run to go"
    s = search(5, rates=Rates(fixed=(0.6, 0.3)), confidence=0.5)
    assert math.ceil(math.log(3) / per_run) == 6
    assert s.progress_note() == "leading c1 at P=0.25 (stops at 0.5), ~6 runs to go"


def _information_by_hand(p: list[float], q: list[list[float]], m: int) -> list[float]:
    """H(p) less the expected entropy after ``m`` runs, per commit: ``q[s][h]`` is commit s's
    fail rate if h is the culprit. Pure Python: an outcome no candidate can give weighs 0."""
    out = []
    for qs in q:
        after = 0.0
        for k in range(m + 1):
            w = [
                ph * math.comb(m, k) * qh**k * (1 - qh) ** (m - k)
                for ph, qh in zip(p, qs, strict=True)
            ]
            z = sum(w)
            if z > 0:
                after += z * _h([x / z for x in w])
        out.append(_h(p) - after)
    return out


def test_information_when_a_learned_rate_is_one_and_another_underflows() -> None:
    """Priors so lopsided that the buggy rate's posterior mean is exactly 1.0 and the clean one's
    3e-31 (sixteen fails of a clean commit weigh exactly 0): the information is still the
    expected entropy removed, outcomes no candidate can give weighing nothing."""
    post = Posterior(linear(4), "c3", ["c0"], Rates(bad=(1.0, 1e-30), good=(1e-30, 1.0)))
    post.observe("c0", 0, 2)  # clean under every candidate: no buggy run yet
    mb, mg = 1 / (1 + 1e-30), 1e-30 / (1e-30 + 1 + 2)
    assert mb == 1.0 and mg > 0 and math.exp(16 * math.log(mg)) == 0.0
    p = [float(x) for x in post.probs()]
    assert p == pytest.approx([1 / 3] * 3)
    rows = {"c1": [True, False, False], "c2": [True, True, False], "c3": [True] * 3}
    q = [[mb if bad else mg for bad in rows[s]] for s in rows]
    info = post.verdict_information(list(rows), (1, 16))
    assert np.isfinite(info).all()
    for j, m in enumerate((1, 16)):
        assert info[:, j] == pytest.approx(_information_by_hand(p, q, m), abs=1e-9)
    assert info[1, 0] == pytest.approx(math.log2(3) - 2 / 3, abs=1e-9)
    # at the default priors, rates learned per candidate: the same formula
    post = Posterior(linear(4), "c3", ["c0"])
    post.observe("c2", 1, 2)
    post.observe("c0", 0, 1)
    # h=c1, c2: c2 bad (1 of 2), c0 clean (0 of 1); h=c3: c2 and c0 clean (1 of 3)
    mbs = [(1 + 1) / (2 + 2)] * 2 + [1 / 2]
    mgs = [(0.5 + 0) / (5 + 1)] * 2 + [(0.5 + 1) / (5 + 3)]
    p = [float(x) for x in post.probs()]
    q = [[mbs[h] if bad else mgs[h] for h, bad in enumerate(rows[s])] for s in rows]
    info = post.verdict_information(list(rows), (1, 4))
    for j, m in enumerate((1, 4)):
        assert info[:, j] == pytest.approx(_information_by_hand(p, q, m), abs=1e-9)


def test_a_clean_endpoint_this_job_has_is_checked_whatever_a_fetch_would_cost() -> None:
    """The clean endpoint's check is priced by what the asking job needs: nothing when its
    worktree has it, though a fetch would cost more than five runs."""
    s = search(5, rates=Rates(bug_shown=True), prefer=frozenset({"c0"}), costs=Costs(fetch_s=1e4))
    s.current[2] = "c0"
    assert s.next_for(2, {}) == Action(
        job=2, sha="c0", kind=ActionKind.ENDPOINT, build=BuildKind.NONE
    )
    assert s.next_for(1, {}).kind is ActionKind.STEP  # type: ignore[union-attr]


def test_builds_add_up_and_a_job_that_cannot_test_keeps_no_worktree_commit() -> None:
    s = search(6)
    act(s, "c1", PASS, build=BuildKind.BUILD)
    act(s, "c2", PASS, build=BuildKind.BUILD, job=1)
    assert s.builds == 2 and s.current == {0: "c1", 1: "c2"}
    s.observe(Action(job=1, sha="c3", kind=ActionKind.STEP), [], cannot_test="no build")
    assert s.current == {0: "c1"}


def test_a_merge_base_that_failed_is_judged_on_its_runs_and_noise_together() -> None:
    s = search(5, merge_bases=["c1"], endpoint_tries=2, rates=Rates(bug_shown=True))
    act(s, "c1", FAIL, NOISE)  # one run, one noisy: two tries
    assert s.next_for(0, {}) is None
    assert s.error is not None and s.error.startswith("the merge base c1 is bad")


def test_of_two_clean_endpoints_that_only_failed_the_one_not_in_flight_is_run() -> None:
    g = linear(6)
    s = BayesSearch(g, "c5", ["c0", "c2"], rates=Rates(bug_shown=True))
    act(s, "c0", FAIL)
    act(s, "c2", FAIL)
    assert s._clean_unproven() == ["c0", "c2"]
    assert s.next_for(1, {0: "c0"}) == Action(
        job=1, sha="c2", kind=ActionKind.ENDPOINT, build=BuildKind.REBUILD
    )
