"""The rules of the googletest console parser (lnrepro.gtest.console), one by one, on short logs
written here in googletest's format (googletest 1.14 src/gtest.cc's PrettyUnitTestResultPrinter
and BriefUnitTestResultPrinter): what each marker means, which failure belongs to which test,
suite or program, what an unfinished test becomes, and the warnings a user is shown."""

from __future__ import annotations

import pytest

from lnrepro.gtest.console import ConsoleParser, parse_bytes, parse_chunks
from lnrepro.model.gtest import Failure, TestStatus

PASSED, FAILED, SKIPPED, DISABLED, CRASHED, TIMEOUT = (
    TestStatus.PASSED,
    TestStatus.FAILED,
    TestStatus.SKIPPED,
    TestStatus.DISABLED,
    TestStatus.CRASHED,
    TestStatus.TIMEOUT,
)

LOG = b"""\
Note: Google Test filter = S.*
Note: Randomizing tests' orders with a seed of 42 .
[==========] Running 4 tests from 1 test suite.
[----------] Global test environment set-up.
[----------] 4 tests from S
[ RUN      ] S.Pass
[       OK ] S.Pass (3 ms)
[ RUN      ] S.Fail
src/t.cc:12: Failure
Value of: x
  Actual: false
dx FAILED: max_diff=1000, mean_diff=2.5

[  FAILED  ] S.Fail (7 ms)
[ RUN      ] S.Skip
src/t.cc:20: Skipped
not on this card

[  SKIPPED ] S.Skip (0 ms)
[ RUN      ] P/S.Param/0
[       OK ] P/S.Param/0, where GetParam() = 4 (1 ms)
[----------] 4 tests from S (11 ms total)

[----------] Global test environment tear-down
[==========] 4 tests from 1 test suite ran. (12 ms total)
[  PASSED  ] 2 tests.
[  SKIPPED ] 1 test, listed below:
[  SKIPPED ] S.Skip
[  FAILED  ] 1 test, listed below:
[  FAILED  ] S.Fail

 1 FAILED TEST
  YOU HAVE 3 DISABLED TESTS

"""


def test_a_whole_run_is_read_test_by_test_with_its_summary() -> None:
    run = parse_bytes(LOG, exit_code=1)
    assert run.exit_code == 1 and run.warnings == [] and run.saw_gtest_output
    (it,) = run.iterations
    assert (it.index, it.started, it.finished) == (1, True, True)
    assert (it.gtest_filter, it.random_seed, it.shard) == ("S.*", 42, None)
    s = it.summary
    assert (s.ran, s.total_ms, s.passed, s.skipped, s.failed, s.disabled) == (4, 12.0, 2, 1, 1, 3)
    got = [(t.name, t.status, t.duration_ms, t.param) for t in it.tests]
    assert got == [
        ("S.Pass", PASSED, 3.0, None),
        ("S.Fail", FAILED, 7.0, None),
        ("S.Skip", SKIPPED, 0.0, None),
        ("P/S.Param/0", PASSED, 1.0, "4"),
    ]
    fail, skip = it.tests[1], it.tests[2]
    assert fail.failures == [
        Failure(
            file="src/t.cc",
            line=12,
            message="Value of: x\n  Actual: false\ndx FAILED: max_diff=1000, mean_diff=2.5",
        )
    ]
    assert fail.metrics == {"dx": {"max_diff": 1000.0, "mean_diff": 2.5}}
    assert skip.skip_message == "not on this card" and skip.failures == []
    assert it.global_failures == [] and it.suite_failures == {}


@pytest.mark.parametrize("size", [1, 2, 7, 64, 4096])
def test_chunks_of_any_size_read_the_same(size: int) -> None:
    whole = parse_bytes(LOG, exit_code=1).to_json()
    chunks = [LOG[i : i + size] for i in range(0, len(LOG), size)]
    assert parse_chunks(chunks, exit_code=1).to_json() == whole


def test_callbacks_see_each_test_start_and_end() -> None:
    seen: list[str] = []
    p = ConsoleParser(
        on_test_start=lambda n: seen.append("start " + n),
        on_test_end=lambda r: seen.append(f"end {r.name} {r.status.value}"),
    )
    p.feed(b"[ RUN      ] A.b\n[       OK ] A.b (1 ms)\n[ RUN      ] A.c\n")
    p.close(None)
    assert seen == ["start A.b", "end A.b PASSED", "start A.c", "end A.c CRASHED"]


