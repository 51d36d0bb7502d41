"""The rules of lnrepro.bisect.evidence, one by one: what a run means and the words it is given.

Each test pins one rule a user sees the effect of (a step's mark and its reason in the record and
the terminal): how a timeout, an exit code, a crash, a metric (NaN included) or a hang is judged,
how the signature is learned, and how ``--find-fix`` turns it all around. Pure, in process.
"""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

from lnrepro.bisect.evidence import (
    Meaning,
    Sense,
    Tally,
    classify,
    learn,
    mark_of,
    shape,
    why,
)
from lnrepro.model.bisect import AttemptObs, Evidence, Mark, RunOutcome, Signature, TestObs
from lnrepro.model.gtest import TestStatus
from lnrepro.model.requests import (
    BisectRequest,
    CommandOracleSpec,
    EndpointRuns,
    OnCrash,
    OnHang,
    Policy,
    RunOracleSpec,
    TtMetalSpec,
)

F, P, S, D, C, T = (
    TestStatus.FAILED,
    TestStatus.PASSED,
    TestStatus.SKIPPED,
    TestStatus.DISABLED,
    TestStatus.CRASHED,
    TestStatus.TIMEOUT,
)
FAIL, PASS, NOISE = RunOutcome.FAIL, RunOutcome.PASS, RunOutcome.NOISE
HANG_BAD = Policy(on_hang=OnHang.BAD)


def t(name: str, status: TestStatus, *shapes: str, metric: float | None = None) -> TestObs:
    return TestObs(name=name, status=status, shapes=shapes, metric=metric)


def run(*tests: TestObs, **kw: object) -> AttemptObs:
    kw.setdefault("exit_code", 1)
    return AttemptObs(tests=tests, **kw)  # type: ignore[arg-type]


def cmd(code: int, **kw: object) -> AttemptObs:
    return AttemptObs(exit_code=code, gtest=False, **kw)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------ shape
def test_a_shape_is_the_first_non_empty_line_with_numbers_masked() -> None:
    assert shape("\n  \n  dx: max_diff=1.5e3 nan inf -2\nsecond") == "dx: max_diff=# # # #"
    assert shape("") == ""
    assert shape("   \n") == ""
    assert shape("x" * 300) == "x" * 200


# ------------------------------------------------------------------------------ --command
def test_a_command_run_is_judged_by_its_exit_code_as_git_bisect_run() -> None:
    p = Policy()
    assert classify(cmd(0), None, p) == (PASS, "exit 0")
    assert classify(cmd(125), None, p) == (NOISE, "exit 125 (cannot test)")
    assert classify(cmd(1), None, p) == (FAIL, "exit 1")
    assert classify(cmd(127), None, p) == (FAIL, "exit 127")
    # 128 and above: a signal; bad only when the buggy endpoint crashed too (--on-crash match)
    assert classify(cmd(128), None, p) == (FAIL, "killed by signal 0")
    assert classify(cmd(139), Signature(crash=True), p) == (FAIL, "killed by signal 11")
    assert classify(cmd(139), Signature(exit_code=1), p) == (NOISE, "killed by signal 11")
    assert classify(cmd(134), Signature(exit_code=1), Policy(on_crash=OnCrash.BAD))[0] is FAIL
    assert classify(cmd(134), None, Policy(on_crash=OnCrash.SKIP))[0] is NOISE


def test_a_command_that_times_out_is_bad_only_with_on_hang_bad() -> None:
    assert classify(cmd(0, timed_out=True), None, Policy()) == (NOISE, "timed out")
    assert classify(cmd(0, timed_out=True), None, HANG_BAD) == (FAIL, "timed out (--on-hang bad)")


