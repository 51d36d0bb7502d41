"""The rule for a hang's cause on one core, rule by rule (the numbered list of the rules module):
which processor is named the cause, why, which waiting ones are its consequences, and the words
for them. Pure: Proc views in, a Verdict out."""

from __future__ import annotations

from lnrepro.hang import rules
from lnrepro.hang.model import HangPattern as P
from lnrepro.hang.rules import Proc

R, C, W = "reader", "compute", "writer"


def wait(risc: str, pattern: P | None, role: str) -> Proc:
    return Proc(risc, rules.WAITING, pattern, role)


def st(risc: str, status: str, role: str) -> Proc:
    return Proc(risc, status, None, role)


def verdict(procs: list[Proc], **kw: bool) -> tuple[P, str, str, list[str]]:
    v = rules.explain(procs, **kw)
    assert v is not None
    return v.pattern, procs[v.culprit].risc, v.why, [procs[i].risc for i in v.consequences]


# ------------------------------------------------------------------------------ 1, 2
def test_an_assert_is_the_cause_first_in_upstream_order() -> None:
    procs = [st("BRISC", rules.ASSERTED, W), st("NCRISC", rules.ASSERTED, R)]
    assert verdict(procs) == (P.KERNEL_ASSERT, "NCRISC", "asserted", [])
    procs = [st("BRISC", rules.NEVER, W), st("TRISC1", rules.ASSERTED, C)]
    assert verdict(procs)[:3] == (P.KERNEL_ASSERT, "TRISC1", "asserted")


def test_a_kernel_that_never_started_is_the_cause_brisc_first() -> None:
    procs = [st("NCRISC", rules.NEVER, R), st("BRISC", rules.NEVER, W)]
    assert verdict(procs) == (P.NEVER_STARTED, "BRISC", "never", [])
    procs = [st("TRISC0", rules.NEVER, C), st("NCRISC", rules.NEVER, R)]
    assert verdict(procs)[:3] == (P.NEVER_STARTED, "NCRISC", "never")
    procs = [wait("BRISC", P.CONSUMER_STARVED, W), st("TRISC0", rules.NEVER, C)]
    assert verdict(procs) == (P.NEVER_STARTED, "TRISC0", "never", ["BRISC"])


# ------------------------------------------------------------------------------ 3: a consumer
def test_a_starved_consumer_with_its_producers_done_is_the_cause() -> None:
    procs = [st("NCRISC", rules.DONE, R), wait("TRISC0", P.CONSUMER_STARVED, C)]
    assert verdict(procs) == (P.CONSUMER_STARVED, "TRISC0", "starved", [])


def test_a_starved_consumer_without_producers_on_the_core_is_fed_from_elsewhere() -> None:
    procs = [wait("NCRISC", P.CONSUMER_STARVED, R), st("BRISC", rules.DONE, W)]
    assert verdict(procs) == (P.CONSUMER_STARVED, "NCRISC", "starved-remote", [])
    # a processor of no known role has no producers either
    procs = [wait("ERISC", P.CONSUMER_STARVED, "erisc"), st("NCRISC", rules.RUNNING, R)]
    assert verdict(procs) == (P.CONSUMER_STARVED, "ERISC", "starved-remote", [])


def test_a_starved_consumer_whose_producer_waits_for_space_names_the_producer() -> None:
    procs = [wait("TRISC0", P.CONSUMER_STARVED, C), wait("NCRISC", P.PRODUCER_BLOCKED, R)]
    assert verdict(procs) == (P.PRODUCER_BLOCKED, "NCRISC", "cycle", ["TRISC0"])


def test_a_starved_consumer_whose_producer_is_busy_looks_upstream() -> None:
    # the reader runs: the compute's starvation is not the cause, nothing else explains it
    procs = [st("NCRISC", rules.RUNNING, R), wait("TRISC0", P.CONSUMER_STARVED, C)]
    assert verdict(procs) == (P.UNKNOWN, "NCRISC", "running", ["TRISC0"])
    # the reader itself waits on the NOC: that is the cause
    procs = [wait("NCRISC", P.NOC_WAIT, R), wait("TRISC0", P.CONSUMER_STARVED, C)]
    assert verdict(procs) == (P.NOC_WAIT, "NCRISC", "noc", ["TRISC0"])


# ------------------------------------------------------------------------------ 4: a producer
def test_a_blocked_producer_with_its_consumers_done_is_the_cause() -> None:
    procs = [wait("NCRISC", P.PRODUCER_BLOCKED, R), st("TRISC0", rules.DONE, C)]
    assert verdict(procs) == (P.PRODUCER_BLOCKED, "NCRISC", "blocked-done", [])


def test_a_blocked_producer_whose_consumers_wait_is_a_cycle() -> None:
    procs = [wait("TRISC2", P.PRODUCER_BLOCKED, C), wait("BRISC", P.OTHER_WAIT, W)]
    assert verdict(procs) == (P.PRODUCER_BLOCKED, "TRISC2", "cycle", ["BRISC"])


def test_a_blocked_producer_without_consumers_on_the_core_drains_elsewhere() -> None:
    procs = [wait("BRISC", P.PRODUCER_BLOCKED, W), st("NCRISC", rules.DONE, R)]
    assert verdict(procs) == (P.PRODUCER_BLOCKED, "BRISC", "blocked-remote", [])
    procs = [wait("ERISC", P.PRODUCER_BLOCKED, "erisc"), st("BRISC", rules.RUNNING, W)]
    assert verdict(procs)[:3] == (P.PRODUCER_BLOCKED, "ERISC", "blocked-remote")


