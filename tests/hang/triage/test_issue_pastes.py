"""Shapes of real tt-triage pastes from tt-metal's issues (issue 48), rebuilt in the corpus from
the scripts' formats (tools/triage/dump_callstacks.py, tabulate era): a reader and a writer that
wait on each other are both named; compute stopped past the user's own waypoint (AST1, not a W
code) is the cause, and the data movers waiting behind it are its consequences."""

from __future__ import annotations

from pathlib import Path

from lnrepro.hang.door import read_paste
from lnrepro.hang.model import Diagnosis
from tests.hang.triage import corpus as C
from tests.harness import lnrepro


def _read(text: str) -> Diagnosis:
    r = read_paste(text)
    assert r is not None and r.format.value == "tt-triage"
    return r.diagnosis


def test_a_reader_and_a_writer_waiting_on_each_other_are_both_named() -> None:
    d = _read(C.tabulate_framework(C.MUTUAL))
    assert d.pattern.value == "PRODUCER_BLOCKED", d.summary
    assert "reader_ln_bw" in d.summary and "writer_ln_bw" in d.summary, d.summary
    assert "cb_reserve_back" in d.summary and "cb_wait_front" in d.summary, d.summary
    assert "wait on each other" in d.summary, d.summary
    assert "a consequence, not the cause" not in d.summary, d.summary


def test_data_movers_behind_a_users_own_waypoint_are_consequences() -> None:
    for text in (C.tabulate_framework(C.OWN_WAYPOINT), C.rich_framework(C.OWN_WAYPOINT)):
        d = _read(text)
        g = d.primary
        assert g is not None and g.risc == "TRISC0", (g and g.risc, d.summary)
        assert g.waypoint == "AST1", g.waypoint
        assert 'WAYPOINT("AST1")' in d.summary, d.summary
        assert "the reader (NCRISC) waits too, behind it" in d.summary, d.summary
        assert "the writer (BRISC) waits too, downstream of it" in d.summary, d.summary
        assert "consequences, not the cause" in d.summary, d.summary


def test_the_cut_cycle_keeps_its_culprit() -> None:
    """The own-waypoint rule needs a readable code of the user's: the 100-column cut of the
    cycle (compute's frame cut, its waypoint a stock one) still blames the reader."""
    d = _read(C.rich_framework(C.CYCLE, 100))
    assert d.primary is not None and d.primary.risc == "NCRISC", d.summary


def test_running_operations_alone_name_the_op_id_and_cores_and_invent_nothing() -> None:
    """dump_running_operations at 0602ee8a5830 (Op Id | Op Name | … | Cores), names N/A."""
    d = _read(C.running_ops_only())
    assert d.primary is None and not d.groups, d.lines()
    assert "op id 1042" in d.summary, d.summary
    assert "16:2-1" in d.summary and "16:4-1" in d.summary, d.summary
    assert "on 6 cores" in d.summary and "1 more" in d.summary, d.summary
    assert "N/A" in d.summary and "Kernel:" not in d.summary, d.summary
    assert "shows no core" not in d.summary


def test_a_running_operation_with_a_name_keeps_it() -> None:
    d = _read(C.running_ops_only(name="MyCustomOp"))
    assert "MyCustomOp on 16:2-1, 16:2-2" in d.summary, d.summary


def test_the_one_script_vv_table_cut_names_the_frame_and_the_launch_messages() -> None:
    """tt-triage.py at 90b63baa50e2 with -vv, cut at the right by the user: compute stuck in an
    LLK reconfigure (no CB wait) is named by its frame; the cores on different launch messages
    (RD PTR, launch_msg_rd_ptr) are named with theirs."""
    for column in (10000, 160, 140):
        d = _read(C.cut(C.one_script(C.RECONFIG), column))
        g = d.primary
        assert g is not None and g.risc == "TRISC0", (column, d.summary)
        assert "llk_unpack_reconfig_data_format_srca" in d.summary, (column, d.summary)
        assert "cb_wait_front" not in d.summary and "cb_reserve_back" not in d.summary
        assert "different launch messages (RD PTR)" in d.summary, (column, d.summary)
        assert "RD PTR 0 on 0:(0,0)" in d.summary and "RD PTR 1 on 0:(1,0)" in d.summary, (
            column,
            d.summary,
        )