def test_a_command_signature_is_its_exit_code_or_its_crash() -> None:
    p = Policy()
    assert learn(cmd(0), p) is None
    assert learn(cmd(125), p) is None
    assert learn(cmd(1), p) == Signature(exit_code=1)
    assert learn(cmd(126), p) == Signature(exit_code=126)
    assert learn(cmd(127), p) == Signature(exit_code=127)
    assert learn(cmd(128), p) == Signature(crash=True, exit_code=128)
    assert learn(cmd(139), p) == Signature(crash=True, exit_code=139)
    assert learn(cmd(139), Policy(on_crash=OnCrash.BAD)) == Signature(crash=True, exit_code=139)
    assert learn(cmd(139), Policy(on_crash=OnCrash.SKIP)) is None
    assert learn(cmd(1, timed_out=True), p) is None
    assert learn(cmd(1, timed_out=True), HANG_BAD) == Signature(hang=True)
    assert learn(cmd(1, cannot_test="no build"), p) is None
    assert learn(cmd(1, env_error="pin"), p) is None


# ------------------------------------------------------------------------------ googletest
def test_a_run_that_is_not_a_run_is_noise_with_its_reason() -> None:
    assert classify(run(t("A", F), cannot_test="did not build"), None, Policy()) == (
        NOISE,
        "did not build",
    )
    assert classify(run(t("A", F), env_error="no device"), None, Policy()) == (
        NOISE,
        "infrastructure: no device",
    )
    assert learn(run(t("A", F), cannot_test="x"), Policy()) is None
    assert learn(run(t("A", F), env_error="x"), Policy()) is None


def test_skipped_and_disabled_tests_did_not_run() -> None:
    sig = Signature(tests=("A", "B"))
    for status in (S, D):
        assert classify(run(t("A", status), t("B", status)), sig, Policy()) == (
            NOISE,
            "the signature's tests did not run",
        )
    assert classify(run(t("A", S), t("B", P)), sig, Policy()) == (PASS, "passed")


def test_a_failure_is_the_bug_when_it_fails_the_same_way() -> None:
    sig = Signature(tests=("A",), shapes=("allclose #",))
    assert classify(run(t("A", F, "allclose #")), sig, Policy()) == (FAIL, "A failed the same way")
    assert classify(run(t("A", F, "allclose #")), None, Policy()) == (FAIL, "A failed")
    # a signature without shapes (a metric's, a crash's): any failure of its tests
    assert classify(run(t("A", F, "x")), Signature(tests=("A",)), Policy())[0] is FAIL
    assert classify(run(t("A", F, "healthy #")), sig, Policy()) == (
        NOISE,
        "A failed another way: healthy #",
    )
    assert classify(run(t("A", F)), sig, Policy()) == (NOISE, "A failed another way: ?")


def test_a_crash_is_the_bug_by_on_crash() -> None:
    crashed = run(t("A", C))
    plain, crashy = Signature(tests=("A",)), Signature(tests=("A",), crash=True)
    assert classify(crashed, crashy, Policy()) == (FAIL, "A crashed")
    assert classify(crashed, None, Policy()) == (FAIL, "A crashed")
    assert classify(crashed, plain, Policy()) == (NOISE, "A crashed (not the signature)")
    assert classify(crashed, plain, Policy(on_crash=OnCrash.BAD)) == (FAIL, "A crashed")
    assert classify(crashed, crashy, Policy(on_crash=OnCrash.SKIP))[0] is NOISE


def test_a_pass_names_an_unrelated_failure() -> None:
    sig = Signature(tests=("A",))
    assert classify(run(t("A", P), t("B", F), t("C", F)), sig, Policy()) == (
        PASS,
        "passed (unrelated failure: B)",
    )
    assert classify(run(t("A", P), t("B", P)), sig, Policy()) == (PASS, "passed")


def test_learning_a_failure_signature() -> None:
    p = Policy()
    got = learn(run(t("A", F, "s1", "s2"), t("B", P), t("C", F, "s3")), p)
    assert got == Signature(tests=("A", "C"), shapes=("s1", "s2", "s3"))
    assert learn(run(t("A", C), t("B", P)), p) == Signature(tests=("A",), crash=True)
    assert learn(run(t("A", C)), Policy(on_crash=OnCrash.SKIP)) is None
    assert learn(run(t("A", P), t("B", S)), p) is None
    assert learn(run(t("A", P), timed_out=True), p) is None


