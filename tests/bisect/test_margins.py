"""Margin evidence (issue 47): a bug whose test never fails is bisected by how much of its
tolerance each run used. The loop in process (tests/bisect/scripted.py), the emulator's reports,
the densities."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from lnrepro.bisect.margins import (
    DRIFT_ODDS,
    LEVEL,
    LEVEL_IMPLIED,
    MarginMode,
    MarginModel,
    RunMargins,
    Separation,
    cannot_separate,
    choose,
    decide,
    level_of,
    log_margin,
    u_critical,
)
from lnrepro.emulator.gtest_main import main as emulator
from lnrepro.gtest.reportfile import read_report
from lnrepro.model.bisect import AttemptObs
from lnrepro.model.requests import Margin
from tests.bisect.scripted import bisect, index
from tests.bisect.test_core import linear

# the NIGHTLY test's dx at the shipped and the fixed kernel (issue 47: share of tolerance used)
SHIPPED, FIXED = 0.113, 0.027


def masked(culprit: int, drift_from: int | None = None):  # type: ignore[no-untyped-def]
    """Every run passes; dx's margin tells the sides apart, dgamma's does not."""

    def script(sha: str, n: int) -> AttemptObs:
        rng = random.Random(f"{sha}:{n}")
        bad = index(sha) >= culprit
        dx = (SHIPPED if bad else FIXED) * 10 ** rng.gauss(0, 0.01)
        if drift_from is not None and index(sha) >= drift_from and not bad:
            dx = (SHIPPED * FIXED) ** 0.5  # half-way, in log
        return AttemptObs(
            exit_code=0, gtest=False, margins={"N/dx": dx, "N/dgamma": 0.5056 + 1e-4 * rng.random()}
        )

    return script


def test_a_masked_bug_is_bisected_on_the_margin_in_about_gits_runs() -> None:
    run = bisect(linear(64), masked(37), good="c0", bad="c63", confidence=0.95)
    r = run.record.result
    assert r is not None and r.first_bad == "c37"
    assert r.margin is not None and r.margin.startswith("--margin auto: on, N/dx")
    steps = run.record.steps
    ends = [s for s in steps if s.sha in ("c0", "c63")]
    assert len(ends) == 10  # five runs of each endpoint teach the margins
    assert len(steps) - len(ends) <= 8  # git: log2(63) = 6 runs
    assert r.drifted == ()
    # every run passed: each step's "why" says what its margin said, and on which side
    for s in (s for s in steps if s.sha not in ("c0", "c63")):
        side = "buggy-like" if index(s.sha) >= 37 else "clean-like"
        assert "dx used " in s.reason and s.reason.endswith(f": {side}"), s.reason


def test_margin_off_cannot_bisect_a_bug_whose_test_never_fails() -> None:
    from lnrepro.errors import EndpointsDoNotSeparate
    from tests.bisect.scripted import ScriptedOracle, made_up, request, start

    req = request("c0", "c15", confidence=0.95, margin=Margin.OFF)
    run = start(made_up(linear(16), req), req, ScriptedOracle(masked(9)))
    with pytest.raises(EndpointsDoNotSeparate, match="showed no failure of the bug"):
        run.run()
    r = run.record.result
    assert r is not None and r.first_bad is None
    assert r.error is not None and "showed no failure" in r.error
    assert r.margin == "--margin off: verdicts only"


def test_margins_that_match_neither_endpoint_are_flagged_as_drift() -> None:
    run = bisect(linear(64), masked(40, drift_from=20), good="c0", bad="c63", confidence=0.95)
    r = run.record.result
    assert r is not None and r.drifted and all(20 <= index(c) < 40 for c in r.drifted)
    # every run passes: a drifted commit's margin, unlike the buggy endpoint's, is counted
    # DRIFT_ODDS likelier clean, so the commits between the drift and the culprit are placed
    assert r.first_bad == "c40"
    flagged = [s for s in run.record.steps if "drift:" in s.reason]
    assert flagged and all(s.sha in r.drifted for s in flagged)
    # and the end of the bisect says so, on the console and in the report's Markdown
    import io

    from rich.console import Console

    from lnrepro.present.console.bisect import render_bisect
    from lnrepro.present.markdown import bisect_markdown

    buf = io.StringIO()
    render_bisect(run.record, Console(file=buf, width=200, force_terminal=False))
    said = f"drift: {len(r.drifted)} commit(s) whose margins matched neither endpoint"
    assert said in buf.getvalue() and r.drifted[0][:12] in buf.getvalue().split(said)[1]
    assert r.margin and f"margins: {r.margin}" in " ".join(buf.getvalue().split())
    md = bisect_markdown(run.record)
    assert f"Drift: {len(r.drifted)} commit(s) whose margins matched neither endpoint" in md
    assert all(c[:12] in md.split("Drift:")[1].splitlines()[0] for c in r.drifted)


def test_margins_that_carry_nothing_are_not_used() -> None:
    rng = random.Random(3)
    same = [({"q": 10 ** rng.gauss(-1, 0.3)}, False) for _ in range(10)]
    d = decide(MarginMode.AUTO, same[:5], same[5:])
    assert not d.on and d.why.endswith("verdicts only") and "overlap" in d.why
    sep = choose(
        [({"q": 0.11}, False), ({"q": 0.12}, False)], [({"q": 0.027}, False), ({"q": 0.026}, False)]
    )
    assert sep[0].nats > 3
    assert decide(MarginMode.AUTO, [({}, False)] * 5, [({}, False)] * 5).why.endswith(
        "verdicts only"
    )
    assert log_margin(float("nan")) > log_margin(1e3) > log_margin(0.0)


def test_the_emulators_reports_keep_each_tensors_margin_for_passing_tests(
    tmp_path: Path, capsys: object
) -> None:
    for kind in ("json", "xml"):
        out = tmp_path / f"r.{kind}"
        code = emulator(["--gtest_filter=*OneTile", f"--gtest_output={kind}:{out}"])
        assert code == 0
        [t] = read_report(out).tests
        assert t.status.value == "PASSED"
        assert set(t.metrics) == {"dx", "dgamma", "dbeta"}
        assert 0 < t.metrics["dx"]["used"] < 1 and t.metrics["dx"]["atol"] == 0.5
        assert np.isclose(t.metrics["dx"]["max_diff"], t.metrics["dx"]["used"] * 0.5, rtol=0.01)
    doc = json.loads((tmp_path / "r.json").read_text())
    case = doc["testsuites"][0]["testsuite"][0]
    assert isinstance(case["dx.used"], str)  # googletest writes every property as a string


def test_end_to_end_the_emulators_nightly_test_passes_everywhere_and_the_culprit_is_named(
    tmp_path: Path,
) -> None:
    """A real history whose commits pick the emulated kernel (fixed, then shipped from c3 on);
    ``--command`` runs the emulator as the gtest binary: its NIGHTLY test passes at every
    commit, and lnrepro reads dx's share of its tolerance from the JSON report GTEST_OUTPUT
    asked for."""
    import sys

    from tests.bisect.scripted import git
    from tests.harness import lnrepro

    repo = tmp_path / "r"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    shas = []
    for i in range(6):
        (repo / "era").write_text("2025-12" if i >= 3 else "fixed")
        (repo / "n").write_text(str(i))
        git(repo, "add", "-A")
        git(repo, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-qm", f"c{i}")
        shas.append(git(repo, "rev-parse", "HEAD").strip())
    script = repo.parent / "nightly.sh"
    script.write_text(
        f'exec {sys.executable} -m lnrepro.emulator --gtest_filter="*NIGHTLY*" '
        '--emu_kernel="$(cat era)" >/dev/null\n'
    )
    ran = lnrepro(
        "bisect", "--repo", repo, "--good", shas[0], "--bad", shas[-1],
        "--confidence", "0.95", "--command", f"sh {script}", "--json",
    )  # fmt: skip
    assert ran.code == 0, ran.err
    doc = json.loads(ran.out)
    r = doc["result"]
    assert r["first_bad"] == shas[3]
    assert r["margin"].startswith("--margin auto: on, LayerNormBackwardOpTest.NIGHTLY")
    assert "/dx:" in r["margin"]  # dx separates; dgamma is the same at both kernels
    assert all(o[0] == "pass" for s in doc["steps"] for o in s["outcomes"])  # never failed


# ---------------------------------------------------------------------- the rules, one by one


def test_the_rank_tests_critical_values_are_exact() -> None:
    # 5+5 runs from one distribution: 252 orderings; U = 0 (or 25) in 2 of them, U <= 1 in 4,
    # U <= 4 in 2 * 12: at 1% only a complete separation passes, at 10% up to 4 pairs reversed
    assert u_critical(5, 5, 0.01) == 0
    assert u_critical(5, 5, 0.05) == 2
    assert u_critical(5, 5, 0.1) == 4
    assert u_critical(2, 2, 0.1) == -1  # 2+2: a complete separation happens 1 time in 3
    assert (LEVEL, LEVEL_IMPLIED) == (0.01, 0.1)


def test_the_level_is_strict_unless_the_margin_implies_the_verdict() -> None:
    failed_below_one = [(-1.0, True), (-1.1, False)]  # failed with a margin under 1: apart
    assert level_of(failed_below_one, [(-1.2, False)]) == LEVEL
    implied = [(0.3, True), (-0.4, False)]
    assert level_of(implied, [(-1.6, False), (0.2, True)]) == LEVEL_IMPLIED


def flaky_runs(good_fail: bool) -> tuple[list[RunMargins], list[RunMargins]]:
    """A 70%/5% bug's endpoint runs whose dx implies the verdict (over 1: failed)."""
    bad = [({"dx": v}, v > 1) for v in (2.0, 1.8, 0.4, 2.2, 0.35)]
    good = [({"dx": v}, v > 1) for v in (0.025, 0.02, 0.03, 0.028)]
    good.append(({"dx": 1.9 if good_fail else 0.022}, good_fail))  # over 3 bad runs
    return bad, good


