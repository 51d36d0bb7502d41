"""The hang rule's corners that the rule-by-rule tests (tests/hang/triage/test_cause_rules.py) do
not reach: a consumer behind a producer stuck on space while something between them runs, the
last resort of a core with nothing waiting, processors of no known role, the consequences' words
on both sides of the cause, and which kernel names are tt-metal's own dispatch. Pure: milliseconds.

Facts of tt-metal (commit 6cbc3065ab387d1c0a6c0a2af278da42c983aa11): the reader runs on NCRISC,
compute on the TRISCs, the writer on BRISC; ``cb_reserve_back`` waits for space (watcher
waypoint CRBW), ``cb_wait_front`` for pages (CWFW); the dispatch kernels are
``tt_metal/impl/dispatch/kernels/cq_prefetch.cpp`` and ``cq_dispatch.cpp``, the fabric's router
``fabric_erisc_router.cpp``."""

from __future__ import annotations

from lnrepro.hang import rules
from lnrepro.hang.model import HangPattern as P
from lnrepro.hang.rules import Proc

R, C, W = "reader", "compute", "writer"


def wait(risc: str, pattern: P | None, role: str) -> Proc:
    return Proc(risc, rules.WAITING, pattern, role)


def st(risc: str, status: str, role: str, *, own: bool = False) -> Proc:
    return Proc(risc, status, None, role, own)


def verdict(procs: list[Proc]) -> tuple[P, str, str, list[str]]:
    v = rules.explain(procs)
    assert v is not None
    return v.pattern, procs[v.culprit].risc, v.why, [procs[i].risc for i in v.consequences]


# ------------------------------------------- 3: a starved consumer behind a producer out of space
def test_a_writer_starved_behind_a_reader_out_of_space_while_compute_runs_names_the_reader() -> (
    None
):
    """The reader waits for space, compute runs (it is the reader's consumer, so the reader's
    own rule cannot decide), the writer waits for pages: the writer's producers include the
    blocked reader, and with no compute stopped at a waypoint of the user's own between them,
    the reader (first blocked producer upstream) is the cause, a cycle of waits."""
    procs = [
        wait("BRISC", P.CONSUMER_STARVED, W),
        st("TRISC0", rules.RUNNING, C),
        wait("NCRISC", P.PRODUCER_BLOCKED, R),
    ]
    assert verdict(procs) == (P.PRODUCER_BLOCKED, "NCRISC", "cycle", ["BRISC"])


def test_a_compute_stopped_at_the_users_own_waypoint_between_them_is_the_cause() -> None:
    """The same, but compute stands past a waypoint of the user's own (AST1): it is what both
    the reader and the writer wait behind, an OTHER_WAIT on compute, and both waiters are its
    consequences (reader upstream first)."""
    procs = [
        wait("BRISC", P.CONSUMER_STARVED, W),
        st("TRISC0", rules.RUNNING, C, own=True),
        wait("NCRISC", P.PRODUCER_BLOCKED, R),
    ]
    assert verdict(procs) == (P.OTHER_WAIT, "TRISC0", "own-waypoint", ["NCRISC", "BRISC"])


def test_only_a_running_proc_at_its_own_waypoint_is_between_them() -> None:
    """A compute marked at the user's own waypoint but done, or one merely running without it,
    is not what they wait behind: the blocked reader stays the cause."""
    for compute in (st("TRISC0", rules.DONE, C, own=True), st("TRISC0", rules.RUNNING, C)):
        procs = [
            wait("NCRISC", P.PRODUCER_BLOCKED, R),
            compute,
            st("TRISC1", rules.RUNNING, C),
            wait("BRISC", P.CONSUMER_STARVED, W),
        ]
        assert verdict(procs) == (P.PRODUCER_BLOCKED, "NCRISC", "cycle", ["BRISC"])


def test_a_proc_at_the_blocked_producers_own_stage_is_not_between_them() -> None:
    """'Between' means strictly downstream of the blocked producer: a second reader at its own
    waypoint beside the blocked reader is not the cause."""
    procs = [
        wait("NCRISC", P.PRODUCER_BLOCKED, R),
        st("NCRISC1", rules.RUNNING, R, own=True),
        st("TRISC0", rules.RUNNING, C),
        wait("BRISC", P.CONSUMER_STARVED, W),
    ]
    assert verdict(procs) == (P.PRODUCER_BLOCKED, "NCRISC", "cycle", ["BRISC"])


def test_between_is_measured_from_the_first_blocked_producer_upstream() -> None:
    """Two producers out of space (the reader, then one compute), another compute at the user's
    own waypoint, and a second writer still running (so neither producer's own rule decides):
    the own compute is downstream of the first blocked producer (the reader), so it is the
    cause; the compute at the same stage as it does not move the mark."""
    procs = [
        wait("NCRISC", P.PRODUCER_BLOCKED, R),
        wait("TRISC0", P.PRODUCER_BLOCKED, C),
        st("TRISC1", rules.RUNNING, C, own=True),
        wait("BRISC", P.CONSUMER_STARVED, W),
        st("BRISC1", rules.RUNNING, W),
    ]
    assert verdict(procs) == (P.OTHER_WAIT, "TRISC1", "own-waypoint", ["NCRISC", "TRISC0", "BRISC"])
    # without the own waypoint: the first blocked producer upstream, the reader
    procs[2] = st("TRISC1", rules.RUNNING, C)
    assert verdict(procs) == (P.PRODUCER_BLOCKED, "NCRISC", "cycle", ["TRISC0", "BRISC"])


