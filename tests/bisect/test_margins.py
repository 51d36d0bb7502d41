"""Margin evidence (issue 47): a bug whose test never fails is bisected by how much of its
tolerance each run used. The loop in process (tests/bisect/scripted.py), the emulator's reports,
the densities."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from lnrepro.bisect.margins import MarginMode, choose, decide, log_margin
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


def test_margin_off_cannot_bisect_a_bug_whose_test_never_fails() -> None:
    run = bisect(linear(16), masked(9), good="c0", bad="c15", confidence=0.95, margin=Margin.OFF)
    r = run.record.result
    assert r is not None and r.first_bad is None
    assert r.error is not None and "showed no failure" in r.error
    assert r.margin == "--margin off: verdicts only"


def test_margins_that_match_neither_endpoint_are_flagged_as_drift() -> None:
    run = bisect(linear(64), masked(40, drift_from=20), good="c0", bad="c63", confidence=0.95)
    r = run.record.result
    assert r is not None and r.drifted and all(20 <= index(c) < 40 for c in r.drifted)
    flagged = [s for s in run.record.steps if "drift:" in s.reason]
    assert flagged and all(s.sha in r.drifted for s in flagged)


def test_margins_that_carry_nothing_are_not_used() -> None:
    rng = random.Random(3)
    same = [({"q": 10 ** rng.gauss(-1, 0.3)}, False) for _ in range(10)]
    d = decide(MarginMode.AUTO, same[:5], same[5:])
    assert not d.on and "do not separate" in d.why
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
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real history whose commits pick the emulated kernel (fixed, then shipped from c3 on);
    ``--command`` runs the emulator as the gtest binary: its NIGHTLY test passes at every
    commit, and lnrepro reads dx's share of its tolerance from the JSON report GTEST_OUTPUT
    asked for."""
    import sys

    from lnrepro.cli import main as cli_main
    from tests.bisect.scripted import git

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
    code = cli_main(
        [
            "bisect", "--repo", str(repo), "--good", shas[0], "--bad", shas[-1],
            "--confidence", "0.95", "--command", f"sh {script}", "--json",
        ]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads(out)
    r = doc["result"]
    assert r["first_bad"] == shas[3]
    assert r["margin"].startswith("--margin auto: on, LayerNormBackwardOpTest.NIGHTLY")
    assert "/dx:" in r["margin"]  # dx separates; dgamma is the same at both kernels
    assert all(o[0] == "pass" for s in doc["steps"] for o in s["outcomes"])  # never failed
