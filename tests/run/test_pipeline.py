"""lnrepro run's core, for real: emulator and real gtest binaries, timeouts, records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lnrepro import api
from lnrepro.errors import ExitCode
from lnrepro.model.events import Events
from lnrepro.model.gtest import TestResult, TestStatus
from lnrepro.model.record import Verdict
from lnrepro.model.requests import BinarySpec, EmulatorSpec, RunRequest, TestSpec
from tests.harness import assert_one_line_error, lnrepro

SMALL = "*OneTile:*Deterministic_2048Features"


class Recorder(Events):
    def __init__(self) -> None:
        self.log: list[str] = []

    def attempt_started(self, index: int, total: int, argv: list[str]) -> None:
        self.log.append(f"attempt {index}/{total}")

    def test_started(self, name: str) -> None:
        self.log.append(f"start {name}")

    def test_finished(self, result: TestResult) -> None:
        self.log.append(f"end {result.name} {result.status.value}")


def test_emulator_repeats_aggregate_and_record(tmp_path: Path) -> None:
    ev = Recorder()
    rec = api.run(
        RunRequest(
            backend=EmulatorSpec(data="random", seed=5),
            tests=TestSpec(gtest_filter=SMALL, repeat=3),
            record_dir=tmp_path,
        ),
        ev,
    )
    by = {t.name.split(".")[1]: t for t in rec.tests}
    one, det = by["MetalLayerNormBw_OneTile"], by["BugRepro_Deterministic_2048Features"]
    assert det.verdict is Verdict.FAIL and det.runs == 3 and det.passed == 0
    assert det.worst["dx"]["max_diff"] == 1000.0
    assert one.verdict is Verdict.PASS and (one.passed, one.runs) == (3, 3)
    assert one.pass_rate_ci95 == (pytest.approx(0.43850, abs=1e-5), 1.0)  # Wilson 95% for 3 of 3
    assert not rec.ok
    assert (
        ev.log[0] == "attempt 1/3"
        and "start LayerNormBackwardOpTest.MetalLayerNormBw_OneTile" in ev.log
    )
    files = sorted(p.name for p in rec.record_dir.iterdir())
    assert files == [
        "attempt-1.json",
        "attempt-1.log",
        "attempt-2.json",
        "attempt-2.log",
        "attempt-3.json",
        "attempt-3.log",
        "record.json",
    ]
    doc = json.loads((rec.record_dir / "record.json").read_text())
    assert (
        doc["schema"] == "lnrepro.run/5"
        and doc["id"] == Path(doc["record_dir"]).name
        and doc["backend"]["defect"] == "shipped"
    )
    assert [next(x for x in a["argv"] if x.startswith("--emu_seed")) for a in doc["attempts"]] == [
        "--emu_seed=5",
        "--emu_seed=6",
        "--emu_seed=7",
    ]
    # a second run never touches the first record
    rec2 = api.run(
        RunRequest(
            backend=EmulatorSpec(defect="none", data="random", seed=5),
            tests=TestSpec(gtest_filter=SMALL),
            record_dir=tmp_path,
        )
    )
    assert rec2.record_dir != rec.record_dir and rec2.ok
    assert json.loads((rec.record_dir / "record.json").read_text()) == doc


def test_real_gtest_binary_timeout_and_crash(tmp_path: Path, gtest_binary: Path) -> None:
    rec = api.run(
        RunRequest(
            backend=BinarySpec(binary=gtest_binary),
            tests=TestSpec(gtest_filter="Crash.Hang", timeout_s=1.5),
            record_dir=tmp_path,
        )
    )
    [t] = rec.tests
    assert t.verdict is Verdict.HANG and t.statuses == {"TIMEOUT": 1}
    assert rec.attempts[0].timed_out and rec.attempts[0].exit_code == 124
    assert "hanging" in (rec.record_dir / "attempt-1.log").read_text()
    crash = rec.attempts[0].tests[0].crash
    assert crash is not None and "killed by lnrepro after the 1.5 s timeout" in crash.reason
    rec = api.run(
        RunRequest(
            backend=BinarySpec(binary=gtest_binary),
            tests=TestSpec(gtest_filter="Crash.Segfault", repeat=2),
            record_dir=tmp_path,
        )
    )
    [t] = rec.tests
    assert t.statuses == {"CRASHED": 2}
    assert rec.attempts[0].tests[0].crash.signal == "SIGSEGV"  # type: ignore[union-attr]


def test_real_gtest_binary_mixed_results(tmp_path: Path, gtest_binary: Path) -> None:
    rec = api.run(
        RunRequest(
            backend=BinarySpec(binary=gtest_binary),
            tests=TestSpec(gtest_filter="Basic.*:Numbers/*"),
            record_dir=tmp_path,
        )
    )
    by = {t.name: t for t in rec.tests}
    assert by["Basic.Passes"].verdict is Verdict.PASS
    assert by["Basic.PrintsMetrics"].worst["dx"]["max_diff"] == 1000.0
    assert by["Basic.Skips"].verdict is Verdict.SKIP
    assert by["Basic.DISABLED_NeverRuns"].verdict is Verdict.SKIP


def test_every_outcome_is_a_record_that_says_what_happened(tmp_path: Path) -> None:
    """Outcomes that say nothing about the kernel are verdicts with a why, never exceptions."""
    rec = api.run(
        RunRequest(
            backend=BinarySpec(binary=Path("/bin/true")),
            tests=TestSpec(),
            record_dir=tmp_path / "a",
        )
    )
    assert rec.verdict is Verdict.NOT_RUN and "no googletest output" in (rec.why or "")
    doc = json.loads((rec.record_dir / "record.json").read_text())
    assert (
        doc["state"] == "complete" and doc["verdict"] == "NOT_RUN" and "attempt-1.log" in doc["why"]
    )
    rec = api.run(
        RunRequest(
            backend=EmulatorSpec(),
            tests=TestSpec(gtest_filter="Nothing.*"),
            record_dir=tmp_path / "b",
        )
    )
    assert rec.verdict is Verdict.NOT_RUN and rec.missing == ["Nothing.*"]
    rec = api.run(
        RunRequest(
            backend=BinarySpec(binary=tmp_path / "missing"),
            tests=TestSpec(),
            record_dir=tmp_path / "c",
        )
    )
    assert rec.verdict is Verdict.BUILD_FAILED and "no test binary at" in (rec.why or "")


def test_requested_tests_that_are_missing_are_never_a_bare_pass(tmp_path: Path) -> None:
    """The default filter on a checkout without the BugRepro tests: NIGHTLY passes, and the run
    says which tests are missing, where they live and how to get them (exit 5, not 0)."""
    req = RunRequest(
        backend=EmulatorSpec(),
        tests=TestSpec(gtest_filter="LayerNormBackwardOpTest.BugRepro_Nope*:*NIGHTLY*"),
        record_dir=tmp_path,
    )
    rec = api.run(req)
    assert rec.verdict is Verdict.PASS and rec.incomplete
    assert rec.missing == ["LayerNormBackwardOpTest.BugRepro_Nope*"]
    assert "16165972af" in rec.notes[0] and "git fetch origin" in rec.notes[0]
    from lnrepro.cli.run import exit_code

    assert exit_code(rec) == ExitCode.ENVIRONMENT and exit_code(rec, bisect_protocol=True) == 125


def test_cli_run_reproduces_the_seed_table(tmp_path: Path) -> None:
    """The README's first command: BugRepro fails near 1000, NIGHTLY passes; the fixed era passes."""
    p = lnrepro("run", "--json", cwd=tmp_path)
    assert p.returncode == ExitCode.FAILED, p.stderr
    doc = json.loads(p.stdout)
    verdicts = {t["name"].split(".")[1]: t for t in doc["tests"]}
    assert verdicts["NIGHTLY_MetalLayerNormBw_LargeFeatures_NoL1Fit"]["verdict"] == "PASS"
    det = [v for k, v in verdicts.items() if k.startswith("BugRepro_Deterministic_")]
    assert len(det) == 5 and all(v["verdict"] == "FAIL" for v in det)
    # constant inputs: rstd = 1000 times the extra mean(dy*gamma) = 1, exactly in bf16 — except
    # 8462 features, where the bf16-truncated 1/N scaler makes it 1000*|1 - 2*8462*s| = 992
    want = {
        k: 992.0 if "8462" in k else 1000.0
        for k in verdicts
        if k.startswith("BugRepro_Deterministic_")
    }
    assert {k: verdicts[k]["worst_metrics"]["dx"]["max_diff"] for k in want} == want
    assert verdicts["BugRepro_Deterministic_256Tiles"]["worst_metrics"]["dx"][
        "mean_diff"
    ] == pytest.approx(1004.21, abs=0.01)
    assert (
        doc["state"] == "complete"
        and doc["backend"]["data"] == "copy"
        and doc["backend"]["seed"] is None
    )
    tight = [v for k, v in verdicts.items() if k.startswith("BugRepro_TightTolerance_")]
    assert len(tight) == 2 and all(v["verdict"] == "FAIL" for v in tight)
    assert (tmp_path / ".lnrepro" / "runs").is_dir()
    p = lnrepro("run", "--kernel-era", "fixed", "--markdown", cwd=tmp_path)
    assert p.returncode == ExitCode.OK, p.stderr
    assert (
        p.stdout.count("| **PASS** |") == 8
        and "lnrepro run --backend emulator --kernel-era fixed" in p.stdout
    )
    assert "All 8 test(s) pass (run verdict **PASS**)" in p.stdout


