"""The JUnit reader against reports written by a real pytest, run with lnrepro's own argv.

The generated project imitates tt-metal: a ``pytest.ini`` whose ``addopts`` turn capturing off
(``-vvs``, as tt-metal's does), a helper module outside the test files (so pytest does not
rewrite its asserts, like ``tests/ttnn/utils_for_testing.py``) whose messages have the
documented shapes, and tests that pass, fail, skip, xfail, xpass, error in set-up and tear-down,
and carry odd parametrize ids.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from lnrepro.errors import ExitCode, MalformedReport
from lnrepro.model.gtest import TestResult, TestStatus
from lnrepro.model.metrics import UNNAMED
from lnrepro.pytests.argv import exit_meaning, pytest_argv, pytest_env
from lnrepro.pytests.junit import JunitReport, node_id, parse_junit, read_junit

HELPERS = """
def comp_pcc(golden, calculated, pcc=0.99):
    # stands in for the correlation: the tests pass the value they want "measured"
    value = golden
    return value >= pcc, value


def assert_with_pcc(expected_pytorch_result, actual_pytorch_result, pcc=0.9999):
    pcc_passed, pcc_message = comp_pcc(expected_pytorch_result, actual_pytorch_result, pcc)
    assert pcc_passed, str(pcc_message)
    return pcc_passed, pcc_message


def check_with_pcc(expected_pytorch_result, actual_pytorch_result, pcc=0.9999):
    pcc_passed, pcc_message = comp_pcc(expected_pytorch_result, actual_pytorch_result, pcc)
    return pcc_passed, str(pcc_message)
"""

TESTS = """
import logging
import sys

import pytest

from ttm_helpers import assert_with_pcc, check_with_pcc, comp_pcc


def test_prints_every_format(record_property):
    print("Max ATOL Delta: 0.03125, Max RTOL Delta: inf, PCC: 0.9871")
    print("Max ATOL Delta: 0.5, Max RTOL Delta: 0.25, 0.9902")
    print("dgamma: Max ATOL Delta: 0.125, Max RTOL Delta: 0.0625, pcc=0.9951")
    print(f"comp_pcc -> {comp_pcc(0.97, None)}")
    print("PCC: True")
    print("2026-03-01 10:00:00.123 | INFO     | tests.test_ops:f:9 - dx PCC: 0.99935", file=sys.stderr)
    logging.getLogger("ln").warning("PCC of dbeta: 0.991")
    record_property("dmean_pcc", 0.9)


def test_assert_with_pcc_fails():
    print("computing...")
    assert_with_pcc(0.8765, None, pcc=0.999)


def test_check_with_pcc_then_assert():
    passing, msg = check_with_pcc(0.5, None, 0.99)
    assert passing, msg


def test_sweep_message():
    passing, out = False, "Max ATOL Delta: 1.5, Max RTOL Delta: nan, PCC: 0.6543, PCC check failed (target: 0.99)"
    assert passing, out


def test_pcc_compared_in_the_test():
    pcc = 0.93
    assert pcc >= 0.95


def test_nan_pcc():
    assert_with_pcc(float("nan"), None, 0.99)


def test_skip():
    pytest.skip("no device")


@pytest.mark.xfail(reason="known bad: #123")
def test_xfail():
    print("PCC: 0.42")
    assert_with_pcc(0.42, None, 0.99)


@pytest.mark.xfail(reason="fixed?", strict=True)
def test_xpass_strict():
    pass


@pytest.mark.xfail(reason="flaky")
def test_xpass():
    pass


@pytest.fixture
def device():
    raise RuntimeError("no device found")


def test_setup_error(device):
    pass


@pytest.fixture
def closes_badly():
    yield
    raise RuntimeError("close failed")


def test_fails_and_teardown_errors(closes_badly):
    assert_with_pcc(0.25, None, 0.9)


def test_passes_and_teardown_errors(closes_badly):
    print("PCC: 0.9999")


class TestLayerNorm:
    @pytest.mark.parametrize("v", ["a[b]", "\\u00fc x", "p::q", "with space"])
    def test_ids(self, v):
        print(f"{v} PCC: 0.99")
