"""`lnrepro explain FILE` on what users paste about a hang: watcher logs of every era (excerpts
with noise too), tt-triage of every era and style, condensed summaries. Before lnrepro.hang
every one of these exited 4: "no googletest output in FILE: it is text with no googletest
markers"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.consumers.schemas import errors
from tests.hang.triage import corpus as C
from tests.hang.watcher import pastes as P
from tests.harness import lnrepro

PICK = [
    "starved/one-script",
    "cycle/one-script-cut126",
    "assert/tabulate",
    "noc/first-framework",
    "starved/rich-cut130",
    "cycle/rich-terminal-150",
    "assert/mixed",
    "noc/summary",
]
TRIAGE = {c.name: c for c in C.cases()}
WATCHER = {p.name: p for p in P.pastes()}
W_PICK = [
    "2023/excerpt+numbers",
    "2024-03/excerpt+dropped",
    "2024-phys/map-first",
    "newest/full+numbers+dropped",
]


def _explain(capsys: pytest.CaptureFixture[str], path: Path, *more: str) -> tuple[int, str]:
    ran = lnrepro("explain", path, *more)  # the tests' one harness, in this process
    assert "Traceback" not in ran.err
    return ran.code, ran.out


@pytest.mark.parametrize("name", PICK)
def test_explain_reads_triage_and_summaries(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = TRIAGE[name]
    f = tmp_path / "pasted.txt"
    f.write_text(case.text)
    code, out = _explain(capsys, f)
    flat = " ".join(out.split())  # the console wraps at its width
    assert code == 0, out
    assert f"hang ({f}):" in flat and case.expect.pattern in flat and case.expect.risc in flat
    assert f"read: {case.format}, " in flat
    code, out = _explain(capsys, f, "--json")
    doc = json.loads(out)
    assert code == 0 and errors(out) == [] and doc["schema"] == "lnrepro.hang/2"
    assert doc["source"]["format"] == case.format and doc["source"]["era"] == case.era
    assert doc["pattern"] == case.expect.pattern and doc["groups"][0]["risc"] == case.expect.risc


@pytest.mark.parametrize("name", W_PICK)
def test_explain_reads_watcher_pastes_of_every_era(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paste = WATCHER[name]
    f = tmp_path / "watcher-excerpt.txt"
    f.write_text(paste.text)
    code, out = _explain(capsys, f, "--json")
    doc = json.loads(out)
    assert code == 0 and errors(out) == []
    assert doc["source"] == doc["source"] | {"format": "watcher-log", "era": paste.era}
    assert doc["key"] == "CONSUMER_STARVED:writer_paste_demo.cpp:BRISC:CWFW"


def test_a_hung_tests_console_with_triage_in_it_shows_the_hang(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """tt-metal's dispatch timeout ran triage inside a gtest's output: the hang is explained."""
    log = (
        "[==========] Running 1 test from 1 test suite.\n[ RUN      ] LayerNormBw.Hangs\n"
        + C.mixed(C.CYCLE)
    )
    f = tmp_path / "console.log"
    f.write_text(log)
    code, out = _explain(capsys, f)
    flat = " ".join(out.split())
    assert code == 0 and "PRODUCER_BLOCKED" in flat and "(tt-triage, framework/rich)" in flat


def test_a_text_about_nothing_still_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "notes.txt"
    f.write_text("we saw a hang on Tuesday, core 3 maybe\n")
    ran = lnrepro("explain", f)
    assert ran.code == 4 and "no googletest markers" in ran.err


def test_pasted_text_is_printed_as_text_not_markup(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "summary.txt"
    f.write_text(
        "Device 0, core 1-1 (brisc):\n  #0 0x00000010 in wait[red]here () at ./k[/red].cpp 3:1\n"
    )
    code, out = _explain(capsys, f)
    assert code == 0 and "wait[red]here" in out and "./k[/red].cpp" in out
