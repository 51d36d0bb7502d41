"""DPRINT lines about circular buffers, picked out of console output and attached to cores."""

from __future__ import annotations

from lnrepro.hang.model import DprintLine
from lnrepro.hang.watcher.diagnose import diagnose
from lnrepro.hang.watcher.dprint import attach, parse_dprint, parse_line
from lnrepro.hang.watcher.log import parse
from tests.hang.watcher import samples as S

CONSOLE = """\
2026-01-16 10:00:01.001 | info     |          Device | Opening device 0 (device.cpp:120)
[ RUN      ] DemoOpTest.Passthrough
0:(x=0,y=0):NC: reader: pushed 31 pages to cb_in c_0
0:(x=0,y=0):TR0: cb_wait_front(c_0, 32) block 3
0:(x=0,y=0):BR: writer waiting on cb 16 for 32 tiles
0:(x=0,y=0):TR1: math tile 7 done
0:1-0:TR0: cb_wait_front(cb_id=0, 32)
0:(x=3,y=3):NC: cb_push_back c_0 31
\x1b[0;32m0:(x=1,y=0):TR2: cb_push_back(CBIndex::c_16, 32)\x1b[m
not a dprint: cb_wait_front in a comment
"""


def test_both_prefix_forms_are_read() -> None:
    old = parse_line("0:(x=1,y=2):TR0: cb_wait_front(c_0, 32)", 4)
    new = parse_line("1:3-5:BR: popped 4 pages of cb 16", 9)
    assert old == DprintLine(
        line_no=4,
        device=0,
        x=1,
        y=2,
        risc="TRISC0",
        text="cb_wait_front(c_0, 32)",
        cb_ids=(0,),
        ops=("cb_wait_front",),
    )
    assert new is not None and (new.device, new.x, new.y, new.risc, new.cb_ids) == (
        1,
        3,
        5,
        "BRISC",
        (16,),
    )
    assert parse_line("[ RUN      ] A.B") is None
    assert parse_line("2026-01-16 10:00:01.001 | info | x") is None


def test_only_cb_lines_are_picked_with_their_line_numbers() -> None:
    lines = parse_dprint(CONSOLE)
    assert [d.line_no for d in lines] == [3, 4, 5, 7, 8, 9]
    assert (
        lines[-1].risc == "TRISC2"
        and lines[-1].cb_ids == (16,)
        and lines[-1].ops == ("cb_push_back",)
    )
    assert lines[3].cb_ids == (0,) and (lines[3].x, lines[3].y) == (1, 0)
    everything = parse_dprint(CONSOLE, cb_only=False)
    assert len(everything) == 7 and any(d.risc == "TRISC1" for d in everything)


def test_lines_attach_to_the_groups_of_their_cores() -> None:
    log = parse(S.newest_log([S.STARVED, S.STARVED, S.IDLE, S.NOC]))  # (0,0) (1,0) idle (3,0)
    d = diagnose(log, parse_dprint(CONSOLE))
    starved = d.groups[0]
    assert {(c.x, c.y) for c in starved.cores} == {(0, 0), (1, 0)}
    assert [x.line_no for x in starved.dprint] == [3, 4, 5, 7, 9]  # not (3,3)'s line
    noc = d.groups[1]
    assert noc.waypoint == "NWBW" and noc.dprint == ()
    assert any(
        ln.strip().startswith("dprint line 4: 0:(x=0,y=0):TRISC0:") for ln in d.lines(max_dprint=8)
    )


def test_the_cap_keeps_the_last_lines_of_the_waiting_processor_first() -> None:
    text = "".join(f"0:(x=0,y=0):NC: cb_push_back c_0 block {i}\n" for i in range(10))
    text += "".join(f"0:(x=0,y=0):TR0: cb_wait_front c_0 block {i}\n" for i in range(3))
    d = attach(diagnose(parse(S.newest_log([S.STARVED]))), parse_dprint(text), cap=5)
    picked = d.groups[0].dprint
    assert len(picked) == 5
    assert [p.risc for p in picked].count("TRISC0") == 3  # the group's processor first
    assert [p.line_no for p in picked] == [9, 10, 11, 12, 13]  # the latest, in order


def test_no_lines_or_cap_zero_changes_nothing() -> None:
    d = diagnose(parse(S.newest_log([S.STARVED])))
    assert attach(d, []) is d and attach(d, parse_dprint(CONSOLE), cap=0) is d


def test_old_physical_coordinates_get_no_dprint() -> None:
    d = diagnose(parse(S.ERA_2023), parse_dprint("0:(x=1,y=1):BR: cb_wait_front c_16\n"))
    assert d.groups[0].dprint == ()  # watcher's 2023 coords are physical, DPRINT's logical