def test_a_clean_endpoints_rare_failure_among_the_buggy_runs_does_not_turn_margins_off() -> None:
    for good_fail in (False, True):
        d = decide(MarginMode.AUTO, *flaky_runs(good_fail))
        assert d.on, d.why
        assert d.model is not None and d.model.implied
        assert "implies the verdict" in d.why
    # the same five runs with dx apart from the verdict (a run failed under 1): 1% level,
    # and one reversed pair no longer passes
    bad, good = flaky_runs(True)
    apart = [({"dx": m["dx"]}, not f) for m, f in bad]
    assert not decide(MarginMode.AUTO, apart, good).on


def test_endpoints_that_never_share_a_verdict_still_separate_on_the_margin() -> None:
    """A buggy endpoint failing 5 of 5 against a clean one passing 5 of 5: no verdict in common,
    yet dx tells a buggy commit's rare pass from a clean one's."""
    bad = [({"dx": v}, True) for v in (2.0, 1.8, 1.5, 2.2, 2.4)]
    good = [({"dx": v}, False) for v in (0.025, 0.02, 0.03, 0.028, 0.022)]
    d = decide(MarginMode.AUTO, bad, good)
    assert d.on and d.separations[0].nats > 3


def test_endpoint_runs_stop_once_no_quantity_can_separate() -> None:
    # after 2+1 runs: the good run's margin between the two bad ones reverses a pair each way;
    # beside the verdict (a run failed under 1), only a complete separation would pass
    bad = [({"q": 0.1}, True), ({"q": 0.3}, False)]
    assert cannot_separate(bad, [({"q": 0.2}, False)])
    assert not cannot_separate(bad, [({"q": 0.05}, False)])  # still apart: keep learning
    # a margin that implies the verdict is given its 10% level: not yet ruled out
    implied = [({"q": 0.1}, False), ({"q": 0.3}, False)]
    assert not cannot_separate(implied, [({"q": 0.2}, False)])