def test_cli_run_usage_errors(tmp_path: Path) -> None:
    usage = ExitCode.USAGE
    assert_one_line_error(lnrepro("run", "--defect", "typo", cwd=tmp_path), usage, "unknown defect")
    assert_one_line_error(lnrepro("run", "--backend", "local", cwd=tmp_path), usage, "--binary")
    p = lnrepro("run", "--backend", "tt-metal", cwd=tmp_path, env={"TT_METAL_HOME": ""})
    assert_one_line_error(p, usage, "--tt-metal DIR or set TT_METAL_HOME")
    p = lnrepro("run", "--runner", "local", cwd=tmp_path)
    assert_one_line_error(p, usage, "--runner only applies with --backend tt-metal")
    p = lnrepro("run", "--filter", "Nope.*", cwd=tmp_path)
    assert p.code == ExitCode.ENVIRONMENT and p.err.count("\n") == 1, p.err  # a verdict: NOT_RUN
    assert p.err.startswith("lnrepro: NOT_RUN: no test matches Nope.*"), p.err


def test_status_enum_is_stable() -> None:
    assert [s.value for s in TestStatus] == [
        "PASSED",
        "FAILED",
        "SKIPPED",
        "DISABLED",
        "CRASHED",
        "TIMEOUT",
    ]