def test_one_launch_message_everywhere_is_not_said() -> None:
    d = _read(C.one_script(C.MUTUAL))
    assert "launch message" not in d.summary, d.summary


def test_brisc_polling_in_firmware_is_not_the_culprit_and_the_loop_is_named() -> None:
    """The one-script -vv table cut at the right, BRISC in firmware's wait_ncrisc_trisc (its
    kernel returned, brisc.cc) while TRISC2 loops in kernel_main: TRISC2 is named by its frame,
    BRISC's poll is said and not blamed, no CB wait is invented."""
    for column in (10000, 160, 140):
        d = _read(C.cut(C.one_script(C.FIRMWARE_POLL), column))
        g = d.primary
        assert g is not None and g.risc == "TRISC2", (column, d.summary)
        assert "runs in kernel_main" in d.summary, (column, d.summary)
        assert "cb_wait_front" not in d.summary and "cb_reserve_back" not in d.summary
        said = "\n".join(d.lines())
        assert "firmware polls in wait_ncrisc_trisc ()" in said, (column, said)
        assert "writer (BRISC, writer_ln_bw) running" not in said, said
        assert "RD PTR 0 on 0:(0,0); RD PTR 1 on 0:(1,0)" in d.summary, (column, d.summary)


def test_brisc_polling_alone_names_the_poll_and_blames_nobody() -> None:
    for column in (10000, 140):
        d = _read(C.cut(C.one_script(C.FIRMWARE_POLL_ALONE), column))
        assert d.primary is None and not d.groups, (column, d.lines())
        assert "BRISC on 0:(0,0) polls in firmware's wait_ncrisc_trisc ()" in d.summary, d.summary
        assert "cannot tell which one holds it" in d.summary, d.summary
        assert "idle in firmware, in reset or done" not in d.summary, d.summary
        assert "RD PTR 0 on 0:(0,0); RD PTR 1 on 0:(1,0)" in d.summary, (column, d.summary)


def _said(text: str) -> Diagnosis:
    r = read_paste(text)
    assert r is not None and r.format.value == "summary", text
    return r.diagnosis


def test_a_condensed_summary_of_triages_checks_says_what_they_show() -> None:
    """A few lines of prose around check_noc_status's own lines (05781ebca98d: "Device 0 at
    <loc> on brisc for NOC 0", then register, variable and their counts): said back with the
    numbers, the failure first; no culprit invented."""
    d = _said(C.condensed_prose())
    assert d.primary is None and not d.groups, d.lines()
    assert d.pattern.value == "UNKNOWN", d.summary
    assert d.summary.index("check_noc_status failed") < d.summary.index(
        "check_binary_integrity passed"
    ), d.summary
    assert (
        "check_noc_status failed on device 0 1-1 (0,0) brisc NOC 0: register "
        "NIU_MST_NONPOSTED_WR_REQ_SENT=38 but variable noc_nonposted_writes_num_issued=40"
        in d.summary
    ), d.summary
    assert "shows no core" not in d.summary and "cannot tell which kernel" in d.summary


def test_a_table_quoting_triages_checks_says_what_they_show() -> None:
    d = _said(C.condensed_table())
    assert d.primary is None and not d.groups, d.lines()
    assert "check_arc passed" in d.summary, d.summary
    assert "check_binary_integrity failed" in d.summary, d.summary
    assert "Data mismatch in section .text at address 0x00006a40" in d.summary, d.summary
    assert "in ELF file …/trisc0/trisc0.elf.xip.elf" in d.summary, d.summary  # no fold at 80
    assert "register NIU_MST_RD_RESP_RECEIVED=12 but variable noc_reads_num_issued=13" in d.summary


