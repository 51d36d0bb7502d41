"""Watcher logs in the shapes real reports have (tests/hang/watcher/pastes.py): the oldest
format with dispatch cores and an elision line, the odd core left on an older program, and
waypoints of the user's own."""

from __future__ import annotations

import pytest

from lnrepro.hang.door import read_paste
from lnrepro.hang.model import Diagnosis, HangPattern
from tests.hang.watcher import pastes as P


def _read(text: str) -> Diagnosis:
    r = read_paste(text)
    assert r is not None and r.format.value == "watcher-log"
    return r.diagnosis


def test_the_oldest_format_names_the_worker_not_the_dispatch_cores() -> None:
    d = _read(P.oldest_with_dispatch())
    g = d.primary
    assert g is not None and d.pattern is HangPattern.CONSUMER_STARVED, d.lines()
    assert (g.risc, g.waypoint, [(c.x, c.y) for c in g.cores]) == ("BRISC", "CWFW", [(1, 1)])
    assert g.kernel == P.WRITER  # from the k_id map
    assert d.cores_dispatch >= 1


def test_the_core_left_on_an_older_program_is_named_first() -> None:
    d = _read(P.odd_one_out())
    g = d.primary
    assert g is not None and [(c.x, c.y) for c in g.cores] == [(0, 0)], d.lines()
    assert d.pattern is HangPattern.NOC_WAIT and g.kernel == P.WRITER
    assert "older program (h_id 708" in d.summary and "at h_id 709" in d.summary
    assert d.key.startswith("NOC_WAIT:writer_paste_demo.cpp:BRISC:NSW")


@pytest.mark.parametrize("own", ["WFCW"])  # a user's wait; AST1 (not a wait): see report
def test_a_users_own_waypoint_is_shown_and_the_movers_behind_it_are_consequences(
    own: str,
) -> None:
    d = _read(P.own_waypoints(own))
    g = d.primary
    assert g is not None and (g.risc, g.waypoint) == ("TRISC0", own), d.lines()
    assert own in g.meaning and "own" in g.meaning
    assert "the reader (NCRISC) waits too, behind it" in d.summary, d.summary
    assert "the writer (BRISC) waits too" in d.summary and "not the cause" in d.summary
    assert any(p.waypoint == "MWDD" for p in g.peers)  # the user's other waypoints kept
