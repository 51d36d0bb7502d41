"""Watcher logs as users paste them (tests/hang/watcher/pastes.py), every era and style, read through
lnrepro.hang.read_paste: the right diagnosis, the era and noise named, nothing made up. Before
lnrepro.hang, `explain` refused every excerpt without a 'Dump #' header or a legend."""

from __future__ import annotations

import re

import pytest

from lnrepro.hang.door import read_paste, sniff
from lnrepro.hang.model import HangSource
from tests.hang.watcher import pastes as P

PASTES = P.pastes()


@pytest.mark.parametrize("paste", PASTES, ids=[p.name for p in PASTES])
def test_every_era_and_style_is_diagnosed(paste: P.Paste) -> None:
    r = read_paste(paste.text)
    assert r is not None and r.format is HangSource.WATCHER_LOG, paste.name
    d = r.diagnosis
    assert r.era == paste.era and d.source is not None and "core lines" in d.source.described
    g = d.primary
    assert g is not None and d.pattern.value == "CONSUMER_STARVED", d.lines()
    assert g.risc == "BRISC" and g.waypoint == "CWFW" and g.count == paste.cores, d.lines()
    if paste.kernel_known:
        assert g.kernel == P.WRITER and d.key == "CONSUMER_STARVED:writer_paste_demo.cpp:BRISC:CWFW"
    else:
        assert g.kernel is None and any("k_id[301]" in u for u in d.unknowns), d.unknowns
    for words in paste.noise:
        assert any(words in n for n in d.source.noise), (words, d.source.noise)
    if paste.era in ("2023", "2024-03"):
        assert all(c.coords == "physical" for c in g.cores)
        assert any("physical" in u for u in d.unknowns)
    # nothing invented: every path the diagnosis names is in the paste
    for path in [g.kernel, *(p.kernel for p in g.peers)]:
        assert path is None or path in paste.text


def test_the_2023_excerpt_is_refused_by_the_old_sniffer_and_read_now() -> None:
    """The issue's first case: a 2023 excerpt exited 4 ("no googletest markers")."""
    text = P.excerpt("2023")
    assert not re.search(r"(?m)^\s*Dump #\d+", text) and "Legend:" not in text
    assert sniff(text) is HangSource.WATCHER_LOG


@pytest.mark.parametrize("era", P.ERAS)
def test_an_excerpt_is_one_dump_of_its_own(era: str) -> None:
    from lnrepro.hang.watcher.log import parse

    log = parse(P.numbered(P.excerpt(era)))
    assert [d.number for d in log.dumps] == [0] and len(log.dumps[0].cores) == 2
    assert log.dumps[0].complete and log.kernel(P.IDS["writer"]) == P.WRITER


def test_a_dropped_k_of_a_map_line_is_still_read() -> None:
    from lnrepro.hang.watcher.log import parse

    log = parse("_id[301]: " + P.WRITER + "\n")
    assert log.kernel(301) == P.WRITER


def test_a_paste_is_not_mistaken() -> None:
    assert sniff("[==========] Running 2 tests from 1 test suite.\n[ RUN      ] A.b\n") is None
    assert sniff("Core (x=1,y=1) is where I looked\n") is None
    assert sniff("") is None


def test_the_noise_is_counted_right() -> None:
    d = read_paste(P.numbered(P.excerpt("2023")))
    assert d is not None and d.diagnosis.source is not None
    noise = d.diagnosis.source.noise
    assert "editor line numbers on 2 core line(s)" in noise and "2 '...' elision(s)" in noise
    assert "3 kernel map line(s) apart from the dumps" in noise
    assert "1 line(s) that are not the watcher's, kept unread" in noise
