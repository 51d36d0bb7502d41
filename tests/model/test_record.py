"""The run record's rules, derived once on the type, and the record both ways (to and from JSON)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lnrepro import options
from lnrepro.errors import InputError
from lnrepro.hang.model import Diagnosis
from lnrepro.model import jsonio
from lnrepro.model.gtest import CrashInfo, Failure, TestResult, TestStatus
from lnrepro.model.record import (
    PROCESS_EXIT,
    Attempt,
    AttemptDoc,
    BuildResult,
    Inputs,
    RunRecord,
    Seen,
    TestAggregate,
    Verdict,
)
from lnrepro.model.requests import EmulatorSpec, RunRequest, TestSpec

from .strategies import for_type, same


def attempt(
    i: int, *tests: tuple[str, TestStatus], exit_code: int = 0, env: str | None = None
) -> Attempt:
    results = []
    for name, status in tests:
        t = TestResult(name=name, status=status, duration_ms=5.0)
        if status is TestStatus.FAILED:
            t.failures.append(
                Failure(file="t.cpp", line=9, message="dx FAILED: max_diff=inf, mean_diff=nan")
            )
            t.add_metric("dx", "max_diff", float("inf"))
            t.add_metric("dx", "mean_diff", float("nan"))
        if status is TestStatus.CRASHED:
            t.crash = CrashInfo(
                exit_code=139, signal="SIGSEGV", reason="segmentation fault (exit 139)"
            )
        results.append(t)
    return Attempt(
        index=i,
        argv=["prog"],
        exit_code=exit_code,
        timed_out=False,
        seconds=1.0,
        log=f"attempt-{i}.log",
        tests=results,
        env_error=env,
    )


def record(*attempts: Attempt, build: BuildResult | None = None) -> RunRecord:
    req = RunRequest(
        backend=EmulatorSpec(seed=3, data="random"),
        tests=TestSpec(gtest_filter="S.*", repeat=len(attempts) or 1),
        record_dir=Path("/r"),
    )
    return RunRecord(
        request=req,
        rerun=options.argv(req),
        record_dir=Path("/r/run-1"),
        attempts=list(attempts),
        build=build,
    )


P, F, C = TestStatus.PASSED, TestStatus.FAILED, TestStatus.CRASHED


def test_a_crash_after_every_test_passed_is_not_pass() -> None:
    rec = record(attempt(1, ("S.a", P), ("S.b", P), exit_code=139))
    assert rec.verdict is Verdict.CRASH
    [pe] = [t for t in rec.tests if t.name == PROCESS_EXIT]
    assert pe.verdict is Verdict.CRASH
    reason = rec.attempts[0].process_exit
    assert reason is not None and "after its last test ended" in (
        reason.crash.reason if reason.crash else ""
    )


def test_a_non_zero_exit_with_every_test_passed_is_a_failure() -> None:
    rec = record(attempt(1, ("S.a", P), exit_code=1))
    assert rec.verdict is Verdict.FAIL
    pe = rec.attempts[0].process_exit
    assert pe is not None and "exited 1 although every test passed" in pe.failures[0].message
    assert (
        record(attempt(1, ("S.a", F), exit_code=1)).attempts[0].process_exit is None
    )  # gtest's own 1


def test_a_driver_warning_does_not_hide_tests_that_ran_and_failed() -> None:
    rec = record(attempt(1, ("S.a", F), exit_code=1, env="Insufficient NumHugepages"))
    assert rec.verdict is Verdict.FAIL and not rec.attempts[0].environment_failed
    rec2 = record(attempt(1, ("S.a", C), exit_code=134, env="No chips detected"))
    assert rec2.verdict is Verdict.ENV_ERROR and "No chips detected" in (rec2.why or "")


def test_outcomes_that_say_nothing_about_the_kernel_explain_themselves() -> None:
    rec = record(
        build=BuildResult(ok=False, profile="in-tree", tail=("x.cpp:1: error: boom",), reason=None)
    )
    assert rec.verdict is Verdict.BUILD_FAILED and "x.cpp:1: error: boom" in (rec.why or "")
    empty = record()
    assert empty.verdict is Verdict.NOT_RUN and "S.*" in (empty.why or "")


def test_round_trip_is_exact_and_strict() -> None:
    rec = record(
        attempt(1, ("S.a", P), ("S.b", F), exit_code=1), attempt(2, ("S.a", P), ("S.b", P))
    )
    text = jsonio.dumps(rec.to_json())
    json.loads(text, parse_constant=lambda c: pytest.fail(f"bare {c}"))
    back = RunRecord.from_json(jsonio.Reader(json.loads(text), "r.json"), rec.record_dir)
    assert json.loads(jsonio.dumps(back.to_json())) == json.loads(text)
    assert back.request == rec.request and back.verdict is Verdict.FLAKY
    b = {t.name: t for t in back.tests}["S.b"]
    assert b.worst["dx"]["max_diff"] == float("inf")


def _paths(doc: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [at]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*at, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*at, i))
    return out


REAL = json.loads(jsonio.dumps(record(attempt(1, ("S.a", P), ("S.b", F), exit_code=1)).to_json()))
junk = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5) | st.floats(allow_nan=False),
    lambda k: st.lists(k, max_size=3) | st.dictionaries(st.text(max_size=5), k, max_size=3),
    max_leaves=8,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(where=st.sampled_from(_paths(REAL)[1:]), value=junk)
def test_a_real_record_damaged_anywhere_is_named_never_a_crash(
    where: tuple[Any, ...], value: object
) -> None:
    doc = copy.deepcopy(REAL)
    node = doc
    for k in where[:-1]:
        node = node[k]
    node[where[-1]] = value
    try:
        RunRecord.from_json(jsonio.Reader(doc, "/r/run-1/record.json"), Path("/r/run-1")).to_json()
    except InputError as exc:
        assert "/r/run-1/record.json" in exc.one_line() and "fix:" in exc.one_line()


# ---------------------------------------------------------------------------------- defined once
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    attempts=st.lists(for_type(AttemptDoc), max_size=3),
    build=for_type(BuildResult | None),
)
def test_a_record_written_and_read_back_writes_the_same_document(
    attempts: list[AttemptDoc], build: BuildResult | None
) -> None:
    """What a run derives (the process's own entry, environment_failed, the tallies, verdict,
    why) is derived again on reading: a record read back writes exactly what it read."""
    rec = RunRecord(
        request=RunRequest(),
        rerun=options.argv(RunRequest()),
        record_dir=Path("/r/run-1"),
        attempts=[Attempt.from_doc(a) for a in attempts],
        build=build,
    )
    text = jsonio.dumps(rec.to_json())
    back = RunRecord.from_json(jsonio.Reader(json.loads(text), "r.json"), rec.record_dir)
    assert same(back.document(), rec.document())
    assert jsonio.dumps(back.to_json()) == text


def test_tallies_are_typed_and_never_negative() -> None:
    rec = record(attempt(1, ("S.a", C), exit_code=134, env="No chips detected"))
    [t] = rec.tests
    assert t.statuses == {Seen.ENV_ERROR: 1} and t.verdict is Verdict.ENV_ERROR
    with pytest.raises(ValueError, match="negative"):
        TestAggregate(name="S.a", statuses={Seen.PASSED: -1})
    doc = json.loads(jsonio.dumps(rec.to_json()))
    doc["tests"][0]["statuses"] = {"MAYBE": 1}
    with pytest.raises(
        InputError, match=r"r\.json: tests\[0\]\.statuses has the key 'MAYBE', which is not an"
    ):
        RunRecord.from_json(jsonio.Reader(doc, "r.json"), rec.record_dir)


def test_a_builds_inputs_stay_one_flat_object_of_named_hashes() -> None:
    inputs = Inputs(key="k1", outputs_sha256="o", sources_sha256="s", output_files="3")
    rec = record(build=BuildResult(ok=True, inputs=inputs))
    doc = json.loads(jsonio.dumps(rec.to_json()))
    assert doc["build"]["inputs"] == {
        "key": "k1",
        "outputs_sha256": "o",
        "sources_sha256": "s",
        "output_files": "3",
        "uncommitted_files": "",
    }
    back = RunRecord.from_json(jsonio.Reader(doc, "r.json"), rec.record_dir)
    assert back.build is not None and back.build.inputs == inputs


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(hang=for_type(Diagnosis))
def test_a_hang_of_the_first_version_in_a_run_record_reads_as_the_second(hang: Diagnosis) -> None:
    rec = record(attempt(1, ("S.a", P)))
    rec.attempts[0].hang = hang
    doc = json.loads(jsonio.dumps(rec.to_json()))
    doc["attempts"][0]["hang"]["schema"] = "lnrepro.hang/1"
    back = RunRecord.from_json(jsonio.Reader(doc, "r.json"), rec.record_dir)
    assert same(back.attempts[0].hang, hang)
    doc["attempts"][0]["hang"]["schema"] = "lnrepro.hang/9"
    with pytest.raises(
        InputError, match=r"r\.json: attempts\[0\]\.hang\.schema is 'lnrepro.hang/9'"
    ):
        RunRecord.from_json(jsonio.Reader(doc, "r.json"), rec.record_dir)