def test_a_non_finite_metric_is_recorded_in_strict_json(tmp_path: Path) -> None:
    """``max_diff=inf`` used to end the run with an internal error and lose its record."""
    prog = tmp_path / "gt"
    prog.write_text(
        "#!/bin/sh\necho '[ RUN      ] S.T'\necho 'dx FAILED: max_diff=inf, mean_diff=nan'\n"
        "echo 'x.cpp:1: Failure'\necho 'Value of: dx_close'\necho '[  FAILED  ] S.T (1 ms)'\nexit 1\n"
    )
    prog.chmod(0o755)
    rec = api.run(
        RunRequest(
            backend=BinarySpec(binary=prog),
            tests=TestSpec(gtest_filter="S.*"),
            record_dir=tmp_path / "runs",
        )
    )
    assert rec.verdict is Verdict.FAIL and rec.tests[0].worst["dx"]["max_diff"] == float("inf")
    text = (rec.record_dir / "record.json").read_text()
    doc = json.loads(text, parse_constant=lambda c: pytest.fail(f"bare {c} in the record"))
    assert doc["tests"][0]["worst_metrics"]["dx"] == {"max_diff": "Infinity", "mean_diff": "NaN"}


@pytest.mark.parametrize("hang", [False, True])
def test_a_watcher_log_is_a_hang_only_when_something_is_stuck_or_the_attempt_timed_out(
    tmp_path: Path, hang: bool
) -> None:
    """A failed attempt keeps its watcher log; it is called a hang only when the attempt timed
    out or the log shows a kernel that does not move (else `run` printed "hang: IDLE")."""
    prog = tmp_path / "gt"
    prog.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do case "$a" in --gtest_output=json:*) out="${a#--gtest_output=json:}";; esac; done\n'
        'printf \'At 0.100s starting\\nAt 0.100s attach device 0\\n\' > "$(dirname "$out")/attempt-1.watcher.log"\n'
        "echo '[ RUN      ] S.T'\n"
        + ("exec sleep 30\n" if hang else "echo '[  FAILED  ] S.T (1 ms)'\nexit 1\n")
    )
    prog.chmod(0o755)
    rec = api.run(
        RunRequest(
            backend=BinarySpec(binary=prog),
            tests=TestSpec(gtest_filter="S.*", timeout_s=2),
            record_dir=tmp_path / "runs",
        )
    )
    [a] = rec.attempts
    assert a.extra_files == {"watcher": "attempt-1.watcher.log"}
    assert a.timed_out is hang and (a.hang is not None) is hang
    if hang:
        assert a.hang is not None and not a.hang.hung  # no dump: the log cannot tell, and says so
