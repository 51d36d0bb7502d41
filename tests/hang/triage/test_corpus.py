"""The tt-triage corpus (tests/hang/triage/corpus.py): every scenario in every era and style is read
into the right diagnosis, and nothing in a diagnosis is made up. These fail on the code before
lnrepro.hang existed (it had no reader for any of this text)."""

from __future__ import annotations

import json
import re

import pytest

from lnrepro.hang.door import read_paste
from lnrepro.hang.model import Diagnosis
from tests.hang.triage import corpus as C

CASES = C.cases()


def _read(case: C.Case) -> Diagnosis:
    r = read_paste(case.text)
    assert r is not None, f"{case.name}: not read as a hang"
    assert (r.format.value, r.era) == (case.format, case.era), case.name
    return r.diagnosis


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_case_is_diagnosed_right(case: C.Case) -> None:
    d = _read(case)
    e = case.expect
    g = d.primary
    assert g is not None and d.pattern.value == e.pattern, (case.name, d.lines())
    assert g.risc == e.risc and g.count == e.cores, (case.name, d.lines())
    assert {c.device for c in g.cores} == {e.device}
    names = (e.name, None) if e.loose else (e.name,)
    assert g.name in names, (g.name, e.name)
    kernel_file = g.kernel.rsplit("/", 1)[-1] if g.kernel else None
    assert kernel_file in ((e.file, None) if e.loose else (e.file,)), (kernel_file, e.file)
    assert d.key.endswith(f":{e.risc}:{e.where}"), d.key
    idle = {i.risc for i in d.idle}
    assert set(e.idle) <= idle, (idle, e.idle)
    assert not any(i.risc == g.risc and set(i.cores) & set(g.cores) for i in d.idle)
    if e.cb is not None:
        assert e.cb in [c.text().split(" (")[0] for c in g.cbs], [c.text() for c in g.cbs]
    for words in e.cannot_tell:
        assert any(words in u for u in d.unknowns), d.unknowns
    assert d.hung is (e.pattern != "UNKNOWN") and d.source is not None and d.source.described
    text = json.dumps(d.to_json())
    for a in e.absent:
        assert a not in text


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_nothing_is_invented(case: C.Case) -> None:
    """Every kernel name, file, frame and CB a diagnosis names is in the pasted text."""
    d = _read(case)
    flat = re.sub(r"\s+", " ", case.text)
    for g in d.groups:
        for s in (g.name, g.kernel, *(f.function for f in g.frames), *(f.file for f in g.frames)):
            if s is not None:
                assert s in flat, (case.name, s)
        for f in g.frames:
            if f.line is not None:
                assert f"{f.file} {f.line}" in flat or f"{f.file}:{f.line}" in flat, (case.name, f)
        for c in g.cbs:
            assert re.search(rf"\b{c.cb}\b", flat) and c.state in flat
        for p in g.peers:
            assert p.kernel is None or p.kernel in flat


def test_every_era_and_style_is_in_the_corpus() -> None:
    styles = {c.name.split("/")[1] for c in CASES}
    assert {
        "one-script",
        "one-script-cut126",
        "first-framework",
        "tabulate",
        "rich",
        "rich-terminal-150",
        "rich-cut130",
        "mixed",
        "summary",
        "aggregated",
    } <= styles
    assert {c.era for c in CASES} == {
        "one-script",
        "framework/tabulate",
        "framework/rich",
        "summary",
    }


def test_the_renderers_print_what_the_sources_print() -> None:
    """The corpus's own shapes: rounded tabulate borders, rich's heavy head, frames as
    _format_callstack writes them, colour codes only in the ANSI variant."""
    rich = C.rich_framework(C.STARVED)
    assert "┏" in rich and "┡" in rich and "╭" not in rich and "\x1b" not in rich
    tab = C.tabulate_framework(C.STARVED)
    assert tab.count("╭") >= 2 and "┏" not in tab and "\ndump_callstacks.py:\n" in tab
    one = C.one_script(C.STARVED)
    assert one.startswith("= Checking device 0") and one.rstrip().endswith("DONE: OK")
    assert "│ #0 0x0000A1B4 in cb_wait_front () at /home/dev/tt-metal/tt_metal/" in one
    assert "\x1b[" in C.one_script(C.STARVED, ansi=True)
    assert all(len(ln) <= 130 for ln in C.cut(rich, 130).splitlines())