"""

DOTTED = """
class TestInDottedDir:
    def test_it(self):
        print("out PCC: 0.5")
"""

INI = "[pytest]\naddopts = -vvs -rA --tb=short --junitxml=generated/most_recent_tests.xml\n"
OPS = "tests/test_ops.py"
DOTTED_FILE = "tests/v1.2/test_dotted.py"


@dataclass
class Ran:
    family: str
    root: Path
    code: int
    stdout: str
    xml: Path
    report: JunitReport

    def by_name(self) -> dict[str, TestResult]:
        return {t.name: t for t in self.report.tests}


def make_project(root: Path) -> None:
    (root / "tests" / "v1.2").mkdir(parents=True)
    (root / "pytest.ini").write_text(INI)
    (root / "ttm_helpers.py").write_text(HELPERS)
    (root / OPS).write_text(TESTS)
    (root / DOTTED_FILE).write_text(DOTTED)
    (root / "conftest.py").write_text(
        "import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n"
    )


def run_pytest(root: Path, node_ids: list[str], *extra: str) -> tuple[int, str, Path]:
    xml = root / "out" / "report.xml"
    argv = pytest_argv(node_ids, xml, python=sys.executable, extra=extra)
    proc = subprocess.run(
        argv,
        cwd=root,
        env=pytest_env(os.environ),
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc.returncode, proc.stdout, xml


@pytest.fixture(scope="module", params=["xunit2", "xunit1"])
def ran(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Ran:
    family = request.param
    root = tmp_path_factory.mktemp(family)
    make_project(root)
    extra = ("-o", "junit_family=xunit1") if family == "xunit1" else ()
    code, out, xml = run_pytest(root, [OPS, DOTTED_FILE], *extra)
    report = read_junit(xml, requested=[OPS, DOTTED_FILE], root=root)
    return Ran(family, root, code, out, xml, report)


def test_family_and_exit_code(ran: Ran) -> None:
    assert ran.report.family == ran.family
    assert ran.code == 1, ran.stdout[-2000:]
    assert exit_meaning(ran.code) == "some tests failed"


def test_node_ids_are_pytests_own(ran: Ran) -> None:
    """Every node id pytest's -rA summary names is a result, and nothing else is."""
    printed = set()
    for line in ran.stdout.splitlines():
        m = re.match(r"^(?:PASSED|FAILED|ERROR|XFAIL|XPASS) (\S.*?)(?: - .*)?$", line)
        if m:
            printed.add(m.group(1))
    names = {t.name for t in ran.report.tests}
    skipped = {t.name for t in ran.report.tests if t.status is TestStatus.SKIPPED}
    assert printed, ran.stdout[-2000:]
    assert names - skipped - {f"{OPS}::test_xfail"} == printed - {f"{OPS}::test_xfail"}
    assert f"{OPS}::TestLayerNorm::test_ids[a[b]]" in names
    assert f"{OPS}::TestLayerNorm::test_ids[p::q]" in names
    assert f"{OPS}::TestLayerNorm::test_ids[with space]" in names
    assert f"{OPS}::TestLayerNorm::test_ids[\\xfc x]" in names  # pytest escapes non-ASCII ids
    assert f"{DOTTED_FILE}::TestInDottedDir::test_it" in names
    assert len(names) == len(ran.report.tests), "one result per node id"


def test_statuses(ran: Ran) -> None:
    s = {name: t.status for name, t in ran.by_name().items()}
    P, F, S = TestStatus.PASSED, TestStatus.FAILED, TestStatus.SKIPPED
    assert s[f"{OPS}::test_prints_every_format"] is P
    assert s[f"{OPS}::test_assert_with_pcc_fails"] is F
    assert s[f"{OPS}::test_check_with_pcc_then_assert"] is F
    assert s[f"{OPS}::test_skip"] is S
    assert s[f"{OPS}::test_xfail"] is S
    assert s[f"{OPS}::test_xpass_strict"] is F
    assert s[f"{OPS}::test_xpass"] is P  # pytest writes a non-strict xpass as a pass
    assert s[f"{OPS}::test_setup_error"] is F
    assert s[f"{OPS}::test_fails_and_teardown_errors"] is F
    assert s[f"{OPS}::test_passes_and_teardown_errors"] is F
    assert s[f"{OPS}::TestLayerNorm::test_ids[a[b]]"] is P
    run = ran.report.as_run(ran.code)
    assert run.exit_code == 1 and not run.ok
    assert run.totals()["SKIPPED"] == 2