# ------------------------------------------------------------------------------ a metric
LOWER = Policy(metric="max_diff", threshold=1.0)
HIGHER = Policy(metric="pcc", threshold=0.99, higher_is_better=True)


def test_a_metric_over_its_threshold_is_the_bug_and_the_worst_value_is_named() -> None:
    a = run(t("A", F, metric=3.5), t("B", F, metric=7.25), t("C", P, metric=0.5))
    assert classify(a, None, LOWER) == (FAIL, "max_diff=7.25 > 1")
    # at the threshold: not over
    assert classify(run(t("A", F, metric=1.0)), None, LOWER) == (PASS, "max_diff within 1")
    assert classify(run(t("A", P, metric=0.25)), None, LOWER) == (PASS, "max_diff within 1")


def test_a_higher_is_better_metric_is_the_bug_below_its_threshold() -> None:
    a = run(t("A", F, metric=0.5), t("B", F, metric=0.9), t("C", P, metric=0.999))
    assert classify(a, None, HIGHER) == (FAIL, "pcc=0.5 < 0.99")
    assert classify(run(t("A", F, metric=0.99)), None, HIGHER) == (PASS, "pcc within 0.99")
    assert classify(run(t("A", F, metric=2.0)), None, HIGHER)[0] is PASS
    assert learn(run(t("A", F, metric=0.5), t("B", F, metric=0.995)), HIGHER) == Signature(
        tests=("A",)
    )


def test_a_nan_metric_is_always_the_bugs_side() -> None:
    nan = float("nan")
    for policy in (LOWER, HIGHER):
        out, why_ = classify(run(t("A", F, metric=nan)), None, policy)
        assert out is FAIL and "nan" in why_
        assert learn(run(t("A", F, metric=nan)), policy) == Signature(tests=("A",))
    # NaN beside finite values, first or last: the reason names NaN, never a value within
    for order in ((nan, 0.5), (0.5, nan)):
        tests = [t(n, F, metric=v) for n, v in zip("AB", order, strict=True)]
        assert classify(run(*tests), None, LOWER) == (FAIL, "max_diff=nan > 1")
        assert classify(run(*tests), None, HIGHER) == (FAIL, "pcc=nan < 0.99")


def test_an_unmeasured_failure_is_noise_under_a_metric() -> None:
    # the test failed but printed no metric: it says nothing about the threshold
    assert classify(run(t("A", F, "x")), None, LOWER) == (NOISE, "A failed another way: x")
    assert classify(run(t("A", C)), None, LOWER) == (NOISE, "A crashed (not the signature)")
    # passed, unmeasured: a pass
    assert classify(run(t("A", P)), None, LOWER) == (PASS, "max_diff within 1")
    assert learn(run(t("A", F)), LOWER) is None
    # a metric without a threshold, or no metric: not measured
    half = Policy(metric="max_diff")
    assert learn(run(t("A", F, "x", metric=5.0)), half) is None
    assert learn(run(t("A", F, "x", metric=5.0)), Policy(threshold=1.0)) == Signature(
        tests=("A",), shapes=("x",)
    )


# ------------------------------------------------------------------------------ hangs
def test_a_hang_is_noise_unless_on_hang_bad() -> None:
    assert classify(run(t("A", T)), None, Policy()) == (NOISE, "hang")
    assert classify(run(t("A", P), timed_out=True), None, Policy()) == (NOISE, "hang")


def test_a_hang_with_on_hang_bad() -> None:
    sig = Signature(tests=("A",), hang=True)
    assert classify(run(t("A", T)), sig, HANG_BAD) == (FAIL, "A hung (--on-hang bad)")
    assert classify(run(t("A", T), hang="k1"), sig, HANG_BAD) == (
        FAIL,
        "A hung at k1 (--on-hang bad)",
    )
    assert classify(run(t("A", P), timed_out=True), None, HANG_BAD) == (
        FAIL,
        "hang (--on-hang bad)",
    )
    # another test's hang: not the signature's
    assert classify(run(t("B", T)), sig, HANG_BAD) == (
        NOISE,
        "B hung (not the signature's tests)",
    )
    assert classify(run(t("A", P), timed_out=True), sig, HANG_BAD) == (
        NOISE,
        "the run hung (not the signature's tests)",
    )
    # a signature that is not a hang: any hang of the run's tests is the bug's
    assert classify(run(t("B", T)), Signature(tests=("A",)), HANG_BAD)[0] is FAIL


