"""tt-triage's tables as a person pastes them from a real terminal (tests/hang/triage/corpus.py:
rich at 80, 100, 120 and 200 columns, hard-wrapped at 160, quoted once and twice, rows only,
no rule under the header, a header with no rows). Each gives the diagnosis the whole text gives,
or one that says what it could not read; never another culprit, and a cut cell's prefix is never
a value. These failed before: cut rows dropped, 'no core' for wrapped or rule-less tables, and
'no googletest markers' for rows only or a reply quoted twice."""

from __future__ import annotations

import json

import pytest

from lnrepro.hang.door import read_paste
from lnrepro.hang.model import CoreRef, Diagnosis
from tests.hang.triage import corpus as C

CASES = [(s, name, text) for s in C.SCENARIOS for name, text in C.terminal_variants(s)]


def _read(text: str) -> Diagnosis:
    r = read_paste(text)
    assert r is not None, "not read as a hang"
    assert r.format.value == "tt-triage"
    return r.diagnosis


def _noc0(c: CoreRef) -> tuple[object, ...]:
    """A core by its device and noc0 place (a cut Loc keeps only '1-1', the noc0 one)."""
    return (c.device, c.noc0 or (c.x, c.y))


def _same_risc(got: str | None, want: str | None) -> bool:
    return got == want or (got == "TRISC?" and bool(want) and want.startswith("TRISC"))


@pytest.mark.parametrize(
    ("scenario", "name", "text"), CASES, ids=[f"{s.name}/{n}" for s, n, _ in CASES]
)
def test_a_terminal_paste_names_the_same_culprit(
    scenario: C.Scenario, name: str, text: str
) -> None:
    whole = _read(C.rich_framework(scenario))
    d = _read(text)
    g, w = d.primary, whole.primary
    assert g is not None and w is not None, (name, d.summary)
    assert _same_risc(g.risc, w.risc), (name, g.risc, w.risc, d.lines())
    assert {_noc0(c) for c in g.cores} <= {_noc0(c) for c in w.cores}, name
    if d.key != whole.key:  # less was readable: it must say what, and claim nothing else
        assert d.pattern in (whole.pattern, d.pattern.UNKNOWN), (name, d.pattern)
        noise = d.source.noise if d.source else ()
        said = [u for u in d.unknowns if "cut" in u] + [n for n in noise if "header" in n]
        assert said, (name, d.unknowns, noise)
    assert "…" not in d.key and "…" not in (g.name or "") and "…" not in (g.kernel or "")
    for f in g.frames:
        assert "…" not in f.function and "…" not in (f.file or ""), f
    assert "the text shows no other RISC" not in " ".join(d.lines())


@pytest.mark.parametrize("scenario", C.SCENARIOS, ids=[s.name for s in C.SCENARIOS])
def test_a_cut_risc_cell_is_still_that_risc(scenario: C.Scenario) -> None:
    """At 80 columns rich prints 'bri…', 'ncr…', 'tri…': each row is kept, a name only one RISC
    begins with is that RISC, and 'tri…' is a TRISC without a number (never one guessed)."""
    d = _read(C.rich_framework(scenario, 80))
    shown = {p.risc for g in d.groups for p in g.peers} | {i.risc for i in d.idle}
    assert "NCRISC" in shown and "TRISC?" in shown, shown
    assert not {"TRISC0", "TRISC1", "TRISC2"} & shown, shown
    assert any(f"'{r}…'" in u for r in ("bri", "ncr", "tri") for u in d.unknowns), d.unknowns
    assert "…" not in json.dumps(d.to_json()["key"], ensure_ascii=False)


@pytest.mark.parametrize("scenario", C.SCENARIOS, ids=[s.name for s in C.SCENARIOS])
def test_a_header_with_no_rows_says_there_is_nothing_to_diagnose(scenario: C.Scenario) -> None:
    d = _read(C.header_only(C.rich_framework(scenario)))
    assert d.pattern.value == "UNKNOWN" and not d.hung
    assert d.summary.startswith("nothing to diagnose: the table of dump_callstacks"), d.summary
    assert "no row" in d.summary


def test_hard_wrapped_lines_are_joined_and_said() -> None:
    r = read_paste(C.hard_wrapped(C.rich_framework(C.STARVED), 160))
    assert r is not None and r.source.noise
    assert any("hard-wrapped at column 160" in n for n in r.source.noise), r.source.noise


def test_rows_only_say_the_columns_were_told_by_their_cells() -> None:
    r = read_paste(C.quoted(C.rows_only(C.rich_framework(C.CYCLE)), 2))
    assert r is not None
    assert any("without their table's header" in n for n in r.source.noise), r.source.noise
    assert any("quoted" in n for n in r.source.noise)


@pytest.mark.parametrize("width", [100, 200])
def test_a_fast_dispatch_kernel_alone_is_named_and_no_worker_is_invented(width: int) -> None:
    d = _read(C.dispatch_only(width))
    assert d.primary is None and not d.hung, d.lines()
    assert "on BRISC of 0:(0,9)" in d.summary, d.summary
    assert ("cq_dispatch on" if width == 200 else "cq_dis… on") in d.summary, d.summary
    assert "idle in firmware" not in d.summary  # it runs: it waits for commands by design