def test_a_closed_parser_refuses_input_and_closing_twice_gives_the_same_run() -> None:
    p = ConsoleParser()
    p.feed(b"")
    run = p.close(0)
    assert p.close(5) is run and run.exit_code == 0
    with pytest.raises(ValueError, match=r"^parser is closed$"):
        p.feed(b"x")


def test_a_log_without_googletest_output_says_so() -> None:
    assert parse_bytes(b"hello\nworld\n").warnings == ["no googletest output found"]


def test_an_unfinished_test_is_crashed_or_timed_out_by_how_the_process_ended() -> None:
    log = b"[==========] Running 1 test from 1 test suite.\n[ RUN      ] A.b\npartial line"
    run = parse_bytes(log)
    (t,) = run.iterations[0].tests
    assert t.status is CRASHED and t.crash is not None
    assert t.crash.reason == "the log ended while the test was running"
    assert run.warnings == ["iteration 1 has no closing summary: the process ended early"]
    run = parse_bytes(log, exit_code=124)
    assert run.iterations[0].tests[0].status is TIMEOUT
    assert run.warnings == [
        "iteration 1 has no closing summary: the process ended early (exit 124)"
    ]
    p = ConsoleParser()
    p.feed(log)
    run = p.close(-15, killed_after=2.5)
    t = run.iterations[0].tests[0]
    assert t.status is TIMEOUT and t.crash is not None
    assert (t.crash.exit_code, t.crash.signal) == (-15, "SIGTERM")
    assert t.crash.reason == "killed by lnrepro after the 2.5 s timeout (--timeout)"


def test_a_run_that_never_started_and_exited_zero_has_no_warning() -> None:
    run = parse_bytes(b"Note: Google Test filter = A.*\n", exit_code=0)
    assert run.saw_gtest_output and run.warnings == []
    run = parse_bytes(b"Note: Google Test filter = A.*\n", exit_code=3)
    assert run.warnings == ["iteration 1 has no closing summary: the process ended early (exit 3)"]


def test_a_marker_printed_by_a_test_is_not_taken_for_one() -> None:
    log = (
        b"[ RUN      ] A.b\n"
        b"[ RUN      ] A.inner\n"  # a RUN inside a running test
        b"[       OK ] A.other (1 ms)\n"  # an OK naming another test
        b"[==========] 9 tests from 1 test suite ran. (1 ms total)\n"  # a banner inside a test
        b"[----------] 9 tests from X\n"
        b"output glued[       OK ] A.b (2 ms)\n"  # the real end, after output without a newline
    )
    run = parse_bytes(log)
    (t,) = run.iterations[0].tests
    assert (t.name, t.status, t.duration_ms) == ("A.b", PASSED, 2.0)
    assert not run.iterations[0].finished


def test_a_run_marker_glued_to_output_is_recovered_and_warned() -> None:
    log = b"[==========] Running 1 test from 1 test suite.\nno newline[ RUN      ] A.b\n[       OK ] A.b (1 ms)\n[==========] 1 test from 1 test suite ran. (1 ms total)\n"
    run = parse_bytes(log)
    assert [t.name for t in run.iterations[0].tests] == ["A.b"]
    assert run.warnings == ["1 [ RUN ] marker(s) were glued to other output; recovered"]


def test_a_count_that_disagrees_with_the_log_is_warned() -> None:
    log = b"[ RUN      ] A.b\n[       OK ] A.b (1 ms)\n[==========] 2 tests from 1 test suite ran. (1 ms total)\n"
    assert parse_bytes(log).warnings == [
        "iteration 1: googletest says 2 test(s) ran, but the log shows 1: some output is garbled or missing"
    ]


def test_failures_outside_a_test_belong_to_the_suite_or_the_program() -> None:
    log = (
        b"[==========] Running 1 test from 1 test suite.\n"
        b"g.cc:1: Failure\nenv broke\n"
        b"[----------] 1 test from S\n"
        b"s.cc:#: Failure\nsuite broke\n"
        b"[----------] 1 test from S (0 ms total)\n"
        b"unknown file: Failure\nafter\n"
        b"[==========] 1 test from 1 test suite ran. (1 ms total)\n"
        b"[  FAILED  ] S: SetUpTestSuite or TearDownTestSuite\n"
    )
    it = parse_bytes(log).iterations[0]
    assert it.global_failures == [
        Failure(file="g.cc", line=1, message="env broke"),
        Failure(file=None, line=None, message="after"),
    ]
    assert it.suite_failures == {"S": [Failure(file="s.cc", line=None, message="suite broke")]}


