"""watcher.log in every era, pasted noise, malformed input, and the records both ways."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lnrepro.hang.watcher.log import parse, parse_file
from lnrepro.hang.watcher.records import CoreKind, EventKind, LineFormat, WatcherLog
from lnrepro.model import codec
from lnrepro.model.jsonio import Reader
from tests.hang.watcher import samples as S
from tests.model.strategies import for_type


@pytest.mark.parametrize("name", sorted(S.ALL_ERAS))
def test_every_era_parses_into_cores_with_kernels(name: str) -> None:
    log = parse(S.ALL_ERAS[name])
    assert log.dumps, name
    assert not log.unparsed, [u.text for u in log.unparsed]
    cores = log.dumps[-1].cores
    assert cores and all(c.k_ids for c in cores if c.kind is CoreKind.WORKER)
    busy = [c for c in cores if c.kind is CoreKind.WORKER and any(c.k_ids)]
    assert busy, name
    for c in busy:  # every processor's kernel maps to a path the dump lists
        assert {log.kernel(r.kernel_id, log.dumps[-1]) for r in c.riscs} <= {
            S.READER,
            S.WRITER,
            S.COMPUTE,
        }


def test_each_era_is_recognised() -> None:
    seen = {name: parse(text).eras for name, text in S.ALL_ERAS.items()}
    assert seen["2023"] == (LineFormat.CORE_2023,)
    assert seen["2024-03"] == (LineFormat.DEVICE_CORE_2024,)
    assert seen["2024-phys"] == (LineFormat.PHYS_2024,)
    assert seen["2025-virtual"][0] is LineFormat.VIRTUAL_2025
    assert seen["newest"] == (LineFormat.NEWEST,)


def test_the_2023_line_has_physical_coordinates_and_no_device() -> None:
    core = parse(S.ERA_2023).dumps[0].cores[0]
    assert (core.device, core.x, core.y, core.coords) == (None, 1, 1, "physical")
    assert [r.waypoint for r in core.riscs] == ["CWFW", "W", "W", "W", "W"]
    assert (core.dispatch, core.noc, core.run, core.enables, core.smsg) == (
        "D",
        0,
        "G",
        "BNT",
        "DDDD",
    )
    assert [r.kernel_id for r in core.riscs] == [41, 40, 42, 42, 42]  # brisc|ncrisc|trisc


def test_the_phys_era_reads_logical_and_physical_and_its_ethernet_line() -> None:
    log = parse(S.ERA_2024_PHYS)
    worker, busy, eth = log.dumps[0].cores
    assert (worker.x, worker.y, worker.phys, worker.virtual) == (0, 0, (1, 1), None)
    assert busy.risc("BRISC") is not None and busy.risc("BRISC").waypoint == "CWFW"  # type: ignore[union-attr]
    assert eth.kind is CoreKind.ETH and eth.run == "D" and eth.k_ids == (0,)
    assert eth.riscs[0].risc == "ERISC"
    assert log.runs[0].processors == ("BRISC", "NCRISC", "TRISC0", "TRISC1", "TRISC2")
    assert log.runs[0].attached == (0,)


def test_the_newest_line_reads_every_field() -> None:
    log = parse(S.ERA_NEWEST)
    core = log.dumps[0].cores[0]
    assert (core.device, core.x, core.y, core.virtual) == (0, 0, 0, (1, 2))
    assert core.h_id == 9 and core.k_ids == (8, 7, 9, 9, 9)
    assert [(r.risc, r.waypoint, r.run, r.enabled) for r in core.riscs] == [
        ("BRISC", "CWFW", "G", True),
        ("NCRISC", "W", "D", True),
        ("TRISC0", "CWFW", "G", True),
        ("TRISC1", "K", "G", True),
        ("TRISC2", "K", "G", True),
    ]
    d = log.dumps[0]
    assert d.complete and d.seconds == 3.0 and d.completed_at == pytest.approx(3.004)
    assert d.kernels == {0: "blank", 7: S.READER, 8: S.WRITER, 9: S.COMPUTE}
    assert log.runs[0].started_at == 0.104


def test_ethernet_of_2025_with_unknown_fields() -> None:
    eth = parse(S.ERA_2025_VIRTUAL).dumps[0].cores[-1]
    assert eth.kind is CoreKind.ACTIVE_ETH and eth.dispatch is None and eth.run is None
    assert eth.smsg is None and eth.k_ids == (0,) and eth.riscs[0].waypoint == "GW"


def test_a_log_without_waypoints_still_gives_the_run_state() -> None:
    core = parse(S.NO_WAYPOINTS).dumps[0].cores[0]
    assert not core.has_waypoints and core.run == "G" and len(core.riscs) == 5
    assert [r.run for r in core.riscs] == ["G", "G", "G", "G", "G"]


def test_a_cut_dump_is_incomplete_and_the_one_before_is_not() -> None:
    text = (
        S.newest_log([S.STARVED], dumps=1)
        + "-----\nDump #2 at 4.000s\nDevice 0 worker core(x= 0,y= 0) virtual(x= 1,y= 2): "
    )
    log = parse(text)
    assert [d.complete for d in log.dumps] == [True, False]
    assert log.dumps[1].cores[0].partial
    assert any("Dump #2" in w for w in log.warnings)


def test_append_mode_keeps_runs_apart() -> None:
    log = parse(S.newest_log([S.IDLE]) + S.newest_log([S.STARVED], dumps=3))
    assert [r.index for r in log.runs] == [1, 2]
    assert [d.run for d in log.dumps] == [1, 1, 2, 2, 2]
    assert all(d.run == 2 for d in log.last_run_dumps())


def test_pasted_noise_is_read_and_unknown_lines_are_kept() -> None:
    pasted = (
        "  17  Dump #9 at 90.100s\n"
        "  18  evice 0 worker core(x= 2,y= 3) virtual(x= 3,y= 5): CWFW,   W,CWFW,   K,   K  rmsg:D0G|BNT h_id:  2 smsg:DGGG k_ids:  8|  7|  9|  9|  9\n"
        "  19  ...\n"
        "  20  Device 0 worker core(x= 3,y= 3) virtual(x= 4,y= 5): ...,   W,CWFW,   K,   K  rmsg:D0G|BNT h_id:  2 smsg:DGGG k_ids:  8|  7|  9|  9|  9\n"
        "  21  k_id[  9]: " + S.COMPUTE + "\n"
        "this line is a reporter's comment\n"
    )
    log = parse(pasted)
    cores = log.dumps[0].cores
    assert [(c.x, c.y) for c in cores] == [(2, 3), (3, 3)]
    assert cores[1].riscs[0].waypoint is None and cores[1].riscs[2].waypoint == "CWFW"
    assert [u.text for u in log.unparsed] == ["  19  ...", "this line is a reporter's comment"]
    assert log.kernel(9) == S.COMPUTE


def test_asserts_noc_errors_pauses_and_stack_lines_are_events() -> None:
    text = S.HEADER + (
        "-----\nDump #1 at 2.000s\n"
        + S.newest_line(0, 0, " AST7,   W,   W,   W,   W", "D0G|BNT", "DDDD", S.IDS)
        + "\n"
        "Device 0 worker core(x= 0,y= 0) virtual(x= 1,y= 2): brisc tripped an assert on line 31. "
        "Current kernel: " + S.WRITER + ".\n"
        "Device 0 worker core(x= 1,y= 0) virtual(x= 2,y= 2): ncrisc using noc1 tried to access DRAM "
        "core w/ physical coords (x=0,y=11) DRAM[addr=0x00001000,len=102400]\n"
        "Stack usage summary:\n"
        "\tbrisc highest stack usage: 12 bytes free, on core (x=1,y=1), running kernel "
        + S.WRITER
        + " (OVERFLOW)\n"
        "Paused cores: (x=3,y=1):trisc0, \n"
    )
    log = parse(text)
    kinds = [e.kind for e in log.events]
    assert kinds == [
        EventKind.ASSERT,
        EventKind.NOC_ERROR,
        EventKind.STACK_OVERFLOW,
        EventKind.PAUSE,
    ]
    a, n, s, p = log.events
    assert (a.risc, a.x, a.y, a.dump) == ("BRISC", 0, 0, 1) and "line 31" in a.text
    assert (n.risc, n.x, n.y) == ("NCRISC", 1, 0)
    assert s.risc == "BRISC"
    assert (p.x, p.y, p.risc) == (3, 1, "TRISC0")
    assert len(log.dumps[0].cores) == 1  # the error lines are not cores
    assert not log.unparsed


def test_the_old_assert_form_keeps_the_waypoints_on_the_core() -> None:
    line = "Dump #1 at 1.0s\nDevice 0, Core (x=1,y=1):    AST1,R,R,R,R  brisc tripped assert on line 7. Running kernel: k.cpp.\n"
    log = parse(line)
    core = log.dumps[0].cores[0]
    assert core.riscs[0].waypoint == "AST1" and core.error is not None and "tripped" in core.error
    assert log.events[0].kind is EventKind.ASSERT


def test_ring_buffer_and_dump_all_fields() -> None:
    text = (
        "Dump #1 at 1.000s\n"
        + S.newest_line(0, 0, " CWFW,   W,CWFW,   K,   K", "D0G|BNT", "DGGG", S.IDS).replace(
            " k_ids:", " cb[0](rcv 124!=ack 96) k_ids:"
        )
        + " text_start:0x3e00|0x5000\n\tdebug_ring_buffer=\n\t[0x0000002a,0x00000010,\n\t 0x00000001]\n"
    )
    core = parse(text).dumps[0].cores[0]
    assert [(c.cb, c.received, c.acked) for c in core.cb_sync] == [(0, 124, 96)]
    assert core.ring_buffer == (42, 16, 1)
    assert core.k_ids == (8, 7, 9, 9, 9) and core.extra == ""


def test_kernel_names_file_lines_are_read_outside_dumps() -> None:
    log = parse("0: blank\n7: " + S.READER + "\n")
    assert log.kernel_names == {0: "blank", 7: S.READER} and not log.dumps


def test_an_unreadable_file_is_a_warning(tmp_path) -> None:  # type: ignore[no-untyped-def]
    log = parse_file(tmp_path / "missing.log")
    assert not log.dumps and "cannot read" in log.warnings[0]
    (tmp_path / "bin.log").write_bytes(b"\xff\xfe\x00Dump #1 at 1.0s\n\xff")
    assert parse_file(tmp_path / "bin.log").dumps[0].number == 1


@pytest.mark.parametrize("name", sorted(S.ALL_ERAS))
def test_json_round_trip(name: str) -> None:
    log = parse(S.ALL_ERAS[name] + "an unknown line\n")
    doc = json.loads(json.dumps(codec.encode(log)))
    assert doc["schema"] == "lnrepro.hang.watcher-log/1"
    back = codec.decode(Reader(doc, "t"), WatcherLog)
    assert back == log


MALFORMED = [
    "",
    "\x00\x00",
    "Dump #",
    "Dump #99999999999999999999999 at 1e400s",
    "Device 0 worker core(x= 0,y= 0) virtual(x= 1,y= 2):",
    "Dump #1 at 1s\nDevice 0 worker core(x=99999,y=0): ,,,,,,,,,, rmsg:|| h_id: smsg: k_ids:|||",
    "Dump #1 at 1s\nCore (x=1,y=1): rmsg:D9Z|???? smsg:???? k_ids:1|2|3|4|5|6|7|8",
    "Dump #1 completed at 2s\nAt 1s detach device 0\nPaused cores: garbage",
    "k_id[ 3]:",
    "\n".join(
        ["Dump #1 at 1s"] + ["Device 0 worker core(x= 0,y= 0) virtual(x= 1,y= 2): " + "W," * 50] * 3
    ),
]


@pytest.mark.parametrize("text", MALFORMED)
def test_malformed_input_never_raises(text: str) -> None:
    log = parse(text)
    assert isinstance(log, WatcherLog)
    json.dumps(codec.encode(log))


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(
            list("Dump#at0123456789 .s\n-:,()=xyWCRBFGDNTK|kid_[]rmsgvirtualcoreworkerevice?")
        ),
        max_size=400,
    )
)
def test_fuzzed_text_never_raises(text: str) -> None:
    log = parse(text)
    assert (
        codec.decode(Reader(json.loads(json.dumps(codec.encode(log))), "fuzz"), WatcherLog) == log
    )


@settings(max_examples=200, deadline=None)
@given(st.integers(0, len(S.ERA_NEWEST)), st.integers(0, 40))
def test_a_cut_or_damaged_log_never_raises(cut: int, hole: int) -> None:
    text = S.ERA_NEWEST[:cut] + S.ERA_NEWEST[cut + hole :]
    log = parse(text)
    # a damaged "Dump #N" header leaves its core lines in a headerless dump (number 0), first
    assert all(d.number >= 1 for d in log.dumps[1:]) and all(d.number >= 0 for d in log.dumps)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(for_type(WatcherLog))
def test_every_drawn_log_round_trips_through_its_derived_json(log: WatcherLog) -> None:
    """The records are defined once (issue 39): any value the types allow, kernel maps keyed by
    int included, reads back from its JSON as it was."""
    text = json.dumps(codec.encode(log))
    back = codec.decode(Reader(json.loads(text), "drawn"), WatcherLog)
    assert back == log and json.dumps(codec.encode(back)) == text