def test_messages_and_locations(ran: Ran) -> None:
    t = ran.by_name()
    skip = t[f"{OPS}::test_skip"]
    assert skip.skip_message == "no device" and not skip.failures
    assert t[f"{OPS}::test_xfail"].skip_message == "xfail: known bad: #123"
    assert t[f"{OPS}::test_xpass_strict"].failures[0].message == "[XPASS(strict)] fixed?"
    (f,) = t[f"{OPS}::test_assert_with_pcc_fails"].failures
    assert f.message == "AssertionError: 0.8765"
    assert f.file == "ttm_helpers.py" and f.line == 10
    (setup,) = t[f"{OPS}::test_setup_error"].failures
    assert setup.message == 'failed on setup with "RuntimeError: no device found"'
    assert setup.file == OPS and setup.line is not None
    both = t[f"{OPS}::test_fails_and_teardown_errors"].failures
    assert [x.message for x in both] == [
        "AssertionError: 0.25",
        'failed on teardown with "RuntimeError: close failed"',
    ]
    assert t[f"{OPS}::TestLayerNorm::test_ids[p::q]"].param == "p::q"
    assert t[f"{OPS}::test_prints_every_format"].duration_ms is not None


def test_metrics_of_a_passing_test_come_from_its_output(ran: Ran) -> None:
    m = ran.by_name()[f"{OPS}::test_prints_every_format"].metrics
    assert m[UNNAMED]["pcc"] == 0.97  # worst of 0.9871, 0.9902, (False, 0.97), True
    assert m[UNNAMED]["max_abs_diff"] == 0.5
    assert m[UNNAMED]["max_rel_diff"] == math.inf
    assert m["dgamma"] == {"max_abs_diff": 0.125, "max_rel_diff": 0.0625, "pcc": 0.9951}
    assert m["dx"] == {"pcc": 0.99935}  # loguru's line on stderr
    assert m["dbeta"] == {"pcc": 0.991}  # the logging module's captured log
    assert m["dmean"] == {"pcc": 0.9}  # record_property
    assert f"{OPS}::test_prints_every_format" not in ran.report.thresholds


def test_metrics_and_thresholds_of_failures(ran: Ran) -> None:
    t, th = ran.by_name(), ran.report.thresholds
    fails = f"{OPS}::test_assert_with_pcc_fails"
    assert t[fails].metrics == {UNNAMED: {"pcc": 0.8765}}
    assert th[fails] == {UNNAMED: 0.999}  # the failing frame's "pcc = 0.999"
    check = f"{OPS}::test_check_with_pcc_then_assert"
    assert t[check].metrics == {UNNAMED: {"pcc": 0.5}}
    assert check not in th, "the test's own assert does not say the threshold"
    sweep = f"{OPS}::test_sweep_message"
    assert t[sweep].metrics[UNNAMED]["pcc"] == 0.6543
    assert t[sweep].metrics[UNNAMED]["max_abs_diff"] == 1.5
    assert th[sweep] == {UNNAMED: 0.99}
    compared = f"{OPS}::test_pcc_compared_in_the_test"
    assert t[compared].metrics == {UNNAMED: {"pcc": 0.93}} and th[compared] == {UNNAMED: 0.95}
    assert math.isnan(t[f"{OPS}::test_nan_pcc"].metrics[UNNAMED]["pcc"])
    assert t[f"{OPS}::test_xfail"].metrics == {UNNAMED: {"pcc": 0.42}}
    assert t[f"{OPS}::test_fails_and_teardown_errors"].metrics == {UNNAMED: {"pcc": 0.25}}
    assert t[f"{OPS}::TestLayerNorm::test_ids[with space]"].metrics == {"space": {"pcc": 0.99}}