def test_brief_output_gives_results_without_run_lines() -> None:
    log = (
        b"x.cc:3: Failure\nboom\n"
        b"dy: max_abs_diff=4\n"
        b"[  FAILED  ] S.f, where TypeParam = int and GetParam() = 7 (5 ms)\n"
        b"[  SKIPPED ] S.s (0 ms)\n"
        b"[ DISABLED ] S.DISABLED_d\n"
        b"[  FAILED  ] NotATest\n"
    )
    it = parse_bytes(log).iterations[0]
    got = [(t.name, t.status, t.duration_ms, t.type_param, t.param) for t in it.tests]
    assert got == [
        ("S.f", FAILED, 5.0, "int", "7"),
        ("S.s", SKIPPED, 0.0, None, None),
        ("S.DISABLED_d", DISABLED, None, None, None),
    ]
    assert it.tests[0].failures == [
        Failure(file="x.cc", line=3, message="boom\ndy: max_abs_diff=4")
    ]
    assert it.tests[0].metrics == {"dy": {"max_abs_diff": 4.0}}


def test_metrics_before_a_test_starts_are_its_own() -> None:
    run = parse_bytes(b"dx: max_diff=3\n[ RUN      ] A.b\n[  FAILED  ] A.b (1 ms)\n")
    assert run.iterations[0].tests[0].metrics == {"dx": {"max_diff": 3.0}}


def test_a_new_program_or_repeat_starts_a_new_iteration_and_ends_an_unfinished_test() -> None:
    one = b"[==========] Running 1 test from 1 test suite.\n[ RUN      ] A.b\n"
    run = parse_bytes(one + one)
    assert [len(it.tests) for it in run.iterations] == [1, 1]
    t = run.iterations[0].tests[0]
    assert t.status is CRASHED and t.crash is not None
    assert t.crash.reason == "a new test program started while the test was running"
    done = b"[==========] Running 1 test from 1 test suite.\n[ RUN      ] A.b\n[       OK ] A.b (1 ms)\n[==========] 1 test from 1 test suite ran. (1 ms total)\n"
    run = parse_bytes(done + b"\nRepeating all tests (iteration 2) . . .\n\n" + done)
    assert [it.index for it in run.iterations] == [1, 2] and run.warnings == []
    # a shard note after a started iteration: another program
    run = parse_bytes(done + b"Note: This is test shard 2 of 3.\n" + done)
    assert [it.shard for it in run.iterations] == [None, (2, 3)]


def test_colour_codes_and_bad_bytes_do_not_matter() -> None:
    log = b"\x1b[0;32m[ RUN      ] \x1b[mA.b\n\x1b[m\x1b[0;32m[       OK ] \x1b[mA.b (1 ms)\n\xff\xfe\n"
    (t,) = parse_bytes(log).iterations[0].tests
    assert (t.name, t.status) == ("A.b", PASSED)


def test_a_failure_message_is_kept_to_its_first_lines() -> None:
    body = b"".join(b"line %d\n" % i for i in range(100))
    log = b"[ RUN      ] A.b\nt.cc:1: Failure\n" + body + b"[  FAILED  ] A.b (1 ms)\n"
    (t,) = parse_bytes(log).iterations[0].tests
    assert t.failures[0].message.splitlines() == [f"line {i}" for i in range(40)]
    assert t.status is FAILED


# ------------------------------------------------------------------------------ boundaries
@pytest.mark.parametrize(
    "boundary",
    [
        b"2026-01-01 10:00:00.000 | INFO     | m:f:1 - logger line",
        b"Note: Google Test filter = A.*",
        b"y.cc:9: Failure",
    ],
)
def test_a_failure_message_ends_at_the_next_boundary(boundary: bytes) -> None:
    log = b"[ RUN      ] A.b\nt.cc:1: Failure\nboom\n" + boundary + b"\n[  FAILED  ] A.b (1 ms)\n"
    run = parse_bytes(log)
    t = run.iterations[0].tests[0]
    assert t.failures[0].message == "boom"


def test_a_skip_message_ends_at_an_end_marker_glued_to_output() -> None:
    log = b"[ RUN      ] A.b\nt.cc:1: Skipped\nwhy\nmore[  SKIPPED ] A.b (1 ms)\n"
    (t,) = parse_bytes(log).iterations[0].tests
    assert (t.status, t.skip_message) == (SKIPPED, "why")


