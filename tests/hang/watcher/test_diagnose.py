"""Each hang pattern named from a watcher log in the documented format, over time, and both ways."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lnrepro.hang.model import SCHEMA, Diagnosis, HangPattern, Progress
from lnrepro.hang.watcher.diagnose import counts, diagnose
from lnrepro.hang.watcher.log import parse
from lnrepro.model.jsonio import Reader
from tests.hang.watcher import samples as S


def diag(cores: list[tuple[str, str, str, str]], dumps: int = 2) -> Diagnosis:
    return diagnose(parse(S.newest_log(cores, dumps)))


def test_consumer_starved_names_compute_its_reader_and_the_core_count() -> None:
    d = diag([S.STARVED] * 6 + [S.IDLE] * 2)
    assert d.pattern is HangPattern.CONSUMER_STARVED and d.progress is Progress.STUCK and d.hung
    g = d.groups[0]
    assert (g.count, g.risc, g.waypoint, g.kernel, g.role) == (
        6,
        "TRISC0",
        "CWFW",
        S.COMPUTE,
        "compute",
    )
    assert "demo_op_compute.cpp" in d.summary and "on 6 cores" in d.summary
    assert "reader (NCRISC, reader_demo_op.cpp) is done" in d.summary
    assert "fewer pages" in d.summary
    assert (d.cores_total, d.cores_idle) == (8, 2)
    assert {p.risc: p.state for p in g.peers}["NCRISC"] == "done"


def test_producer_blocked_while_the_consumer_is_done() -> None:
    d = diag([S.BLOCKED] * 3)
    g = d.groups[0]
    assert d.pattern is HangPattern.PRODUCER_BLOCKED
    assert (g.risc, g.waypoint, g.kernel, g.count) == ("NCRISC", "CRBW", S.READER, 3)
    assert "cb_reserve_back (CRBW)" in g.sentence and "pops fewer pages" in g.sentence


def test_producer_blocked_while_the_consumer_also_waits_is_a_cycle() -> None:
    g = diag([S.CYCLE] * 2).groups[0]
    assert g.pattern is HangPattern.PRODUCER_BLOCKED and (g.risc, g.waypoint) == ("NCRISC", "CRBW")
    assert "each waits for the other" in g.sentence and "capacity" in g.sentence


def test_noc_wait() -> None:
    g = diag([S.NOC, S.IDLE]).groups[0]
    assert g.pattern is HangPattern.NOC_WAIT and (g.risc, g.waypoint, g.count) == (
        "BRISC",
        "NWBW",
        1,
    )
    assert "noc_async_write_barrier (NWBW)" in g.sentence
    assert g.meaning.startswith("noc_async_write_barrier")


def test_never_started() -> None:
    g = diag([S.NEVER] * 4).groups[0]
    assert g.pattern is HangPattern.NEVER_STARTED and g.count == 4
    assert g.risc == "TRISC0" and g.waypoint == "W" and "never started" in g.sentence


def test_brisc_waiting_for_a_go_it_was_given_never_started() -> None:
    g = diag([("   GW,   W,   W,   W,   W", "D0G|BNT", "GGGG", S.IDS)]).groups[0]
    assert g.pattern is HangPattern.NEVER_STARTED and g.risc == "BRISC" and g.waypoint == "GW"


def test_running_past_the_last_waypoint_is_unknown_with_a_hint() -> None:
    d = diag([S.RUNNING] * 2)
    assert d.pattern is HangPattern.UNKNOWN and d.groups[0].risc == "TRISC0"
    assert "cannot tell" in d.summary and "DPRINT" in d.summary


def test_no_waypoints_is_unknown() -> None:
    d = diagnose(parse(S.NO_WAYPOINTS))
    assert d.pattern is HangPattern.UNKNOWN and d.progress is Progress.SINGLE_DUMP
    assert "no waypoints" in d.summary


def test_all_idle_is_idle_and_not_hung() -> None:
    d = diag([S.IDLE] * 3)
    assert d.pattern is HangPattern.IDLE and not d.hung and d.cores_idle == 3 and not d.groups


def test_other_wait_for_an_unknown_waypoint() -> None:
    g = diag([(" ABCW,   W,   W,   W,   W", "D0G|BNT", "DDDD", S.IDS)]).groups[0]
    assert g.pattern is HangPattern.OTHER_WAIT and 'WAYPOINT("ABCW")' in g.sentence


def test_different_states_make_different_groups_largest_pattern_first() -> None:
    d = diag([S.NOC] + [S.STARVED] * 3 + [S.BLOCKED] * 2)
    assert [g.pattern for g in d.groups] == [
        HangPattern.CONSUMER_STARVED,
        HangPattern.PRODUCER_BLOCKED,
        HangPattern.NOC_WAIT,
    ]
    assert counts(d)[HangPattern.CONSUMER_STARVED] == 3


def test_dispatch_cores_are_set_aside() -> None:
    text = S.newest_log([S.STARVED]).replace(
        "k_id[  0]: blank",
        "k_id[  0]: blank\nk_id[  2]: tt_metal/impl/dispatch/kernels/cq_dispatch.cpp",
    )
    line = S.newest_line(
        3, 3, "  NSW,   W,   W,   W,   W", "H0G|Bnt", "DDDD", "  2|  0|  0|  0|  0"
    )
    text = text.replace("k_id[  0]: blank", line + "\nk_id[  0]: blank")
    d = diagnose(parse(text))
    assert (
        d.cores_dispatch == 1 and d.pattern is HangPattern.CONSUMER_STARVED and len(d.groups) == 1
    )


# ---------------------------------------------------------------------------- over time
def test_stuck_slow_and_single_dump() -> None:
    assert diag([S.STARVED], dumps=3).progress is Progress.STUCK
    assert diag([S.STARVED], dumps=3).dumps_compared == (1, 2, 3)
    assert diag([S.STARVED], dumps=1).progress is Progress.SINGLE_DUMP
    moving = S.HEADER + S.newest_dump(1, 1.0, [S.CYCLE]) + S.newest_dump(2, 2.0, [S.STARVED])
    d = diagnose(parse(moving))
    assert d.progress is Progress.SLOW and not d.hung and d.summary.startswith("not hung yet")
    assert d.pattern is HangPattern.CONSUMER_STARVED


def test_the_last_complete_dump_is_read_and_a_cut_one_ignored() -> None:
    text = (
        S.newest_log([S.STARVED], dumps=2)
        + "-----\nDump #3 at 9.000s\n"
        + S.newest_line(0, 0, "   GW,   W,   W,   W,   W", "D0D|BNT", "DDDD", S.IDS)
        + "\n"
    )
    d = diagnose(parse(text))
    assert (
        d.dump == 2 and d.pattern is HangPattern.CONSUMER_STARVED and d.progress is Progress.STUCK
    )


def test_only_the_last_run_of_an_appended_log_counts() -> None:
    d = diagnose(parse(S.newest_log([S.STARVED]) + S.newest_log([S.IDLE])))
    assert d.pattern is HangPattern.IDLE


def test_an_assert_is_a_watcher_error_first() -> None:
    text = S.newest_log([S.STARVED]) + (
        "Device 0 worker core(x= 2,y= 0) virtual(x= 3,y= 2): trisc0 tripped an assert on line 44. "
        "Current kernel: " + S.COMPUTE + ".\n"
    )
    d = diagnose(parse(text))
    assert d.pattern is HangPattern.WATCHER_ERROR and d.groups[0].risc == "TRISC0"
    assert "tripped an assert on line 44" in d.summary and d.events
    assert d.groups[1].pattern is HangPattern.CONSUMER_STARVED


def test_a_pause_is_named() -> None:
    text = S.newest_log([S.IDLE]).replace(
        "k_id[  0]: blank", "Paused cores: 1-0:brisc, \nk_id[  0]: blank"
    )
    d = diagnose(parse(text))
    assert d.pattern is HangPattern.PAUSED and d.groups[0].cores[0].x == 1


def test_no_dump_at_all() -> None:
    d = diagnose(parse("At 0.1s starting\nLegend:\n"))
    assert d.pattern is HangPattern.UNKNOWN and d.progress is Progress.NO_DUMP and d.dump is None


@pytest.mark.parametrize("name", sorted(S.ALL_ERAS))
def test_every_era_diagnoses(name: str) -> None:
    d = diagnose(parse(S.ALL_ERAS[name]))
    expected = {
        "2023": HangPattern.CONSUMER_STARVED,
        "2024-03": HangPattern.NOC_WAIT,
        "2024-phys": HangPattern.UNKNOWN,
        "2025-virtual": HangPattern.PRODUCER_BLOCKED,
        "newest": HangPattern.CONSUMER_STARVED,
        "no-waypoints": HangPattern.UNKNOWN,
    }
    assert d.pattern is expected[name], d.lines()


def test_old_logs_name_physical_cores() -> None:
    g = diagnose(parse(S.ERA_2023)).groups[0]
    assert g.count == 2 and all(c.coords == "physical" and c.device is None for c in g.cores)
    assert (g.risc, g.kernel) == ("BRISC", S.WRITER)
    peers = {p.risc: (p.state, p.kernel) for p in g.peers}
    assert peers["TRISC2"] == ("done", S.COMPUTE)  # the one trisc id of a three-id line
    assert "the compute (TRISC2, demo_op_compute.cpp) is done" in g.sentence


# ---------------------------------------------------------------------------- text, json
def test_lines_are_plain_text_with_the_evidence() -> None:
    lines = diag([S.STARVED] * 2).lines()
    assert lines[0].startswith("CONSUMER_STARVED: on 2 cores")
    assert any("stuck: no core changed across dumps #1, #2" in ln for ln in lines)
    assert any(ln.strip().startswith("CWFW = cb_wait_front") for ln in lines)
    assert all("[" not in ln.split(":")[0] and "\x1b" not in ln for ln in lines)


@pytest.mark.parametrize("cores", [[S.STARVED] * 3, [S.CYCLE, S.NOC, S.IDLE], [S.IDLE], [S.NEVER]])
def test_diagnosis_json_round_trip(cores: list[tuple[str, str, str, str]]) -> None:
    d = diag(cores)
    doc = json.loads(json.dumps(d.to_json()))
    assert doc["schema"] == SCHEMA == "lnrepro.hang/2"
    back = Diagnosis.from_json(Reader(doc, "t"))
    assert back == d and back.lines() == d.lines()


def test_a_hang_1_document_is_still_read() -> None:
    """A record written before /2 (no source, idle, unknowns, frames, cbs) reads as it was."""
    d = diag([S.STARVED, S.IDLE])
    doc = json.loads(json.dumps(d.to_json()))
    for k in ("source", "idle", "unknowns", "key"):
        del doc[k]
    for g in doc["groups"]:
        for k in ("name", "frames", "cbs", "go_message"):
            del g[k]
        for c in g["cores"]:
            del c["noc0"]
    doc["schema"] = "lnrepro.hang/1"
    back = Diagnosis.from_json(Reader(doc, "t"))
    assert back.key == d.key and back.groups == d.groups and back.summary == d.summary


def test_from_json_refuses_another_schema() -> None:
    from lnrepro.errors import MalformedRecord

    doc = diag([S.STARVED]).to_json() | {"schema": "lnrepro.hang/9"}
    with pytest.raises(MalformedRecord):
        Diagnosis.from_json(Reader(doc, "t"))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from([S.STARVED, S.BLOCKED, S.CYCLE, S.NOC, S.NEVER, S.RUNNING, S.IDLE]),
        min_size=0,
        max_size=12,
    ),
    st.integers(1, 3),
    st.integers(0, 3000),
)
def test_any_mix_or_cut_never_raises(
    cores: list[tuple[str, str, str, str]], dumps: int, cut: int
) -> None:
    text = S.newest_log(cores, dumps)
    d = diagnose(parse(text[: len(text) - cut]))
    assert isinstance(d.lines(), list)


def test_noc_command_buffer_waits_are_noc_waits_and_ntw_is_not() -> None:
    from lnrepro.hang.waypoints import is_noc_wait

    assert [is_noc_wait(w) for w in ("RP2W", "NWPW", "NSMW", "NTW", "CWFW", "W", None)] == [
        True,
        True,
        True,
        False,
        False,
        False,
        False,
    ]
    g = diag([("   NTW, RP2W,   W,   W,   W", "D0G|BNT", "GDDD", S.IDS)]).groups[0]
    assert g.pattern is HangPattern.NOC_WAIT and (g.risc, g.waypoint) == ("NCRISC", "RP2W")


def test_a_user_kernel_named_like_dispatch_is_not_a_dispatch_core() -> None:
    text = S.newest_log([S.STARVED]).replace(
        S.COMPUTE, f"{S.OP}/compute/dispatch_heavy_compute.cpp"
    )
    d = diagnose(parse(text))
    assert d.cores_dispatch == 0 and d.pattern is HangPattern.CONSUMER_STARVED


def test_a_wrong_field_names_its_place_and_computed_fields_are_not_read_back() -> None:
    """The hang document is derived from its types (issue 39): a wrong value is refused at its
    place, and what follows from the rest (hung, key, count, meaning) is recomputed on read."""
    from lnrepro.errors import MalformedRecord

    d = diag([S.STARVED] * 2)
    doc = json.loads(json.dumps(d.to_json()))
    doc["groups"][0]["cores"][1]["x"] = "one"
    with pytest.raises(MalformedRecord, match=r"t: groups\[0\]\.cores\[1\]\.x should be int"):
        Diagnosis.from_json(Reader(doc, "t"))
    doc = json.loads(json.dumps(d.to_json())) | {"hung": False, "key": "lies"}
    doc["groups"][0] |= {"count": 99, "meaning": "lies"}
    back = Diagnosis.from_json(Reader(doc, "t"))
    assert back == d and back.hung and back.key == d.key and back.groups[0].count == 2