# ------------------------------------------------------------------- processors of no known role
def test_a_processor_of_no_known_role_is_neither_producer_nor_consumer() -> None:
    """An ERISC (no reader/compute/writer role) on the core feeds and drains nothing on it: a
    reader out of space beside it drains elsewhere; a compute starved beside it and a done
    reader is starved (its one producer is done)."""
    procs = [wait("NCRISC", P.PRODUCER_BLOCKED, R), st("ERISC", rules.RUNNING, "erisc")]
    assert verdict(procs) == (P.PRODUCER_BLOCKED, "NCRISC", "blocked-remote", [])
    procs = [
        wait("TRISC0", P.CONSUMER_STARVED, C),
        st("ERISC", rules.RUNNING, "erisc"),
        st("NCRISC", rules.DONE, R),
    ]
    assert verdict(procs) == (P.CONSUMER_STARVED, "TRISC0", "starved", [])


# ------------------------------------------------------------------------- nothing waiting, known
def test_with_nothing_running_an_unknown_processor_is_named_before_a_done_one() -> None:
    """Nothing waits, nothing runs: the processor whose state is unknown is named, not the
    first one upstream that is done."""
    procs = [st("NCRISC", rules.DONE, R), st("BRISC", rules.UNKNOWN, W)]
    assert verdict(procs)[:2] == (P.UNKNOWN, "BRISC")
    procs = [
        st("NCRISC", rules.DONE, R),
        st("TRISC0", rules.DONE, C),
        st("BRISC", rules.UNKNOWN, W),
    ]
    assert verdict(procs)[:2] == (P.UNKNOWN, "BRISC")


# ------------------------------------------------------------------------ the consequences' words
def test_consequences_on_both_sides_are_told_in_two_clauses() -> None:
    """A cause with a waiter downstream and one upstream: the downstream one first, then the one
    behind it, joined by '; ', and two waiters are 'consequences'."""
    waiters = [wait("NCRISC", P.PRODUCER_BLOCKED, R), wait("BRISC", P.CONSUMER_STARVED, W)]
    assert rules.consequence_words(waiters, C) == (
        "; the writer (BRISC) waits too, downstream of it; the reader (NCRISC) waits too, "
        "behind it, for space it never frees: consequences, not the cause"
    )


def test_a_waiter_at_the_causes_own_stage_is_not_behind_it() -> None:
    """A second compute waiting beside the compute that is the cause is told as downstream (a
    consequence of it), not as waiting behind it for space."""
    assert rules.consequence_words([wait("TRISC1", P.OTHER_WAIT, C)], C) == (
        "; the compute (TRISC1) waits too, downstream of it: a consequence, not the cause"
    )


def test_a_waiter_of_no_known_role_beside_a_cause_of_no_known_role_is_downstream() -> None:
    """Neither has a stage: the waiter is not upstream of the cause, so it is told as
    downstream."""
    assert rules.consequence_words([wait("ERISC", P.OTHER_WAIT, "erisc")]) == (
        "; the erisc (ERISC) waits too, downstream of it: a consequence, not the cause"
    )
    assert rules.consequence_words([wait("ERISC", P.OTHER_WAIT, "erisc")], W) == (
        "; the erisc (ERISC) waits too, downstream of it: a consequence, not the cause"
    )


# -------------------------------------------------------------- tt-metal's own dispatch kernels
def test_a_dispatch_kernel_by_name_or_by_file_either_is_enough() -> None:
    """By the name tt-triage prints alone, or by the source file alone: either one marks the
    kernel as tt-metal's; a worker's name or file marks nothing."""
    assert rules.is_dispatch("cq_prefetch", None)
    assert rules.is_dispatch("fabric_erisc_router", None)
    assert rules.is_dispatch(None, "tt_metal/impl/dispatch/kernels/cq_dispatch.cpp")
    assert rules.is_dispatch("reader_kernel", "tt_metal/impl/dispatch/kernels/cq_dispatch.cpp")
    assert rules.is_dispatch("cq_dispatch", "kernels/dataflow/reader_tiles.cpp")
    assert not rules.is_dispatch("reader_kernel", None)
    assert not rules.is_dispatch(None, "kernels/dataflow/reader_tiles.cpp")
    assert not rules.is_dispatch("writer_tiles", "kernels/dataflow/writer_tiles.cpp")
    assert not rules.is_dispatch(None, None)


def test_a_cut_kernel_name_is_dispatch_from_four_characters_of_a_stem() -> None:
    """A name cut short by the table (``cq_disp``) is dispatch when it starts one of the
    dispatch kernels' names and keeps at least four characters; shorter cuts say nothing;
    a whole dispatch or fabric name is dispatch though no stem starts with it."""
    may = rules.may_be_dispatch
    assert may("cq_disp")
    assert may("cq_p")
    assert may("packet_de")
    assert not may("cq_")
    assert not may("cq")
    assert not may("read")
    assert may("cq_dispatch_subordinate")
    assert may("fabric_erisc_router")