@pytest.mark.parametrize(("width", "kept"), [(511, 16), (510, 17)])
def test_a_failure_message_is_kept_to_its_first_8192_characters(width: int, kept: int) -> None:
    body = b"".join(b"%0*d\n" % (width, i) for i in range(30))
    log = b"[ RUN      ] A.b\nt.cc:1: Failure\n" + body + b"[  FAILED  ] A.b (1 ms)\n"
    (t,) = parse_bytes(log).iterations[0].tests
    assert len(t.failures[0].message.splitlines()) == kept


def test_an_end_marker_naming_another_test_leaves_the_line_to_be_read() -> None:
    log = b"[ RUN      ] A.b\ndx: max_diff=5 [  FAILED  ] Other.t (1 ms)\n[       OK ] A.b (1 ms)\n"
    (t,) = parse_bytes(log).iterations[0].tests
    assert (t.status, t.metrics) == (PASSED, {"dx": {"max_diff": 5.0}})


def test_a_suite_set_up_failure_is_named_even_without_a_message() -> None:
    it = parse_bytes(b"[  FAILED  ] S: SetUpTestSuite or TearDownTestSuite\n").iterations[0]
    assert it.suite_failures == {"S": []} and it.tests == []


def test_after_the_closing_summary_only_a_timed_result_is_a_new_result() -> None:
    log = (
        b"[==========] 1 test from 1 test suite ran. (5 ms total)\n"
        b"[  FAILED  ] A.b, where GetParam() = 1\n"  # the summary's list: already known
        b"[  FAILED  ] two words\n"
        b"[  FAILED  ] B.c (3 ms)\n"  # timed: brief output after a test printed "ran."
        b"[  SKIPPED ] C.d (0 ms)\n"
    )
    it = parse_bytes(log).iterations[0]
    assert [(t.name, t.status) for t in it.tests] == [("B.c", FAILED), ("C.d", SKIPPED)]


def test_a_new_program_starts_clean() -> None:
    done = (
        b"[==========] Running 1 test from 1 test suite.\n"
        b"[----------] 1 test from S\n"
        b"[ RUN      ] S.b\n[       OK ] S.b (1 ms)\n"
        b"[==========] 1 test from 1 test suite ran. (1 ms total)\n"
    )
    # after the summary: a note starts the next program, whose failures are the program's own
    run = parse_bytes(
        done
        + b"Note: This is test shard 1 of 2.\n[ RUN      ] S.c\n[       OK ] S.c (1 ms)\nx.cc:1: Failure\nboom\n"
    )
    assert [[t.name for t in it.tests] for it in run.iterations] == [["S.b"], ["S.c"]]
    assert run.iterations[1].global_failures == [Failure(file="x.cc", line=1, message="boom")]
    assert run.iterations[1].suite_failures == {}
    # a failure after the summary belongs to the program, not to the last suite
    run = parse_bytes(done + b"x.cc:1: Failure\nboom\n")
    assert run.iterations[0].global_failures == [Failure(file="x.cc", line=1, message="boom")]
    # and after the global tear-down line, not to the suite before it
    run = parse_bytes(
        b"[----------] 1 test from S\n[----------] Global test environment tear-down\nx.cc:1: Failure\nboom\n"
    )
    assert run.iterations[0].global_failures == [Failure(file="x.cc", line=1, message="boom")]


def test_a_note_while_a_test_runs_ends_it_as_a_new_program() -> None:
    log = b"[==========] Running 1 test from 1 test suite.\n[ RUN      ] A.b\nNote: Google Test filter = B.*\n"
    run = parse_bytes(log)
    t = run.iterations[0].tests[0]
    assert t.crash is not None
    assert t.crash.reason == "a new test program started while the test was running"
    assert run.iterations[1].gtest_filter == "B.*"


def test_brief_results_carry_their_iteration() -> None:
    one = b"[==========] Running 1 test from 1 test suite.\n[  FAILED  ] A.b (1 ms)\n"
    run = parse_bytes(one + one)
    assert [t.iteration for it in run.iterations for t in it.tests] == [1, 2]


def test_the_callers_metric_rules_are_used_by_both_entry_points() -> None:
    from lnrepro.model.metrics import MetricRules

    rules = MetricRules(keys=("err",))
    log = b"[ RUN      ] A.b\nx: err=1\n[       OK ] A.b (1 ms)\n"
    assert parse_chunks([log], rules=rules).iterations[0].tests[0].metrics == {"x": {"err": 1.0}}
    assert parse_bytes(log, rules=rules).iterations[0].tests[0].metrics == {"x": {"err": 1.0}}