def nothing(culprit: int):  # type: ignore[no-untyped-def]
    """70%/5% verdicts of their own; a margin alike at both sides, apart from the verdict."""

    def script(sha: str, n: int) -> AttemptObs:
        rng = random.Random(f"{sha}:{n}")
        fails = rng.random() < (0.7 if index(sha) >= culprit else 0.05)
        return AttemptObs(
            exit_code=int(fails), gtest=False, margins={"N/dgamma": 10 ** rng.gauss(-1, 0.3)}
        )

    return script


def test_margins_that_carry_nothing_cost_few_endpoint_runs_and_say_so() -> None:
    ends, offs = [], 0
    for culprit in (9, 17, 23):
        run = bisect(linear(32), nothing(culprit), good="c0", bad="c31", confidence=0.9)
        r = run.record.result
        assert r is not None and r.margin is not None
        assert r.margin.startswith("--margin auto: off") and r.margin.endswith("verdicts only")
        offs += "overlap after" in r.margin  # decided before 5+5 runs
        learn = [s for s in run.record.steps[:10] if s.sha in ("c0", "c31")]
        ends.append(len(learn))
    assert offs >= 2 and sum(ends) < 3 * 8


def test_a_verdict_one_side_never_showed_counts_at_most_twice_its_verdict() -> None:
    bad = tuple((x, x > 0) for x in (0.3, 0.32, 0.28, -0.4, 0.31))
    good = tuple((x, False) for x in (-1.6, -1.55, -1.62, -1.58, -1.6))  # never failed
    m = MarginModel("dx", bad, good, implied=True)
    like = m.loglik(10**0.3, True)  # a failure like the buggy endpoint's failures
    assert like is not None and 0 < like[0] - like[1] <= np.log(2) + 1e-9
    unlike = m.loglik(10**0.9, True)  # a failure unlike them: nothing either way
    assert unlike is not None and unlike[0] - unlike[1] == pytest.approx(0.0)
    clean = m.loglik(10**-1.6, False)  # a pass like the clean ones: seen at both, compared
    assert clean is not None and clean[1] - clean[0] > 3


