"""The bisect records, defined once (issue 39): keyword-only types with enums, their JSON derived
and checked on read, and every older schema still read, resumed and written back as /6.

The documents in bisect_docs/ were written by lnrepro itself: ``v2-*`` at 2d3dd85^ (the plan and
the oracle, before the request), ``v3-*`` at 41b7abb^ and ``v4-*`` at b4c3cae^, each a
``bisect --command "sh -c '...; test ! -f bug'"`` over the ten commits :func:`history` makes
again (``*-interrupted``: stopped by SIGTERM after three steps). ``*.read-as-v6.json`` is what the
hand-written reader of 4de089d wrote back for them (as /5), with the keys /6 added at their
defaults; ``v5-every-field.json`` a /5 record with every record type, status and non-finite
number in it, and ``v6-every-field.json`` the same as /6 with its margins set.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lnrepro.bisect import state
from lnrepro.doors import store
from lnrepro.errors import MalformedRecord
from lnrepro.model import bisect, codec
from lnrepro.model.bisect import (
    Action,
    ActionKind,
    BisectResult,
    BisectState,
    BuildKind,
    Evidence,
    Mark,
    ResultKind,
    RunOutcome,
    SearchKind,
    Step,
)
from lnrepro.model.gtest import TestStatus
from lnrepro.model.jsonio import dumps
from lnrepro.model.record import Verdict
from tests.consumers.schemas import errors

DOCS = Path(__file__).parent / "bisect_docs"
FIRST_BAD = "29dd2f0003dec0f133aaf34390b8d9eb9f6fb039"  # "commit 6" of history()
GOOD = "c21ec4401cc787fc979265f2b16b6c9c7438b2e9"
BAD = "9e3c3459aa5dd02f4c7a7b9efebcf0b2ddd02ffe"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def doc(name: str) -> Any:
    return json.loads((DOCS / name).read_text(encoding="utf-8"))


def written(rec: bisect.BisectRecord) -> str:
    return dumps(rec.to_json()) + "\n"


def test_a_v6_record_with_every_field_reads_and_writes_back_byte_for_byte() -> None:
    text = (DOCS / "v6-every-field.json").read_text(encoding="utf-8")
    rec = bisect.decode(json.loads(text), "every-field.json")
    assert written(rec) == dumps(json.loads(text)) + "\n"
    assert errors(written(rec)) == []
    assert rec.request.margin.value == "on" and rec.result is not None
    assert rec.result.drifted == (f"{2:040x}",)
    margins = rec.steps[1].attempts[0].margins
    assert margins["LayerNormBackwardOpTest.Case0/dx"] == 0.4375
    assert margins["LayerNormBackwardOpTest.Case0/dgamma"] == float("inf")
    step = rec.steps[1]
    assert step.action == Action(
        job=1, sha=f"{1:040x}", kind=ActionKind.MERGE_BASE, build=BuildKind.REBUILD
    )
    assert step.attempts[0].tests[1].status is TestStatus.CRASHED
    assert step.tests["LayerNormBackwardOpTest.Case0"].verdict is Verdict.FAIL
    assert step.verdict is Verdict.FAIL and step.mark is Mark.BAD
    worst = step.tests["LayerNormBackwardOpTest.Case0"].worst
    assert worst["dgamma"]["max_diff"] == float("-inf") and worst["dx"]["pcc"] != worst["dx"]["pcc"]
    r = rec.result
    assert r is not None and r.kind is ResultKind.FIRST_BAD and r.search is SearchKind.BAYESIAN
    assert r.rates is not None and (r.rates.bad, r.rates.good) == (0.9, 0.05)


def test_a_v5_record_reads_as_v6_with_the_margins_at_their_defaults() -> None:
    """/5 had no margins (issue 47): it reads, and writes back as /6 with ``margin`` auto, no
    attempt's margins, no drift; every other key as it was."""
    v5 = doc("v5-every-field.json")
    out = json.loads(written(bisect.decode(v5, "v5.json")))
    assert out["schema"] == "lnrepro.bisect/6" and v5["schema"] == "lnrepro.bisect/5"
    assert out["request"].pop("margin") == "auto"
    assert (out["result"].pop("margin"), out["result"].pop("drifted")) == (None, [])
    for step in out["steps"]:
        for attempt in step["attempts"]:
            assert attempt.pop("margins") == {}
    out["schema"] = v5["schema"]
    assert out == v5


@pytest.mark.parametrize("old", ["v2-done", "v3-done"])
def test_an_older_record_reads_as_the_hand_written_reader_read_it(old: str) -> None:
    rec = store.load_path(DOCS / f"{old}.json")
    assert isinstance(rec, bisect.BisectRecord)
    assert written(rec) == (DOCS / f"{old}.read-as-v6.json").read_text(encoding="utf-8")
    assert errors(written(rec)) == []
    assert rec.result is not None and rec.result.first_bad == FIRST_BAD