def test_a_hang_at_another_place_than_the_signatures_is_noise() -> None:
    sig = Signature(tests=("A",), hang=True, hang_key="k1")
    assert classify(run(t("A", T), hang="k2"), sig, HANG_BAD) == (
        NOISE,
        "A hung elsewhere: k2 (the bug's hang: k1)",
    )
    assert classify(run(t("A", T)), sig, HANG_BAD) == (
        NOISE,
        "A hung elsewhere: no hang diagnosis (the bug's hang: k1)",
    )
    assert classify(run(t("A", T), hang="k1"), sig, HANG_BAD)[0] is FAIL


def test_hang_in_names_the_bugs_hang() -> None:
    p = Policy(on_hang=OnHang.BAD, hang_in="NCRISC")
    assert classify(run(t("A", T), hang="core ncrisc waits"), None, p) == (
        FAIL,
        "A hung at core ncrisc waits (--hang-in NCRISC)",
    )
    assert classify(run(t("A", P), timed_out=True, hang="ncrisc"), None, p) == (
        FAIL,
        "hang at ncrisc (--hang-in NCRISC)",
    )
    assert classify(run(t("A", T), hang="brisc"), None, p) == (
        NOISE,
        "A hung elsewhere: brisc (the bug's hang is in NCRISC)",
    )
    assert classify(run(t("A", P), timed_out=True), None, p) == (
        NOISE,
        "hang elsewhere: no hang diagnosis (the bug's hang is in NCRISC)",
    )


def test_learning_a_hang_signature() -> None:
    p = Policy(on_hang=OnHang.BAD, hang_in="ncrisc")
    assert learn(run(t("A", T), t("B", T), hang="ncrisc"), p) == Signature(
        tests=("A", "B"), hang=True, hang_key="ncrisc"
    )
    assert learn(run(t("A", P), timed_out=True, hang="ncrisc"), p) == Signature(
        hang=True, hang_key="ncrisc"
    )
    assert learn(run(t("A", T), hang="brisc"), p) is None  # a hang elsewhere teaches nothing
    assert learn(run(t("A", P), hang="ncrisc"), p) is None  # no hang at all
    assert learn(run(t("A", T), t("B", P), hang="k"), HANG_BAD) == Signature(
        tests=("A",), hang=True, hang_key="k"
    )
    # a gtest run that timed out with no test marked TIMEOUT: nothing to learn
    assert learn(run(t("A", P), timed_out=True), HANG_BAD) is None
    assert learn(run(t("A", T)), Policy()) is None
    assert learn(run(t("A", T), t("B", F, "s")), Policy()) == Signature(tests=("B",), shapes=("s",))


# ------------------------------------------------------------------------------ tallies, marks
def test_a_tally_counts_runs_and_keeps_every_reason() -> None:
    tally = Tally()
    tally.add([(FAIL, "a"), (PASS, "b"), (NOISE, "c"), (FAIL, "d")])
    assert (tally.fails, tally.passes, tally.noise, tally.runs) == (2, 1, 1, 3)
    assert tally.reasons == ["a", "b", "c", "d"]


def test_a_steps_mark_and_why() -> None:
    assert mark_of([NOISE, PASS, FAIL]) is Mark.BAD
    assert mark_of([NOISE, PASS]) is Mark.GOOD
    assert mark_of([NOISE]) is None
    outs = [(NOISE, "n"), (PASS, "p"), (FAIL, "f1"), (FAIL, "f2")]
    assert why(Evidence(), outs, Mark.BAD) == "f1"
    assert why(Evidence(), outs, Mark.GOOD) == "p"
    assert why(Evidence(), [(NOISE, "n1"), (NOISE, "n2")], Mark.SKIP) == "n1"
    assert why(Evidence(), [], Mark.SKIP) == "no run"
    assert why(Evidence(cannot_test="did not build"), outs, Mark.SKIP) == "did not build"
    assert (
        why(Evidence(same_as="0123456789abcdef"), outs, Mark.BAD)
        == "same inputs as 0123456789ab: its verdict, not run again"
    )