def test_a_margin_matching_neither_side_counts_for_the_clean_side_only_where_implied() -> None:
    bad = tuple((x, False) for x in (-0.97, -0.95, -1.0, -0.96, -0.98))
    good = tuple((x, False) for x in (-1.57, -1.56, -1.58, -1.57, -1.57))
    halfway = 10**-1.27
    assert MarginModel("dx", bad, good, implied=True).loglik(halfway, False) is None
    lb, lg = MarginModel("dx", bad, good, implied=True).drift_loglik()
    assert lg - lb == pytest.approx(np.log(DRIFT_ODDS))


def flaky_bug(culprit: int):  # type: ignore[no-untyped-def]
    """dx implies the verdict (over 1: failed). The buggy endpoint fails its first five runs
    and passes its sixth; other buggy commits fail, pass, fail...; clean ones pass near 0.025."""

    def script(sha: str, n: int) -> AttemptObs:
        jitter = 10 ** random.Random(f"{sha}:{n}").gauss(0, 0.03)
        if index(sha) < culprit:
            dx = 0.025 * jitter
        elif sha == "c31":
            dx = (2.0 if n < 5 else 0.4) * jitter
        else:
            dx = (2.0 if n % 2 == 0 else 0.4) * jitter
        return AttemptObs(exit_code=int(dx > 1), gtest=False, margins={"N/dx": dx})

    return script


def test_a_buggy_endpoint_that_only_failed_gets_more_runs_to_show_its_pass() -> None:
    """3+3 runs with no verdict in common: the buggy endpoint is run (up to 7 of the 10) until
    it passes, so a buggy commit's pass can be told from a clean one's."""
    run = bisect(linear(32), flaky_bug(20), good="c0", bad="c31", confidence=0.95)
    r = run.record.result
    assert r is not None and r.first_bad == "c20"
    learn = [s.sha for s in run.record.steps[:10]]
    assert learn[:6] == ["c31", "c0"] * 3
    assert learn[6:9] == ["c31"] * 3  # its 4th, 5th and (passing) 6th run
    assert learn[9] == "c0"  # both verdicts seen: back in turn, 10 runs in all
    assert r.margin is not None and "(6+4 runs;" in r.margin


def test_a_separations_sentence_gives_one_number_where_the_runs_agree() -> None:
    """`dx: 0.113 at the bad endpoint`, never `0.113-0.113`: a range only where it is one."""
    same = tuple((np.log10(0.1131), True) for _ in range(3))
    spread = ((np.log10(0.0131), True), (np.log10(0.0142), True))
    text = Separation("dx", 2.0, same, spread, compared=5).describe()
    assert text.startswith("dx: 0.113 at the bad endpoint, 0.0131-0.0142 at the good one"), text