@pytest.mark.parametrize("old", ["v3-done", "v4-done", "v3-interrupted", "v4-interrupted"])
def test_an_older_state_reads_with_the_defaults_of_what_it_lacks(old: str) -> None:
    """A /3 state has no hang keys, a /4 no lost jobs: they read as their defaults, and the
    record writes them (msgspec leaves a missing field with a plain default out of the
    instance; codec.decode puts it there, or the state saved after the next step lacks it)."""
    rec = state.read(DOCS / f"{old}.json")
    out = json.loads(written(rec))
    assert out["schema"] == bisect.SCHEMA and out["lost"] == []
    assert out["signature"]["hang_key"] is None
    assert all(a["hang"] is None for s in out["steps"] for a in s["attempts"])
    assert all(s["prebuilt_failed"] is None for s in out["steps"])
    assert errors(written(rec)) == []
    if old.endswith("interrupted"):
        assert rec.state is BisectState.INTERRUPTED and rec.result is None
    else:
        assert rec.state is BisectState.COMPLETE


def test_a_v5_state_resumes_as_a_v6_one() -> None:
    """docs/commands.md: bisects of /3 to /5 load and resume (the state's reader refused /5)."""
    rec = state.read(DOCS / "v5-every-field.json")
    assert json.loads(written(rec))["schema"] == bisect.SCHEMA
    assert len(rec.steps) == len(doc("v5-every-field.json")["steps"]) > 0


def test_a_closed_set_refuses_a_value_outside_it_naming_the_place() -> None:
    d = doc("v6-every-field.json")
    d["steps"][2]["attempts"][0]["tests"][1]["status"] = "MAYBE"
    with pytest.raises(MalformedRecord, match=r"steps\[2\]\.attempts\[0\]\.tests\[1\]\.status"):
        bisect.decode(d, "x.json")
    d = doc("v6-every-field.json")
    d["result"]["kind"] = "first good commit"
    with pytest.raises(MalformedRecord, match=r"x\.json: result\.kind is 'first good commit'"):
        bisect.decode(d, "x.json")


def test_records_are_keyword_only() -> None:
    """``BisectResult`` was built from 23 positional arguments, five counts in a row: a swap
    passed mypy and every test."""
    with pytest.raises(TypeError):
        BisectResult(ResultKind.FIRST_BAD, SearchKind.GIT)  # type: ignore[misc]
    with pytest.raises(TypeError):
        Action(0, "c1", ActionKind.STEP)  # type: ignore[misc]


def test_a_step_is_its_action_and_its_evidence_in_one_flat_object() -> None:
    action = Action(job=1, sha="c1", kind=ActionKind.CONFIRM)
    ev = Evidence(seconds=1.23456, build_s=2.0, attempts=())
    s = Step.of(
        action,
        ev,
        subject="s",
        outcomes=((RunOutcome.PASS, "exit 0"),),
        mark=Mark.GOOD,
        reason="exit 0",
        prepare_s=0.0004,
    )
    assert s.action == action and s.evidence == Evidence(seconds=1.235, build_s=2.0)
    keys = list(json.loads(dumps(codec.encode(s))))
    assert keys == list(doc("v6-every-field.json")["steps"][0])  # today's keys, in today's order


def history(repo: Path) -> None:
    """The ten commits the documents were bisected over (the same shas every time): commit 6
    adds the file ``bug``."""
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=env)
    for i in range(10):
        (repo / "n").write_text(f"{i}\n")
        if i >= 6:
            (repo / "bug").write_text("bug\n")
        when = {
            "GIT_AUTHOR_DATE": f"2026-01-01T00:0{i}:00Z",
            "GIT_COMMITTER_DATE": f"2026-01-01T00:0{i}:00Z",
        }
        subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, env=env)
        subprocess.run(
            ["git", "-C", str(repo), "commit", "-qm", f"commit {i}"],
            check=True,
            env={**env, **when},
        )


@pytest.mark.parametrize("old", ["v3-interrupted", "v4-interrupted"])
def test_an_older_interrupted_bisect_resumes_to_its_answer(old: str, tmp_path: Path) -> None:
    repo, runs = tmp_path / "repo", tmp_path / "runs"
    history(repo)
    where = "int-ccac7f9" if old.startswith("v3") else "int-72808b4"
    text = (DOCS / f"{old}.json").read_text(encoding="utf-8")
    text = text.replace("/tmp/oldgen/repo", str(repo)).replace(f"/tmp/oldgen/{where}", str(runs))
    before = json.loads(text)
    saved = repo / ".git" / "lnrepro" / "bisect.json"
    saved.parent.mkdir(parents=True)
    saved.write_text(text, encoding="utf-8")
    Path(before["record"]).parent.mkdir(parents=True)
    p = subprocess.run(
        [sys.executable, "-m", "lnrepro", "bisect", "--resume", "--repo", str(repo), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **GIT_ENV},
    )
    assert p.returncode == 0, p.stderr
    after = json.loads(p.stdout)
    assert after["schema"] == bisect.SCHEMA and after["state"] == "complete"
    assert after["result"]["first_bad"] == FIRST_BAD
    kept = [{k: s[k] for k in ("sha", "kind", "mark", "reason")} for s in before["steps"]]
    assert [{k: s[k] for k in kept[0]} for s in after["steps"][: len(kept)]] == kept
    assert json.loads(saved.read_text())["state"] == "complete"
    assert errors(p.stdout) == []