@pytest.mark.parametrize("scenario", ["starved", "cycle", "noc", "root"])
def test_one_hang_has_one_key_in_every_era_that_shows_it_whole(scenario: str) -> None:
    """The bisect signature does not depend on which tt-triage printed the hang: frame 0's
    cb_wait_front where there is no Waypoint column is the CWFW of the newer eras."""
    whole = (
        "one-script",
        "one-script-ansi",
        "first-framework",
        "tabulate",
        "rich",
        "rich-500",
        "mixed",
        "summary",
    )
    keys = {
        c.name: _read(c).key for c in CASES if c.name.split("/") in [[scenario, w] for w in whole]
    }
    assert len(keys) == len(whole) and len(set(keys.values())) == 1, keys


ROOT_CASES = [c for c in CASES if c.name.startswith("root/")]


@pytest.mark.parametrize("case", ROOT_CASES, ids=[c.name for c in ROOT_CASES])
def test_the_root_cause_leads_and_the_downstream_waiter_is_its_consequence(case: C.Case) -> None:
    """Compute's unpacker waits on a partly filled CB 0 while the reader is done, the writer
    waits on an empty CB 16 only because compute never produced: in every era the unpacker is
    the primary group (as the watcher reader ranks it), the writer a waiting peer of it, never a
    group of its own. Before the shared rule, triage's reader put the writer first."""
    d = _read(case)
    g = d.primary
    assert g is not None and (g.risc, g.role) == ("TRISC0", "compute"), d.lines()
    assert all(x.risc != "BRISC" for x in d.groups), d.lines()
    writer = [p for p in g.peers if p.risc == "BRISC"]
    assert writer and writer[0].state == "waiting" and writer[0].role == "writer", g.peers
    assert "a consequence, not the cause" in g.sentence
    if g.cbs:  # the partly filled CB leads: the pages the unpacker waits for came short
        assert (g.cbs[0].cb, g.cbs[0].risc, g.cbs[0].state) == (0, "TRISC0", "partial")
        if d.pattern.value == "CONSUMER_STARVED":
            assert any("CB 0 is partly filled on TRISC0" in u for u in d.unknowns), d.unknowns
    else:
        has_table = "dump_circular_buffers.py" in case.text and "cut" not in case.name
        assert not has_table, case.name
        if "dump_circular_buffers" not in case.text:  # said, not guessed
            assert (
                any("some pages or none" in u and "dump_circular_buffers" in u for u in d.unknowns)
                or d.pattern.value == "UNKNOWN"
            ), d.unknowns


SPOILED = [c for c in CASES if c.name.split("/")[1] in C.NOISY]


def test_every_scenario_is_pasted_spoiled() -> None:
    assert {c.name.split("/")[1] for c in SPOILED} == set(C.NOISY)
    assert {c.name.split("/")[0] for c in SPOILED} == {s.name for s in C.SCENARIOS}


@pytest.mark.parametrize("case", SPOILED, ids=[c.name for c in SPOILED])
def test_a_spoiled_paste_is_read_as_the_clean_one_and_the_noise_named(case: C.Case) -> None:
    """Editor line numbers and a first character lost, as the watcher pastes have them: the
    same diagnosis as the clean paste of that era (its key), and the source says what it looked
    past. Before, a numbered paste was no hang at all and a lost character lost the script."""
    d = _read(case)
    assert d.source is not None
    assert any(C.NOISY[case.name.split("/")[1]] in n for n in d.source.noise), d.source.noise
    clean_style = case.name.split("/")[1].split("+")[0].replace("-in-table", "")
    clean = next(c for c in CASES if c.name == f"{case.name.split('/')[0]}/{clean_style}")
    assert d.key == _read(clean).key
    assert case.expect.file is None or (d.primary is not None and d.primary.kernel is not None)