# ------------------------------------------------------------------------------ --find-fix
def test_find_fix_turns_good_and_bad_around_and_nothing_else() -> None:
    fix, plain = Sense(True), Sense(False)
    assert [fix.turn(o) for o in (FAIL, PASS, NOISE)] == [PASS, FAIL, NOISE]
    assert [plain.turn(o) for o in (FAIL, PASS, NOISE)] == [FAIL, PASS, NOISE]
    assert (fix.kind, plain.kind) == ("first fixed commit", "first bad commit")
    assert fix.ends(["g1", "g2"], "b") == ("g1", ["b"])
    assert plain.ends(["g1", "g2"], "b") == ("b", ["g1", "g2"])
    assert fix.buggy("tip", ["b0", "b1"]) == "b0"
    assert plain.buggy("tip", ["b0", "b1"]) == "tip"
    assert fix.rates((0.7, 0.25)) == (0.75, 0.30000000000000004)
    assert plain.rates((0.7, 0.25)) == (0.7, 0.25)
    e = EndpointRuns(bad_fails=7, bad_runs=10, good_fails=1, good_runs=20)
    assert plain.counts(e) == ((7, 10), (1, 20))
    assert fix.counts(e) == ((19, 20), (3, 10))


def _request(
    find_fix: bool = False, watcher_s: int | None = None, run: bool = True
) -> BisectRequest:
    oracle = (
        RunOracleSpec(backend=TtMetalSpec(checkout=Path("/src"), watcher_s=watcher_s))
        if run
        else CommandOracleSpec(argv=("true",))
    )
    return BisectRequest(
        repo=Path("/r"), good=("g",), bad="b", oracle=oracle, find_fix=find_fix, policy=HANG_BAD
    )


def test_a_meaning_is_made_of_the_request() -> None:
    m = Meaning.of(_request(find_fix=True, watcher_s=2), "b")
    assert m == Meaning(HANG_BAD, Sense(True), "b", True)
    assert Meaning.of(_request(), "b").watched is False
    assert Meaning.of(_request(run=False), "x") == Meaning(HANG_BAD, Sense(False), "x", False)
    assert Sense.of(_request(find_fix=True)) == Sense(True)


# ------------------------------------------------------------------------------ the signature
def _ev(*attempts: AttemptObs) -> Evidence:
    return Evidence(attempts=attempts)


def _step(sha: str, *attempts: AttemptObs) -> SimpleNamespace:
    return SimpleNamespace(action=SimpleNamespace(sha=sha), evidence=_ev(*attempts))


def test_the_signature_is_learned_at_the_buggy_endpoint_only() -> None:
    m = Meaning(Policy(), Sense(False), "tip")
    a = run(t("A", F, "s"))
    sig, outs = m.judge("other", _ev(a), None, [])
    assert sig is None and outs == [(FAIL, "A failed")]
    sig, outs = m.judge("tip", _ev(run(t("A", P)), a), None, [])
    assert sig == Signature(tests=("A",), shapes=("s",))
    assert outs == [(PASS, "passed"), (FAIL, "A failed the same way")]
    # known already: kept, not learned again
    old = Signature(tests=("B",))
    sig, _ = m.judge("tip", _ev(a), old, [])
    assert sig is old


def test_find_fix_turns_the_judged_runs() -> None:
    m = Meaning(Policy(), Sense(True), "tip")
    _, outs = m.judge("x", _ev(run(t("A", F)), run(t("A", P)), cmd(1, cannot_test="c")), None, [])
    assert outs == [(PASS, "A failed"), (FAIL, "passed"), (NOISE, "c")]


