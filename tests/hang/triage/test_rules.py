"""The shared rule for a hang's cause on one core (lnrepro/hang/rules.py), on its own: pure."""

from __future__ import annotations

from lnrepro.hang import rules
from lnrepro.hang.model import HangPattern as P
from lnrepro.hang.rules import Proc


def _w(risc: str, wait: P, role: str) -> Proc:
    return Proc(risc, rules.WAITING, wait, role)


def test_the_starved_unpacker_is_the_cause_and_the_writer_its_consequence() -> None:
    """The look-alike's hung LayerNorm: the reader done, TRISC0 waiting for pages, TRISC1/2
    running, the writer waiting for pages downstream. Given in the writer-first order triage
    prints them, the unpacker is still the cause."""
    procs = [
        _w("BRISC", P.CONSUMER_STARVED, "writer"),
        Proc("NCRISC", rules.DONE, None, "reader"),
        _w("TRISC0", P.CONSUMER_STARVED, "compute"),
        Proc("TRISC1", rules.RUNNING, None, "compute"),
        Proc("TRISC2", rules.RUNNING, None, "compute"),
    ]
    v = rules.explain(procs)
    assert v is not None and (v.pattern, procs[v.culprit].risc, v.why) == (
        P.CONSUMER_STARVED,
        "TRISC0",
        "starved",
    )
    assert [procs[i].risc for i in v.consequences] == ["BRISC"]


def test_each_waiting_for_the_other_names_the_blocked_producer() -> None:
    procs = [
        _w("BRISC", P.CONSUMER_STARVED, "writer"),
        _w("NCRISC", P.PRODUCER_BLOCKED, "reader"),
        _w("TRISC0", P.CONSUMER_STARVED, "compute"),
    ]
    v = rules.explain(procs)
    assert v is not None and (v.pattern, procs[v.culprit].risc, v.why) == (
        P.PRODUCER_BLOCKED,
        "NCRISC",
        "cycle",
    )
    assert {procs[i].risc for i in v.consequences} == {"BRISC", "TRISC0"}


def test_an_assert_leads_and_a_running_producer_is_not_passed_over() -> None:
    waiting = _w("BRISC", P.CONSUMER_STARVED, "writer")
    v = rules.explain([waiting, Proc("TRISC2", rules.ASSERTED, None, "compute")])
    assert v is not None and (v.pattern, v.culprit, v.consequences) == (P.KERNEL_ASSERT, 1, (0,))
    # the producer runs with no wait shown: the writer is not the cause, and it cannot be told why
    v = rules.explain([waiting, Proc("TRISC2", rules.RUNNING, None, "compute")])
    assert v is not None and (v.pattern, v.culprit, v.why) == (P.UNKNOWN, 1, "running")


def test_alone_done_and_roles() -> None:
    v = rules.explain([_w("BRISC", P.CONSUMER_STARVED, "writer")])
    assert v is not None and v.why == "starved-remote" and v.consequences == ()
    assert rules.explain([Proc("BRISC", rules.DONE, None, "writer")]) is None
    assert rules.explain([]) is None
    assert rules.role("TRISC0", "layernorm_fused_rm", None) == "compute"
    assert rules.role("BRISC", None, "kernels/dataflow/reader_x.cpp") == "reader"
    assert rules.role("NCRISC", None, None) == "reader"
    assert rules.wait_of("CWFW") is P.CONSUMER_STARVED and rules.wait_of("RP2W") is P.NOC_WAIT
    assert rules.wait_of("K") is None and rules.wait_of("ABCW") is P.OTHER_WAIT