def test_node_ids_without_requested_ids(ran: Ran) -> None:
    """xunit1 keeps the file; xunit2 needs the root directory (or the heuristic)."""
    report = read_junit(ran.xml, root=ran.root)
    names = {t.name for t in report.tests}
    assert f"{OPS}::TestLayerNorm::test_ids[a[b]]" in names
    if report.family == "xunit1":
        assert f"{DOTTED_FILE}::TestInDottedDir::test_it" in names
    else:  # "tests.v1.2.test_dotted" cannot say where the directory ends
        assert f"{DOTTED_FILE}::TestInDottedDir::test_it" not in names


def test_report_path_is_replaced_even_when_addopts_sets_one(ran: Ran) -> None:
    assert ran.xml.is_file()
    assert not (ran.root / "generated").exists()
    assert not (ran.root / ".pytest_cache").exists()
    assert not list(ran.root.rglob("__pycache__"))


def test_collection_error(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_broken.py").write_text("import not_a_module_anywhere\n")
    (tmp_path / "tests" / "test_fine.py").write_text("def test_ok():\n    print('PCC: 1.0')\n")
    code, out, xml = run_pytest(
        tmp_path, ["tests/test_broken.py", "tests/test_fine.py"], "--continue-on-collection-errors"
    )
    assert code == 1, out
    report = read_junit(xml)
    s = {t.name: t for t in report.tests}
    broken = s["tests/test_broken.py"]
    assert broken.status is TestStatus.FAILED
    assert broken.failures[0].message == "collection failure"
    assert s["tests/test_fine.py::test_ok"].metrics == {UNNAMED: {"pcc": 1.0}}


def test_internal_error_is_a_global_failure(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(
        "def pytest_collection_finish(session):\n    raise RuntimeError('plugin bug')\n"
    )
    (tmp_path / "test_a.py").write_text("def test_a():\n    pass\n")
    code, _out, xml = run_pytest(tmp_path, ["test_a.py"])
    assert code == 3 and exit_meaning(code).startswith("internal error")
    report = read_junit(xml)
    assert report.tests == []
    (g,) = report.global_failures
    assert g.message == "pytest internal error: RuntimeError: plugin bug"
    assert g.file is not None and g.file.endswith("conftest.py") and g.line == 2
    assert not report.as_run(code).ok


@pytest.mark.parametrize(
    ("files", "node", "code", "meaning"),
    [
        ({"test_none.py": "x = 1\n"}, "test_none.py", 5, "no tests collected"),
        ({"test_a.py": "def test_a():\n    pass\n"}, "test_a.py::test_b", 4, "usage error"),
    ],
)
def test_exit_codes_of_a_real_pytest(
    tmp_path: Path, files: dict[str, str], node: str, code: int, meaning: str
) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    got, out, _xml = run_pytest(tmp_path, [node])
    assert got == code, out
    assert exit_meaning(got).startswith(meaning)


# --- node ids, without pytest -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("nid", "classname", "name"),
    [  # the (classname, name) pytest's mangle_test_address writes for each node id
        (
            "tests/ttnn/test_ln.py::test_ln[shape0-bf16]",
            "tests.ttnn.test_ln",
            "test_ln[shape0-bf16]",
        ),
        ("tests/ttnn/test_ln.py::TestLN::test_ln", "tests.ttnn.test_ln.TestLN", "test_ln"),
        (
            "tests/ttnn/test_ln.py::TestLN::Inner::test_ln[a::b-[x]]",
            "tests.ttnn.test_ln.TestLN.Inner",
            "test_ln[a::b-[x]]",
        ),
        ("test_top.py::test_x", "test_top", "test_x"),
        ("tests/ttnn/test_ln.py", "", "tests.ttnn.test_ln"),
    ],
)
def test_a_junit_address_reads_back_as_its_node_id(nid: str, classname: str, name: str) -> None:
    assert node_id(classname, name, requested=[nid.partition("::")[0]]) == nid
    assert node_id(classname, name) == nid  # the heuristic: classes are capitalised


def test_node_id_prefers_the_xunit1_file_and_a_requested_directory() -> None:
    assert node_id("a.b.c.test_x", "test_y", "a/b.c/test_x.py") == "a/b.c/test_x.py::test_y"
    assert (
        node_id("tests.v1.2.test_x.TestA", "test_y", requested=["tests/v1.2/"])
        == "tests/v1.2/test_x.py::TestA::test_y"
    )
    assert node_id("tests.v1.2.test_x", "test_y") == "tests/v1/2/test_x.py::test_y"


# --- damaged reports ----------------------------------------------------------------------------
GOOD = (
    '<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest"'
    ' errors="0" failures="1" skipped="0" tests="1" time="0.1"><testcase classname="tests.test_a"'
    ' name="test_b" time="0.250"><failure message="AssertionError: 0.5">E       AssertionError:'
    " 0.5\n\ntests/test_a.py:3: AssertionError</failure></testcase></testsuite></testsuites>"
)


def test_handwritten_sample_reads() -> None:
    (t,) = parse_junit(GOOD, requested=["tests/test_a.py"]).tests
    assert (t.name, t.status, t.duration_ms) == (
        "tests/test_a.py::test_b",
        TestStatus.FAILED,
        250.0,
    )


def test_bare_testsuite_root_and_several_suites() -> None:
    one = GOOD.split('<testsuites name="pytest tests">')[1].replace("</testsuites>", "")
    assert len(parse_junit(one).tests) == 1
    two = GOOD.replace("</testsuite>", "</testsuite>" + one.replace("test_b", "test_c"))
    assert [t.name for t in parse_junit(two).tests] == [
        "tests/test_a.py::test_b",
        "tests/test_a.py::test_c",
    ]


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (GOOD[: len(GOOD) // 2], "not well-formed XML"),
        (GOOD[:-13], "not well-formed XML"),
        ("", "is empty"),
        ("   \n", "is empty"),
        ("not xml at all", "not well-formed XML"),
        (b"<testsuites>\xff\xfe</testsuites>", "not well-formed XML"),
        ("<html><body/></html>", "not <testsuites> or <testsuite>"),
        (
            '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]>'
            "<testsuites><testsuite><testcase classname='a' name='&lol2;'/></testsuite></testsuites>",
            "DOCTYPE",
        ),
        ('<!doctype testsuites SYSTEM "file:///etc/passwd"><testsuites/>', "DOCTYPE"),
    ],
    ids=["half", "cut-end", "empty", "blank", "text", "bad-utf8", "html", "entities", "external"],
)
def test_malformed_reports(data: str | bytes, says: str) -> None:
    with pytest.raises(MalformedReport) as exc:
        parse_junit(data)
    assert says in exc.value.message
    assert exc.value.exit_code is ExitCode.INPUT
    assert "\n" not in exc.value.one_line() and exc.value.fix


def test_truncated_real_report(ran: Ran, tmp_path: Path) -> None:
    data = ran.xml.read_bytes()
    cut = tmp_path / "cut.xml"
    cut.write_bytes(data[: len(data) * 2 // 3])
    with pytest.raises(MalformedReport, match="not well-formed XML"):
        read_junit(cut)


def test_missing_and_directory_paths(tmp_path: Path) -> None:
    with pytest.raises(MalformedReport, match="no such JUnit report") as exc:
        read_junit(tmp_path / "none.xml")
    assert exc.value.fix is not None and "killed" in exc.value.fix
    with pytest.raises(MalformedReport, match="is a directory"):
        read_junit(tmp_path)


def test_pytest_9_shortened_message_is_made_whole() -> None:
    long = "\n".join(f"E       line {i}" for i in range(30))
    xml = GOOD.replace(
        'message="AssertionError: 0.5"',
        'message="AssertionError: 0.5&#10;[+29 more lines; full report in element text]"',
    ).replace("E       AssertionError: 0.5", "E       AssertionError: 0.5\n" + long)
    (t,) = parse_junit(xml).tests
    assert t.failures[0].message.startswith("AssertionError: 0.5\nline 0\n")
    assert t.failures[0].message.endswith("line 29")
