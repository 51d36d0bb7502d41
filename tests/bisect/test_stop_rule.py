"""The Bayesian search's rules (lnrepro.bisect.bayes), one by one: when it may stop and what it
answers, what it runs first, how it counts builds, runs and noise, when a noisy commit is set
aside, how measured costs and runs before the search are folded in. Pure, small graphs."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from lnrepro.bisect.bayes import BayesSearch, Costs, Posterior, _entropy, _lbeta
from lnrepro.bisect.core import Mark
from lnrepro.bisect.evidence import Rates
from lnrepro.model.bisect import (
    Action,
    ActionKind,
    BuildKind,
    Candidate,
    LearnedRates,
    ResultKind,
    RunOutcome,
    SearchKind,
)
from tests.bisect.test_core import linear

FAIL, PASS, NOISE = RunOutcome.FAIL, RunOutcome.PASS, RunOutcome.NOISE
KNOWN = Rates(fixed=(0.9, 0.05))


def search(n: int = 8, **kw: object) -> BayesSearch:
    g = linear(n)
    return BayesSearch(g, g.order[-1], [g.order[0]], **kw)  # type: ignore[arg-type]


def act(s: BayesSearch, sha: str, *outs: RunOutcome, build: BuildKind = BuildKind.NONE) -> Mark:
    return s.observe(
        Action(sha=sha, kind=ActionKind.STEP, build=build), [(o, o.value) for o in outs]
    )


# ------------------------------------------------------------------------------ the numbers
def test_the_helpers_compute_what_they_say() -> None:
    assert _entropy(np.array([0.5, 0.5, 0.0])) == 1.0
    assert _entropy(np.array([1.0])) == 0.0
    assert _entropy(np.array([0.25] * 4)) == 2.0
    # log B(a, b) = lgamma(a) + lgamma(b) - lgamma(a + b): B(2, 3) = 1/12
    assert _lbeta(np.array([2.0]), np.array([3.0]))[0] == pytest.approx(math.log(1 / 12))
    assert _lbeta(np.array([[1.0, 2.0]]), np.array([[1.0, 1.0]])).shape == (1, 2)


def test_rates_from_runs_measured_before_the_search() -> None:
    r = Rates().with_runs((14, 20), (1, 10))
    assert r == Rates((15.0, 7.0), (1.5, 13.5), None, True)
    assert Rates().with_runs((0, 20), (0, 0)).bug_shown is False
    assert Rates(bug_shown=True).with_runs((0, 0), (0, 0)).bug_shown is True
    assert Rates(fixed=(0.9, 0.1)).with_runs((1, 2), (0, 2)).fixed == (0.9, 0.1)
    assert Rates(fixed=(0.9, 0.1)).to_json() == {
        "bad_prior": [1.0, 1.0],
        "good_prior": [0.5, 4.5],
        "fixed": [0.9, 0.1],
        "bug_shown": False,
    }
    assert Rates().to_json()["fixed"] is None
    assert dataclasses.asdict(Costs()) == {
        "build_s": 1800.0,
        "rebuild_s": 90.0,
        "run_s": 60.0,
        "fetch_s": 180.0,
    }


# ------------------------------------------------------------------------------ the posterior
def test_the_posterior_with_known_rates_is_bayes_rule() -> None:
    g = linear(4)
    post = Posterior(g, "c3", ["c0"], KNOWN)
    assert post.hyps == ["c1", "c2", "c3"]
    post.observe("c2", 1, 1)
    post.observe("c1", 0, 2)
    post.observe("c1", 0, 0)  # no runs: nothing learned
    assert post.runs == {"c2": 1, "c1": 2} and post.fails == {"c2": 1, "c1": 0}
    # h=c1: c1 bad (0 of 2 fail at 0.9), c2 bad (1 fail at 0.9); h=c2: c1 clean, c2 bad; h=c3: both clean
    like = np.array([0.1**2 * 0.9, 0.95**2 * 0.9, 0.95**2 * 0.05])
    want = like / like.sum()
    assert np.allclose(post.probs(), want)
    assert np.allclose(post.stated(), want)  # known rates: the stated posterior is the exact one
    assert post.best() == ("c2", pytest.approx(want[1]))
    assert post.p_bad("c2") == pytest.approx(want[0] + want[1])
    assert post.p_bad("c3") == pytest.approx(1.0)
    assert post.top(2) == [("c2", pytest.approx(want[1])), ("c3", pytest.approx(want[2]))]
    assert post.entropy() == pytest.approx(float(-(want * np.log2(want)).sum()))
    assert post.rates_now() == (pytest.approx(0.9), pytest.approx(0.05))


def test_the_learned_rates_are_the_posterior_means() -> None:
    g = linear(3)
    post = Posterior(g, "c2", ["c0"])  # uniform bad prior, Beta(0.5, 4.5) clean prior
    post.observe("c2", 3, 4)
    post.observe("c0", 1, 6)
    qb, qg = post.rates_now()
    # c2 is bad under every candidate; c0 clean under every one
    assert qb == pytest.approx((1 + 3) / (2 + 4), rel=1e-6)
    assert qg == pytest.approx((0.5 + 1) / (5 + 6), rel=1e-6)


def test_equal_inputs_exclude_the_commits_between_unless_none_would_be_left() -> None:
    g = linear(5)
    post = Posterior(g, "c4", ["c0"], KNOWN)
    post.equate("c1", "c3")  # no culprit in c2, c3
    p = post.probs()
    assert p[post.index["c2"]] == 0 and p[post.index["c3"]] == 0
    assert p[post.index["c1"]] == pytest.approx(0.5)
    post.equate("c0", "c4")  # would leave nothing: ignored
    assert post.probs()[post.index["c1"]] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="no candidate commits between the endpoints"):
        Posterior(g, "c0", ["c0"])


def test_information_is_zero_for_a_commit_that_cannot_split() -> None:
    g = linear(4)
    post = Posterior(g, "c3", ["c0"], KNOWN)
    info = post.information(["c0", "c2", "c3"], (1, 2))
    assert info.shape == (3, 2)
    assert info[0, 0] == pytest.approx(0.0, abs=1e-12)  # c0: clean whatever the culprit
    assert info[1, 0] > 0 and info[1, 1] > info[1, 0]  # two runs tell more than one


# ------------------------------------------------------------------------------ when it stops
def test_it_stops_when_the_stated_posterior_reaches_the_confidence_and_the_tip_failed() -> None:
    s = search(3, rates=KNOWN, confidence=0.95)
    assert not s.done
    # c1 fails, c0 passed: certain with known rates, but the tip has not failed yet
    act(s, "c1", FAIL, FAIL, FAIL)
    act(s, "c0", PASS, PASS, PASS)
    assert s._best()[0] == "c1" and s._best()[1] >= 0.95
    assert not s.done
    act(s, "c2", FAIL)
    assert s.done
    a = s.answer("first bad commit")
    assert a.first_bad == "c1" and a.reason is None and a.error is None
    assert a.kind is ResultKind.FIRST_BAD and a.search is SearchKind.BAYESIAN
    assert a.most_likely == "c1" and a.confidence == pytest.approx(s._best()[1])
    assert a.wanted_confidence == 0.95
    assert a.posterior[0] == Candidate(sha="c1", p=pytest.approx(s._best()[1]))
    assert a.rates == LearnedRates(bad=pytest.approx(0.9), good=pytest.approx(0.05))
    assert (a.runs, a.noisy_runs, a.builds, a.rebuilds, a.prebuilt) == (7, 0, 0, 0, 0)


def test_runs_measured_before_the_search_stand_for_the_tips_failure() -> None:
    s = search(3, rates=Rates(fixed=(0.9, 0.05), bug_shown=True))
    act(s, "c1", FAIL, FAIL, FAIL)
    act(s, "c0", PASS, PASS, PASS)
    assert s.done


def test_at_exactly_the_confidence_it_stops_and_names_the_culprit() -> None:
    s = search(3, rates=KNOWN)
    act(s, "c2", FAIL)
    s.confidence = s._best()[1]
    assert s.done and s.answer("first bad commit").first_bad == s._best()[0]
    s.confidence = s._best()[1] + 1e-9
    assert not s.done
    a = s.answer("first bad commit")
    assert a.first_bad is None and a.reason == f"no commit reached confidence {s.confidence:g}"


def test_an_error_stops_it_and_is_the_answers_reason() -> None:
    s = search(3, rates=KNOWN)
    act(s, "c1", FAIL, FAIL, FAIL, FAIL)
    act(s, "c2", FAIL)
    act(s, "c0", PASS, PASS, PASS, PASS)
    s.error = "the endpoints do not separate"
    a = s.answer("first bad commit")
    assert s.done and a.first_bad is None and a.error == a.reason == s.error
    assert a.most_likely == "c1"


def test_it_stops_after_max_runs_counting_noise_and_after_twice_as_many_actions() -> None:
    s = search(3, max_runs=4)
    act(s, "c1", PASS, NOISE)
    assert not s.done
    act(s, "c1", NOISE)
    assert not s.done
    act(s, "c1", PASS)
    assert s.done  # 2 runs + 2 noisy = 4
    s = search(3, max_runs=4)
    for _ in range(7):
        s.observe(Action(sha="c1", kind=ActionKind.STEP), [], cannot_test="no build")
    assert not s.done and s.actions == 7
    s.observe(Action(sha="c1", kind=ActionKind.STEP), [], cannot_test="no build")
    assert s.done


def test_the_exact_stop_rule_uses_the_exact_posterior() -> None:
    g = linear(6)
    s = BayesSearch(g, "c5", ["c0"], stop="exact")
    t = BayesSearch(g, "c5", ["c0"])
    for x in (s, t):
        act(x, "c5", FAIL, FAIL)
        act(x, "c3", FAIL, FAIL, FAIL)
        act(x, "c2", PASS, PASS, PASS, PASS)
    assert s._best()[1] == pytest.approx(float(s.post.probs().max()))
    assert t._best()[1] == pytest.approx(float(t.post.stated().max()))
    assert s._best()[1] != pytest.approx(t._best()[1])


# ------------------------------------------------------------------------------ what it runs
def test_the_buggy_endpoint_first_until_it_shows_the_bug() -> None:
    s = search(5)
    a = s.next_for(0, {})
    assert a == Action(job=0, sha="c4", kind=ActionKind.ENDPOINT, build=BuildKind.BUILD)
    # while another job runs it, not twice
    other = s.next_for(1, {0: "c4"})
    assert other is not None and other.sha != "c4"


def test_a_buggy_endpoint_that_never_fails_ends_the_search_with_its_counts() -> None:
    s = search(5, endpoint_tries=3)
    for _ in range(3):
        assert s.next_for(0, {}) is not None
        act(s, "c4", PASS)
    assert s.next_for(0, {}) is None
    assert s.error == "the buggy endpoint showed no failure of the bug in 3 run(s)"
    s = search(5, endpoint_tries=3)
    act(s, "c4", PASS, NOISE, NOISE, NOISE)
    act(s, "c4", NOISE, NOISE, NOISE)
    act(s, "c4", NOISE, NOISE, NOISE)
    assert s.next_for(0, {}) is None
    assert (
        s.error == "the buggy endpoint showed no failure of the bug in 1 run(s) and 9 noisy one(s)"
    )
    s = search(5, endpoint_tries=3)
    act(s, "c4", PASS, PASS, NOISE, NOISE, NOISE, NOISE, NOISE, NOISE)
    assert s.next_for(0, {}) is not None  # 2 runs, 6 noisy: one more try
    assert s.error is None


def test_a_merge_base_is_tested_before_the_search_and_must_be_clean() -> None:
    s = search(5, merge_bases=["c1"], endpoint_tries=2, rates=Rates(bug_shown=True))
    a = s.next_for(0, {})
    assert a == Action(job=0, sha="c1", kind=ActionKind.MERGE_BASE, build=BuildKind.BUILD)
    act(s, "c1", FAIL)
    assert s.next_for(0, {}) is not None and s.error is None  # one failure: tried again
    act(s, "c1", FAIL)
    assert s.next_for(0, {}) is None
    assert s.error is not None and s.error.startswith("the merge base c1 is bad")
    s = search(5, merge_bases=["c1"], rates=Rates(bug_shown=True))
    act(s, "c1", PASS)
    assert s.next_for(0, {}).kind is not ActionKind.MERGE_BASE  # type: ignore[union-attr]


def test_a_clean_endpoint_is_checked_once_when_it_costs_about_a_run() -> None:
    s = search(5, rates=Rates(bug_shown=True), prefer=frozenset({"c0"}), costs=Costs(fetch_s=300.0))
    a = s.next_for(0, {})
    assert a == Action(job=0, sha="c0", kind=ActionKind.ENDPOINT, build=BuildKind.PREBUILT)
    s.costs.fetch_s = 301.0  # more than five runs' worth
    assert s.next_for(0, {}).kind is ActionKind.STEP  # type: ignore[union-attr]
    # not when its runs were measured before, nor with the rates given
    s = search(5, rates=Rates(bug_shown=True), prefer=frozenset({"c0"}), measured=frozenset({"c0"}))
    assert s.next_for(0, {}).kind is ActionKind.STEP  # type: ignore[union-attr]
    s = search(5, rates=Rates(fixed=(0.9, 0.1), bug_shown=True), prefer=frozenset({"c0"}))
    assert s.next_for(0, {}).kind is ActionKind.STEP  # type: ignore[union-attr]


def test_build_kinds_and_their_costs() -> None:
    s = search(5, prefer=frozenset({"c2"}))
    assert s._build_kind(0, "c1") is BuildKind.BUILD
    act(s, "c1", PASS, build=BuildKind.BUILD)
    assert s._build_kind(0, "c1") is BuildKind.NONE  # built in this job's worktree now
    assert s._build_kind(1, "c1") is BuildKind.REBUILD
    assert s._build_kind(1, "c2") is BuildKind.PREBUILT
    assert [s._cost(k) for k in BuildKind] == [0.0, 90.0, 1800.0, 180.0]
    # the cost rule: information per second of the best batch
    info = np.array([1.0, 1.5, 2.0, 2.2, 2.3])
    assert s._score(info, 0, "c1") == pytest.approx(
        max(i / (0 + m * 60) for i, m in zip(info, (1, 2, 4, 8, 16), strict=True))
    )
    assert s._score(info, 1, "c3") == pytest.approx(
        max(i / (1800 + m * 60) for i, m in zip(info, (1, 2, 4, 8, 16), strict=True))
    )
    s.rule = "entropy"
    assert s._score(info, 1, "c3") == 1.0


def test_observing_counts_builds_runs_and_noise() -> None:
    s = search(5)
    step = Action(sha="c2", kind=ActionKind.STEP, build=BuildKind.BUILD)
    assert s.observe(step, [(FAIL, "f"), (NOISE, "n"), (PASS, "p")]) is Mark.BAD
    assert (s.builds, s.runs, s.noise, s.actions) == (1, 2, 1, 1)
    assert s.tally("c2").reasons == ["f", "n", "p"]
    assert s.post.fails["c2"] == 1 and s.post.runs["c2"] == 2
    assert s.current == {0: "c2"} and "c2" in s.built
    s.observe(Action(sha="c2", kind=ActionKind.STEP, build=BuildKind.BUILD), [(PASS, "p")])
    assert s.builds == 1  # built before: not a new build
    s.observe(Action(sha="c1", kind=ActionKind.STEP, build=BuildKind.REBUILD), [(PASS, "p")])
    s.observe(Action(sha="c3", kind=ActionKind.STEP, build=BuildKind.PREBUILT), [(PASS, "p")])
    s.observe(Action(sha="c3", kind=ActionKind.STEP, build=BuildKind.NONE), [(PASS, "p")])
    # a "build" of a commit built before is counted as the rebuild it is
    assert (s.builds, s.rebuilds, s.prebuilt) == (1, 2, 1)
    assert s.observe(Action(sha="c1", kind=ActionKind.STEP), [(NOISE, "n")]) is Mark.SKIP
    assert s.observe(Action(sha="c1", kind=ActionKind.STEP), [(PASS, "n")]) is Mark.GOOD


def test_a_commit_that_cannot_be_tested_is_set_aside_with_its_reason() -> None:
    s = search(5)
    s.observe(Action(job=1, sha="c2", kind=ActionKind.STEP), [], cannot_test="no build")
    assert s.untestable == {"c2": "no build"} and "c2" not in s.built and s.actions == 1
    assert (s.runs, s.noise) == (0, 0)


def test_a_noise_streak_sets_a_commit_aside_and_the_limit_grows_with_noise_elsewhere() -> None:
    s = search(5, noise_limit=3)
    assert s.noise_streak_limit() == 3
    act(s, "c2", NOISE, NOISE)
    assert "c2" not in s.untestable and s.noise_run["c2"] == 2
    act(s, "c2", NOISE)
    assert s.untestable["c2"] == "3 noisy runs in a row: noise"
    assert s.set_aside_for_noise == {"c2"}
    act(s, "c1", NOISE, PASS)  # a run that tells ends the streak
    assert s.noise_run["c1"] == 0
    # the limit: log(1e-3) / log(noise rate outside the streak), at least noise_limit
    s = search(5, noise_limit=3)
    act(s, "c1", *([NOISE] * 2 + [PASS]) * 10)
    rate = (20 + 0.5) / (10 + 20 + 5.0)
    assert s.noise_streak_limit() == math.ceil(math.log(1e-3) / math.log(rate))
    assert s.noise_streak_limit(5) == math.ceil(math.log(1e-3) / math.log((15.5) / (30.0)))


def test_equal_inputs_share_the_verdict() -> None:
    s = search(5)
    act(s, "c3", FAIL, FAIL, PASS)
    m = s.equate(Action(job=1, sha="c2", kind=ActionKind.STEP, build=BuildKind.BUILD), "c3")
    assert m is Mark.BAD
    assert s.untestable["c2"] == "same inputs as c3: its runs count for both"
    assert (s.builds, s.actions, s.current[1]) == (1, 2, "c2")
    act(s, "c1", PASS)
    assert s.equate(Action(sha="c0", kind=ActionKind.STEP), "c1") is Mark.GOOD
    assert s.equate(Action(sha="c4", kind=ActionKind.STEP), "c2") is Mark.SKIP  # never run


def test_measured_costs_replace_the_defaults_then_are_averaged() -> None:
    s = search(3)
    s.learn_costs(BuildKind.BUILD, 60.0, 10.0)
    assert (s.costs.build_s, s.costs.rebuild_s, s.costs.run_s) == (60.0, 60.0, 10.0)
    s.learn_costs(BuildKind.BUILD, 160.0, 20.0)
    assert s.costs.build_s == pytest.approx(0.7 * 60 + 0.3 * 160)
    assert s.costs.run_s == pytest.approx(0.7 * 10 + 0.3 * 20)
    s.learn_costs(BuildKind.REBUILD, 5.0, None)
    s.learn_costs(BuildKind.BUILD, 90.0, None)
    assert s.costs.rebuild_s == 5.0  # measured: a build no longer bounds it
    s.learn_costs(BuildKind.PREBUILT, 7.0, None)
    assert s.costs.fetch_s == 7.0
    s.learn_costs(BuildKind.NONE, 999.0, None)
    assert (s.costs.build_s, s.costs.rebuild_s, s.costs.fetch_s) == (
        pytest.approx(0.7 * 90 + 0.3 * 90, abs=100),
        5.0,
        7.0,
    )
    t = search(3)
    t.learn_costs(BuildKind.BUILD, 3000.0, None)
    assert t.costs.rebuild_s == 90.0  # a slower build: the warm-ccache default stays


def test_progress_counts_the_95_percent_set_and_the_bits_missing() -> None:
    s = search(5, rates=KNOWN)
    held, bits = s.progress()
    assert (held, bits) == (4, 2)  # four equal candidates: all needed, two bits
    act(s, "c2", FAIL, FAIL, FAIL, FAIL)
    act(s, "c1", PASS, PASS, PASS, PASS)
    assert s.progress() == (1, 1)  # under a bit still missing: rounded up
    assert s.runs_per_action() == 1


def test_a_commit_set_aside_for_noise_comes_back_when_it_alone_can_decide() -> None:
    s = search(4, rates=Rates(fixed=(0.9, 0.05), bug_shown=True), noise_limit=2)
    act(s, "c0", PASS, PASS, PASS)
    act(s, "c2", FAIL, FAIL, FAIL, FAIL)
    act(s, "c1", NOISE, NOISE, NOISE)  # the limit: 3 here (no noise elsewhere, 7 runs)
    assert s.noise_streak_limit(3) == 3 and "c1" in s.set_aside_for_noise
    a = s.next_for(0, {})
    assert a is not None and a.sha == "c1" and a.kind is ActionKind.STEP
    assert "c1" not in s.untestable and s.noise_run["c1"] == 0
    # while running elsewhere it is not revived
    s = search(4, rates=Rates(fixed=(0.9, 0.05), bug_shown=True), noise_limit=2)
    act(s, "c0", PASS, PASS, PASS)
    act(s, "c2", FAIL, FAIL, FAIL, FAIL)
    act(s, "c1", NOISE, NOISE, NOISE)
    assert s._revived({"c1"}, np.zeros(1)) is None
    assert s._revived(set(), np.array([1e9])) is None  # worth less than the best testable one