def test_a_blocked_producer_whose_consumer_runs_is_not_the_cause() -> None:
    procs = [wait("NCRISC", P.PRODUCER_BLOCKED, R), st("TRISC0", rules.RUNNING, C)]
    assert verdict(procs) == (P.UNKNOWN, "TRISC0", "running", ["NCRISC"])
    procs = [wait("NCRISC", P.PRODUCER_BLOCKED, R), st("TRISC0", rules.UNKNOWN, C)]
    assert verdict(procs) == (P.PRODUCER_BLOCKED, "NCRISC", "chain", [])


# ------------------------------------------------------------------------------ 5, 6 and the rest
def test_noc_and_other_waits_are_the_cause_where_they_stand() -> None:
    assert verdict([wait("BRISC", P.NOC_WAIT, W)]) == (P.NOC_WAIT, "BRISC", "noc", [])
    assert verdict([wait("BRISC", P.OTHER_WAIT, W)]) == (P.OTHER_WAIT, "BRISC", "other", [])
    assert verdict([wait("BRISC", None, W)]) == (P.OTHER_WAIT, "BRISC", "other", [])


def test_a_chain_of_waits_with_nothing_running_names_the_first_upstream() -> None:
    procs = [
        wait("BRISC", P.CONSUMER_STARVED, W),
        wait("TRISC0", P.CONSUMER_STARVED, C),
        st("NCRISC", rules.UNKNOWN, R),
    ]
    assert verdict(procs) == (P.CONSUMER_STARVED, "TRISC0", "chain", ["BRISC"])


def test_nothing_waiting_nothing_known() -> None:
    procs = [st("BRISC", rules.UNKNOWN, W), st("NCRISC", rules.UNKNOWN, R)]
    assert verdict(procs) == (P.UNKNOWN, "NCRISC", "running", [])
    assert verdict(procs, has_waypoints=False) == (P.UNKNOWN, "NCRISC", "no-waypoints", [])
    procs = [st("BRISC", rules.DONE, W), st("TRISC0", rules.RUNNING, C)]
    assert verdict(procs) == (P.UNKNOWN, "TRISC0", "running", [])
    # running before unknown; done ones only when nothing else is left
    procs = [st("NCRISC", rules.UNKNOWN, R), st("BRISC", rules.RUNNING, W)]
    assert verdict(procs)[1] == "BRISC"


def test_upstream_order_breaks_ties_by_risc_name() -> None:
    procs = [
        wait("TRISC2", P.NOC_WAIT, C),
        wait("TRISC0", P.NOC_WAIT, C),
        wait("X", P.NOC_WAIT, "other"),
    ]
    assert verdict(procs) == (P.NOC_WAIT, "TRISC0", "noc", ["TRISC2", "X"])


# ------------------------------------------------------------------------------ words, roles
def test_the_consequences_in_words() -> None:
    assert rules.consequence_words([]) == ""
    assert rules.consequence_words([st("BRISC", rules.WAITING, W)], "reader") == (
        "; the writer (BRISC) waits too, downstream of it: a consequence, not the cause"
    )
    two = [st("BRISC", rules.WAITING, W), st("TRISC2", rules.WAITING, C)]
    assert rules.consequence_words(two, "reader") == (
        "; the writer (BRISC), the compute (TRISC2) wait too, downstream of it: consequences, "
        "not the cause"
    )
    # a waiter upstream of the cause (no role known: every waiter is upstream) waits behind it
    assert rules.consequence_words([st("BRISC", rules.WAITING, W)]) == (
        "; the writer (BRISC) waits too, behind it, for space it never frees: a consequence, "
        "not the cause"
    )


def test_a_role_from_the_kernel_name_or_file_else_the_processor() -> None:
    role = rules.role
    assert role("BRISC", "my_READER_kernel") == "reader"
    assert role("NCRISC", None, "k/dataflow/writer_tiles.cpp") == "writer"
    assert role("NCRISC", "reader", "writer") == "reader"
    # only the file's name counts, not a directory called reader
    assert role("BRISC", None, "reader/x.cpp") == "writer"
    assert role("BRISC", None, "kernels/compute/x.cpp") == "compute"
    assert role("BRISC", None, "kernels/Compute/x.cpp") == "compute"
    assert role("ncrisc", "ln_compute") == "compute"
    assert role("trisc1") == "compute"
    assert role("brisc") == "writer"
    assert role("ncrisc") == "reader"
    assert role("ERISC") == "erisc"


def test_what_a_waypoint_means_for_the_rule() -> None:
    w = rules.wait_of
    assert w("CWFW") is P.CONSUMER_STARVED
    assert w("CRBW") is P.PRODUCER_BLOCKED
    assert w("NSW") is P.NOC_WAIT
    assert w("NTW") is P.OTHER_WAIT
    assert w("GW") is P.OTHER_WAIT
    assert w("W") is None
    assert w("GO") is None
    assert w("") is None
    assert w(None) is None


def test_the_rank_of_each_pattern() -> None:
    assert sorted(rules.RANK, key=rules.RANK.__getitem__)[:2] == [
        P.WATCHER_ERROR,
        P.KERNEL_ASSERT,
    ]
    assert rules.RANK[P.PAUSED] < rules.RANK[P.CONSUMER_STARVED] < rules.RANK[P.PRODUCER_BLOCKED]
    assert rules.RANK[P.PRODUCER_BLOCKED] < rules.RANK[P.NOC_WAIT] < rules.RANK[P.NEVER_STARTED]
    assert rules.RANK[P.NEVER_STARTED] < rules.RANK[P.OTHER_WAIT] < rules.RANK[P.UNKNOWN]
    assert rules.ROLE_ORDER == {"reader": 0, "compute": 1, "writer": 2}