def test_a_hang_at_the_buggy_endpoint_must_be_seen_twice_at_one_place() -> None:
    m = Meaning(HANG_BAD, Sense(False), "tip")
    hang = run(t("A", T), hang="k1")
    sig, outs = m.judge("tip", _ev(hang), None, [])
    assert sig is None
    assert outs == [
        (
            NOISE,
            "a hang seen once at the bad endpoint: it must hang there twice at the same "
            "place to be the bug's hang",
        )
    ]
    # the second at the same place, in this step or an earlier one of the buggy endpoint
    assert m.judge("tip", _ev(hang, hang), None, [])[0] == Signature(
        tests=("A",), hang=True, hang_key="k1"
    )
    sig, outs = m.judge("tip", _ev(hang), None, [_step("tip", hang)])
    assert sig == Signature(tests=("A",), hang=True, hang_key="k1")
    assert outs == [(FAIL, "A hung at k1 (--on-hang bad)")]
    # an earlier hang of another commit, or at another place, does not count
    assert m.judge("tip", _ev(hang), None, [_step("other", hang)])[0] is None
    other_place = run(t("A", T), hang="k2")
    assert m.judge("tip", _ev(hang), None, [_step("tip", other_place)])[0] is None
    # two at different places: neither is the bug's
    assert m.judge("tip", _ev(hang, other_place), None, [])[0] is None


def test_a_hang_the_watcher_does_not_place_is_held_back() -> None:
    watched = Meaning(HANG_BAD, Sense(False), "tip", watched=True)
    unplaced = run(t("A", T))
    sig, outs = watched.judge("tip", _ev(unplaced), None, [])
    assert sig is None
    assert outs == [
        (
            NOISE,
            "a hang at the bad endpoint that the watcher log does not place (no complete "
            "dump before the timeout?): run again; a longer --timeout lets the watcher "
            "write one",
        )
    ]
    assert watched.judge("tip", _ev(run(t("A", P), timed_out=True)), None, [])[1][0][0] is NOISE
    # a failure at the buggy endpoint is learned as ever, the held hang beside it not
    sig, outs = watched.judge("tip", _ev(unplaced, run(t("A", F, "s"))), None, [])
    assert sig == Signature(tests=("A",), shapes=("s",))
    assert [o for o, _ in outs] == [FAIL, FAIL]
    # without the watcher an unplaced hang is the bug's at once
    plain = Meaning(HANG_BAD, Sense(False), "tip")
    assert plain.judge("tip", _ev(unplaced), None, [])[0] == Signature(tests=("A",), hang=True)
    # with --hang-in, nothing is held: the place is given
    given = Meaning(Policy(on_hang=OnHang.BAD, hang_in="k1"), Sense(False), "tip", watched=True)
    sig, outs = given.judge("tip", _ev(run(t("A", T), hang="k1")), None, [])
    assert sig == Signature(tests=("A",), hang=True, hang_key="k1")
    assert outs[0][0] is FAIL
    sig, outs = given.judge("tip", _ev(run(t("A", T), hang="k2")), None, [])
    assert sig is None and outs[0][0] is NOISE and "elsewhere" in outs[0][1]
    # without --on-hang bad a hang is noise, never held
    skip = Meaning(Policy(), Sense(False), "tip", watched=True)
    assert skip.judge("tip", _ev(unplaced), None, []) == (None, [(NOISE, "hang")])


def test_nan_formats_as_nan_in_a_reason() -> None:
    assert math.isnan(float("nan"))  # the reason of a NaN-only run names nan, not a number
    out, reason = classify(run(t("A", F, metric=float("nan"))), None, LOWER)
    assert (out, reason) == (FAIL, "max_diff=nan > 1")


def test_the_noise_reason_names_the_test_that_did_not_pass() -> None:
    sig = Signature(tests=("A", "B"), shapes=("s",))
    assert classify(run(t("A", P), t("B", F, "other")), sig, Policy()) == (
        NOISE,
        "B failed another way: other",
    )


def test_a_run_without_a_hang_is_judged_at_once_even_with_the_watcher_on() -> None:
    watched = Meaning(HANG_BAD, Sense(False), "tip", watched=True)
    assert watched.judge("tip", _ev(run(t("A", P))), None, []) == (None, [(PASS, "passed")])