def test_an_llk_asserts_condition_file_and_function_are_said() -> None:
    d = _said(C.condensed_llk_assert())
    assert d.primary is None and not d.groups, d.lines()
    assert d.pattern.value == "KERNEL_ASSERT", d.summary
    assert f"LLK_ASSERT({C.LLK_COND}) failed" in d.summary, d.summary
    assert f"in {C.LLK_FILE} line 184" in d.summary, d.summary
    assert f"function {C.LLK_FUNC}" in d.summary, d.summary
    assert "on TRISC1 of device 0" in d.summary, d.summary
    assert "cannot tell which core" in d.summary, d.summary


def test_an_assert_cut_short_is_said_to_be_cut() -> None:
    d = _said(f"trisc1 stopped at LLK_ASSERT({C.LLK_COND[:20]}\n")
    assert "cut: the condition is not whole" in d.summary, d.summary


def test_condensed_summaries_are_not_refused_by_explain(tmp_path: Path) -> None:
    for text in (C.condensed_prose(), C.condensed_table(), C.condensed_llk_assert()):
        p = tmp_path / "paste.txt"
        p.write_text(text)
        code, out, err = lnrepro("explain", p, width=200)
        assert code != 4 and "googletest markers" not in out + err, out + err
        assert "check_noc_status failed" in out or "LLK_ASSERT(" in out, out


def test_a_cut_that_hides_every_callstack_picks_no_culprit() -> None:
    """At 100 columns the one-script table loses its Kernel Callstack column: five RISCs of the
    core run kernels at places the text does not show. Blaming one (the reader, by the role
    order) would be a guess that differs from the whole table's TRISC2: none is named, and the
    diagnosis says why."""
    d = _read(C.cut(C.one_script(C.FIRMWARE_POLL), 100))
    assert d.primary is None and not d.groups, d.lines()
    assert "5 RISCs run kernels" in d.summary and "cannot tell which one hangs" in d.summary
    assert any("Kernel Callstack" in u for u in d.unknowns), d.unknowns


def test_a_summarys_assert_with_its_core_is_the_assert_alone() -> None:
    """The assert quoted under its core (``…(trisc2): stopped at LLK_ASSERT(…)`` then frame #0)
    is the call up to its own parenthesis: the frame's ``()`` after it is not part of it, and
    the quote is one event, not two."""
    d = _said(C.summary(C.ASSERTED))
    assert d.pattern.value == "KERNEL_ASSERT", d.summary
    assert '(LLK_ASSERT(false, "stall after commit"))' in d.summary, d.summary
    assert "#0" not in d.summary, d.summary
    assert sum("LLK_ASSERT" in e for e in d.events) == 1, d.events


def test_the_checks_alone_say_what_they_report() -> None:
    """check_binary_integrity and check_noc_status (42bfdec046d2: "Mismatched state:", then
    each register, variable and their counts) with no callstack table: the headline is the
    mismatch with its numbers, not "the text shows no core"; "Mismatched state:" is no event
    of its own."""
    d = _read(C.checks_only(C.NOC))
    assert d.primary is None and not d.groups, d.lines()
    assert "only what triage's checks report" in d.summary, d.summary
    assert "counters disagree: NIU_MST_" in d.summary, d.summary
    assert not any(e.rstrip().endswith("Mismatched state:") for e in d.events), d.events


def test_triages_own_check_lines_are_not_taken_for_a_summary() -> None:
    """check_noc_status's lines inside its own ``check_noc_status.py:`` section are tt-triage's
    output: no note that the text also holds a user's summary."""
    for text in (C.tabulate_framework(C.NOC), C.rich_framework(C.NOC), C.checks_only(C.NOC)):
        d = _read(text)
        assert not any("summary lines" in w for w in d.warnings), d.warnings
