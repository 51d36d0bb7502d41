"""pytest's command line, environment and exit codes (real pytest runs: tests/pytests/test_junit.py)."""

from __future__ import annotations

import itertools
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from lnrepro.errors import UsageError
from lnrepro.pytests.argv import (
    ENV_REMOVE,
    exit_meaning,
    node_id_problem,
    pytest_argv,
    pytest_env,
)


@pytest.mark.parametrize(
    "nid",
    [
        "tests/ttnn/test_ln.py",
        "tests/ttnn/test_ln.py::test_ln",
        "tests/ttnn/test_ln.py::TestLN::test_ln[shape0-bf16]",
        "tests/ttnn/test_ln.py::test_ln[a b; $(rm -rf /) `x` 'q' \"d\"]",  # no shell: just text
        "tests/ttnn/test_ln.py::test_ln[p::q]",
        "tests/ttnn/test_ln.py::test_ln[\\xfc]",
        "/abs/path/test_x.py::test_y",
        "test_ünïcode.py::test_é",
    ],
)
def test_valid_node_ids(nid: str) -> None:
    assert node_id_problem(nid) is None


@pytest.mark.parametrize(
    ("nid", "says"),
    [
        ("", "empty"),
        ("   ", "empty"),
        (" tests/test_x.py::t", "whitespace"),
        ("tests/test_x.py::t\n", "whitespace"),
        ("-k", "option"),
        ("--junitxml=/etc/x", "option"),
        ("-p no:x", "option"),
        ("tests/ttnn", "does not start with a .py file"),
        ("tests/ttnn/", "does not start with a .py file"),
        ("test_ln", "does not start with a .py file"),
        ("tests/test_x.pyc::t", "does not start with a .py file"),
        ("tests/test_x.py::", "empty '::' part"),
        ("tests/test_x.py::::t", "empty '::' part"),
        ("tests/test_x.py::[a]", "empty '::' part"),
        ("tests/test_x.py::t[a", "does not end with ']'"),
        ("tests/test_x.py::t\x00", "control character"),
        ("tests/test_x.py::t\tu", "control character"),
    ],
)
def test_invalid_node_ids(nid: str, says: str) -> None:
    problem = node_id_problem(nid)
    assert problem is not None and says in problem


def test_argv_shape() -> None:
    argv = pytest_argv(["a/test_x.py::t[1]", "b/test_y.py"], Path("/r/out.xml"), python="py3")
    assert argv[:5] == ["py3", "-m", "pytest", "a/test_x.py::t[1]", "b/test_y.py"]
    assert argv[-1] == "--junitxml=/r/out.xml", "last, so it replaces any addopts --junitxml"
    pairs = list(itertools.pairwise(argv))
    for opt in ("no:cacheprovider", "no:xdist", "no:randomly"):
        assert ("-p", opt) in pairs
    for ini in ("junit_family=xunit2", "junit_logging=all", "junit_log_passing_tests=true"):
        assert ("-o", ini) in pairs
    assert "--capture=fd" in argv and "-q" in argv and "--tb=auto" in argv


def test_extra_arguments_cannot_move_the_report() -> None:
    argv = pytest_argv(["t.py"], "o.xml", extra=["--junitxml=elsewhere.xml", "-x"])
    assert argv[-1] == "--junitxml=o.xml"
    assert argv.index("-x") < len(argv) - 1


@pytest.mark.parametrize("ids", [[], ["t.py", "-k"], ["dir/"]])
def test_argv_refuses_bad_node_ids(ids: list[str]) -> None:
    with pytest.raises(UsageError) as exc:
        pytest_argv(ids, "o.xml")
    assert exc.value.fix


def test_blocking_absent_plugins_is_harmless(tmp_path: Path) -> None:
    """``-p no:X`` for plugins that are not installed: neither a warning nor an error."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_a.py").write_text("def test_a():\n    pass\n")
    argv = pytest_argv(["test_a.py"], tmp_path / "o.xml", python=sys.executable)
    argv += ["-W", "error", "-p", "no:surely_not_installed"]
    proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "warning" not in proc.stdout.lower()


def test_env() -> None:
    base = {
        "PATH": "/bin",
        "PYTEST_ADDOPTS": "-n 8 --lf",
        "PYTEST_PLUGINS": "x",
        "PYTHONHASHSEED": "7",
    }
    env = pytest_env(base)
    assert env["PATH"] == "/bin"
    assert env["PYTHONDONTWRITEBYTECODE"] == "1" and env["PYTHONHASHSEED"] == "0"
    assert not set(ENV_REMOVE) & set(env)
    assert base["PYTEST_ADDOPTS"] == "-n 8 --lf", "the caller's mapping is not changed"


@pytest.mark.parametrize(
    ("code", "starts"),
    [
        (0, "all tests passed"),
        (1, "some tests failed"),
        (2, "interrupted"),
        (3, "internal error"),
        (4, "usage error"),
        (5, "no tests collected"),
        (6, "all tests passed but the maximum number of warnings"),
        (None, "no exit code"),
        (124, "killed by timeout(1)"),
        (-signal.SIGKILL, "killed by SIGKILL"),
        (128 + signal.SIGSEGV, "killed by SIGSEGV"),
        (77, "unknown exit code 77"),
        (128 + 99, "unknown exit code"),
    ],
)
def test_exit_meaning(code: int | None, starts: str) -> None:
    assert exit_meaning(code).startswith(starts)


def test_exit_codes_match_pytest() -> None:
    assert {int(c) for c in pytest.ExitCode} <= set(range(7))
    for c in pytest.ExitCode:
        assert not exit_meaning(int(c)).startswith("unknown")
