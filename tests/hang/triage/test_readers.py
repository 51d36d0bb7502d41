"""The pieces under the corpus: box tables read back (whole, cut, without a top border), frames
and waypoints, places, summaries in other words, and no input that makes a reader raise."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from lnrepro.hang.door import read_paste, read_triage, sniff
from lnrepro.hang.model import HangPattern, HangSource
from lnrepro.hang.triage.output import frame, parse_place, parse_triage, waypoint_of
from lnrepro.hang.triage.summary import parse_summary
from lnrepro.hang.triage.tables import CLIPPED, find_tables, strip_ansi
from tests.hang.triage import corpus as C


def test_a_rounded_table_with_multirow_cells_is_one_row_per_risc() -> None:
    text = C.tabulate_framework(C.CYCLE)
    t = next(t for t in find_tables(text.splitlines()) if t.column("Kernel Callstack") is not None)
    assert t.style == "rounded" and t.cut_at is None and t.header[:3] == ["Dev", "Loc", "RiscV"]
    assert len(t.rows) == 10  # 2 cores x 5 RISCs
    cell = t.cell(t.rows[1], "Kernel Callstack") or ""
    assert cell.splitlines()[0].startswith("#0 0xFFC01A2C in cb_reserve_back ()")


def test_a_cut_table_marks_the_cells_the_edge_went_through() -> None:
    text = C.cut(C.rich_framework(C.STARVED), 130)
    t = next(t for t in find_tables(text.splitlines()) if t.column("RiscV") is not None)
    assert t.cut_at == 130 and t.cut_columns and t.cut_columns[0].endswith(CLIPPED)
    assert t.cell(t.rows[0], "Waypoint") == "CWFW"  # left of the cut: whole
    assert (t.cell(t.rows[0], "Kernel Callstack") or "").endswith(CLIPPED) or t.column(
        "Kernel Callstack"
    ) is None


def test_a_table_pasted_from_its_middle_is_still_read() -> None:
    lines = C.rich_framework(C.NOC).splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("┃ Dev"))
    d = read_paste("\n".join(lines[start:]))
    assert d is not None and d.diagnosis.pattern is HangPattern.NOC_WAIT
    assert any("without its top border" in n for n in d.source.noise)


def test_frames_waypoints_and_places() -> None:
    f = frame("  #12 0x0000ABCD in ckernel::llk_wait_tiles () at ./llk.h 45:5")
    assert f is not None and (f.index, f.function, f.file, f.line, f.column, f.pc) == (
        12,
        "ckernel::llk_wait_tiles",
        "./llk.h",
        45,
        5,
        0xABCD,
    )
    assert frame("#1 kernel_main () at ./k.cpp:31") is not None
    assert frame("#0 0x0000A1B4 in cb_wait_fr" + CLIPPED) is None  # never half a function
    cut = frame("#0 0x0000A1B4 in cb_wait_front () at ./tt_me" + CLIPPED)
    assert cut is not None and cut.function == "cb_wait_front" and cut.file is None
    assert waypoint_of(f"write_debug_waypoint<{int.from_bytes(b'NSW', 'little')}>") == "NSW"
    assert waypoint_of("write_debug_waypoint<0>") is None
    p = parse_place("18-25 (e0,13)", 1)
    assert p is not None and (p.device, p.x, p.y, p.noc0, p.core_type) == (
        1,
        0,
        13,
        (18, 25),
        "eth",
    )
    assert parse_place("garbage", 0) is None


def test_a_debug_waypoint_frame_names_the_wait_when_the_table_has_no_waypoint() -> None:
    n = int.from_bytes(b"CRBW", "little")
    text = C.first_framework(C.STARVED).replace("cb_wait_front ()", f"write_debug_waypoint<{n}> ()")
    d = read_paste(text)
    assert d is not None and d.diagnosis.pattern is HangPattern.PRODUCER_BLOCKED
    assert d.diagnosis.primary is not None and d.diagnosis.primary.waypoint == "CRBW"


def test_summaries_in_other_words() -> None:
    out = parse_summary(
        "dev 0 cores 1-1, 2-1 (ncrisc): kernel reader_x, waypoint NSW\n"
        "  noc_semaphore_wait () at ./dataflow_api.h:1093\n"
        "Device 0, core (3,4) [trisc0, trisc1, trisc2]: idle\n"
    )
    assert [(r.place.noc0, r.risc, r.kernel_name, r.waypoint) for r in out.rows[:2]] == [
        ((1, 1), "NCRISC", "reader_x", "NSW"),
        ((2, 1), "NCRISC", "reader_x", "NSW"),
    ]
    assert (
        out.rows[0].frames[0].function == "noc_semaphore_wait"
        and out.rows[0].frames[0].line == 1093
    )
    assert [(r.place.x, r.place.y, r.said_idle) for r in out.rows[2:]] == [(3, 4, True)] * 3


def test_a_summary_names_no_kernel_it_was_not_given() -> None:
    d = read_paste(
        "Device 1, core 1-5 (brisc):\n  #0 0x00001000 in cb_reserve_back () at ./dataflow_api.h 375:9\n"
    )
    assert d is not None and d.format is HangSource.SUMMARY
    g = d.diagnosis.primary
    assert g is not None and g.name is None and g.kernel is None and g.risc == "BRISC"
    assert d.diagnosis.key == "PRODUCER_BLOCKED:?:BRISC:CRBW"  # the call's own waypoint
    assert any("kernel's name" in u for u in d.diagnosis.unknowns)
    assert any("source file" in u for u in d.diagnosis.unknowns)


def test_every_risc_idle_is_idle_and_not_hung() -> None:
    s = C.Scenario("idle", (C.idle_core(0, 0, 0), C.idle_core(0, 1, 0)))
    d = read_paste(C.rich_framework(s))
    assert d is not None and d.diagnosis.pattern is HangPattern.IDLE and not d.diagnosis.hung
    assert {i.risc for i in d.diagnosis.idle} == {"BRISC", "NCRISC", "TRISC0", "TRISC1", "TRISC2"}


def test_failed_data_providers_and_done_cores() -> None:
    text = "\ndispatcher_data.py:\n  Data provider script failed: Inspector RPC is not available\n\ndump_callstacks.py:\n  Cannot run script due to failed dependencies.\n"
    out = parse_triage(text)
    assert "dispatcher_data" in out.failed_scripts and out.events
    d = read_triage(text)
    assert d is not None and d.pattern is HangPattern.UNKNOWN and "dispatcher_data" in d.summary
    done = C.Scenario(
        "done",
        (C.Core(0, (0, 0), tuple(C.replace(r, go="DONE") for r in C._starved_core(0).riscs)),),
    )
    d2 = read_paste(C.rich_framework(done).replace("pass", "pass"))
    assert d2 is None or d2.diagnosis.pattern in (HangPattern.IDLE, HangPattern.UNKNOWN)


def test_read_triage_ignores_text_without_triage() -> None:
    assert read_triage("[ RUN      ] A.b\n[       OK ] A.b (1 ms)\n") is None
    assert (
        sniff(strip_ansi("\x1b[32m= Checking device 0\x1b[0m\nDONE: OK\n")) is HangSource.TT_TRIAGE
    )


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(C.cases()), st.integers(0, 400), st.integers(0, 60), st.integers(5, 300))
def test_no_cut_hole_or_width_makes_a_reader_raise(
    case: C.Case, at: int, hole: int, width: int
) -> None:
    text = case.text[: at * 7] + case.text[at * 7 + hole :]
    r = read_paste(C.cut(text, width))
    if r is not None:
        json.dumps(r.to_json())
        r.diagnosis.lines()


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet="│┃┏━┳┓┡╇┩╭─┬╮├┼┤╰┴╯└┘#0x()ab .:-_,\n=DeviceCoreks[]|", max_size=400))
def test_box_drawing_garbage_never_raises(text: str) -> None:
    r = read_paste(text)
    if r is not None:
        r.diagnosis.lines()


def test_the_one_script_v_table_names_kernels_and_says_where_is_unknown() -> None:
    """90b63baa50e2 with -v: ``Loc | BRISC | … | Kernel ID:Name``, no callstack, no waypoint."""
    from tabulate import tabulate

    table = [
        ["Loc", "BRISC", "NCRISC", "TRISC0", "TRISC1", "TRISC2", "Kernel ID:Name"],
        ["0,0", "12:writer_ln_bw", "0:", "0:", "0:", "0:"],
    ]
    text = (
        "= Checking device 0\n"
        + str(tabulate(table, headers="firstrow", tablefmt=C._rounded()))
        + "\nDONE: OK\n"
    )
    r = read_paste(text)
    assert r is not None and r.era == "one-script"
    g = r.diagnosis.primary
    assert g is not None and g.risc == "BRISC" and g.name == "writer_ln_bw" and not g.frames
    assert r.diagnosis.pattern is HangPattern.UNKNOWN and not r.diagnosis.hung
    assert any("-vv" in u for u in r.diagnosis.unknowns)
    assert {i.risc for i in r.diagnosis.idle} == {"NCRISC", "TRISC0", "TRISC1", "TRISC2"}


def test_the_newer_running_operations_table_is_read() -> None:
    """dump_running_operations at 0602ee8a5830: ``Op Id | Op Name | … | Cores``."""
    import io

    from rich.console import Console
    from rich.table import Table

    t = Table()
    for h in (
        "Op Id",
        "Op Name",
        "Op Params",
        "Prev Op Id",
        "Prev Op Name",
        "Prev Op Params",
        "Device Cnt",
        "Core Cnt",
        "Devices",
        "Cores",
    ):
        t.add_column(h)
    t.add_row(
        "7", "LayerNormBackward (trace id: 3)", "", "6", "Add", "", "1", "2", "0", "0:1-1\n0:2-1"
    )
    buf = io.StringIO()
    Console(file=buf, width=500, color_system=None).print(t)
    out = parse_triage(
        "\ndump_running_operations.py:\n" + buf.getvalue() + C.rich_framework(C.STARVED)
    )
    assert out.ops[0] == "LayerNormBackward (trace id: 3) on 0:1-1, 0:2-1"


def test_a_summary_grouped_under_its_device_with_inline_frames() -> None:
    r = read_paste(
        "Device 2:\n"
        "  core 3-3 (brisc): kernel writer_x, cb_wait_front (dataflow_api.h:418) <- kernel_main (writer_x.cpp:57)\n"
        "  core 4-3 (ncrisc, trisc0, trisc1, trisc2): idle\n"
    )
    assert r is not None and r.format is HangSource.SUMMARY
    g = r.diagnosis.primary
    assert g is not None and [c.device for c in g.cores] == [2] and g.risc == "BRISC"
    assert [f.function for f in g.frames] == [
        "cb_wait_front",
        "kernel_main",
    ] and g.kernel == "writer_x.cpp"
    assert r.diagnosis.key == "CONSUMER_STARVED:writer_x.cpp:BRISC:CWFW"
    assert {i.risc for i in r.diagnosis.idle} == {"NCRISC", "TRISC0", "TRISC1", "TRISC2"}


def test_dispatch_kernels_wait_by_design_and_are_set_aside() -> None:
    prefetch = C.Core(
        0,
        (0, 8),
        (
            C.Risc(
                "brisc",
                5,
                "cq_prefetch",
                "GO",
                "NSW",
                0x9000,
                ((0x9000, "noc_semaphore_wait", C.DATAFLOW, 1093, 12),),
            ),
            C._idle("ncrisc", 0x5B20),
            C._idle("trisc0", 0x6C30),
            C._idle("trisc1", 0x6D40),
            C._idle("trisc2", 0x6E50),
        ),
    )
    s = C.Scenario("with-dispatch", (*C.STARVED.cores, prefetch))
    r = read_paste(C.rich_framework(s))
    assert r is not None and r.diagnosis.pattern is HangPattern.CONSUMER_STARVED
    assert (
        all(g.name != "cq_prefetch" for g in r.diagnosis.groups) and r.diagnosis.cores_dispatch == 1
    )
    assert any(i.risc == "BRISC" and "dispatch" in i.why for i in r.diagnosis.idle)


def test_a_paste_quoted_in_an_issue_reply_is_read() -> None:
    quoted = "".join(f"> {ln}\n" for ln in C.rich_framework(C.NOC).splitlines())
    r = read_paste("As you can see:\n" + quoted)
    assert r is not None and r.diagnosis.pattern is HangPattern.NOC_WAIT
    assert r.diagnosis.source is not None and r.diagnosis.source.noise[0] == "quoted with '> '"


def test_a_paste_of_two_kinds_is_read_as_the_larger_and_says_so() -> None:
    from tests.hang.watcher import pastes as P

    r = read_paste(P.excerpt("2024-03") + "\n" + C.rich_framework(C.NOC))
    assert r is not None and r.format is HangSource.TT_TRIAGE
    assert any("also holds watcher-log" in w for w in r.diagnosis.warnings)


def test_a_brisc_given_a_go_still_at_its_go_wait_never_started_as_the_watcher_says() -> None:
    """BRISC with a kernel, go message GO, waypoint GW, in firmware main (): the watcher rules'
    NEVER_STARTED (tests/hang/watcher/test_diagnose.py), not a kernel that returned."""
    from lnrepro.hang.watcher.diagnose import diagnose
    from lnrepro.hang.watcher.log import parse

    core = C.Core(
        0,
        (0, 0),
        (
            C.Risc("brisc", 61, "writer_ns", "GO", "GW", 0x4A10, C._fw("brisc", 0x4A10)),
            *(C.Risc(r, 60, "reader_ns", "GO", "W", 0x5B20, C._fw(r, 0x5B20)) for r in ("ncrisc",)),
        ),
    )
    d = read_triage(C.rich_framework(C.Scenario("never", (core, C.idle_core(0, 1, 0)))))
    assert d is not None and d.pattern is HangPattern.NEVER_STARTED, d and d.lines()
    g = d.primary
    assert g is not None and (g.risc, g.waypoint, g.name) == ("BRISC", "GW", "writer_ns")
    assert "never started" in g.sentence
    w = diagnose(
        parse(
            "Device 0 worker core(x= 0,y= 0) virtual(x= 1,y= 2):   GW,   W,   W,   W,"
            "   W  rmsg:D0G|BNT h_id:  1 smsg:GGGG k_ids: 61| 60|  0|  0|  0\n"
        )
    )
    assert (w.pattern, w.groups[0].risc) == (d.pattern, g.risc)
