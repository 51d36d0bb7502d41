"""The fault sweep's 54 failing cases, each through the real `lnrepro` command line.

Each checks the exit code, that stderr is one line (no traceback, no "internal error"), the
verdict where one is given, and that a usage error leaves nothing behind. Cases run in process
(tests/harness.py); only a terminal's encoding and another user take a process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.harness import Result, assert_one_line_error, lnrepro, lnrepro_process

GT_HEAD = 'echo "[==========] Running 1 test from 1 test suite."\necho "[ RUN      ] S.T"\n'
GT_PASS = 'echo "[       OK ] S.T (1 ms)"\necho "[==========] 1 test from 1 test suite ran. (1 ms total)"\necho "[  PASSED  ] 1 test."\n'


@pytest.fixture(autouse=True)
def _restore_cwd(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(os.getcwd())  # in-process commands below chdir; put it back after each


def prog(tmp: Path, tail: str, name: str = "gt") -> Path:
    p = tmp / name
    p.write_text("#!/bin/sh\n" + GT_HEAD + GT_PASS + tail + "\n")
    p.chmod(0o755)
    return p


# ---------------------------------------------------------------------------------- wrong verdicts
@pytest.mark.parametrize(
    ("tail", "verdict", "why"),
    [
        ("kill -SEGV $$", "CRASH", "died after its last test ended"),
        ("exit 1", "FAIL", "exited 1 although every test passed"),
    ],
)
def test_how_the_binary_ends_weighs_in_the_verdict(
    tmp_path: Path, tail: str, verdict: str, why: str
) -> None:
    binary = prog(tmp_path, tail)
    code, out, _ = lnrepro(
        "run",
        "--backend",
        "local",
        "--binary",
        str(binary),
        "--filter",
        "S.*",
        "--record-dir",
        str(tmp_path / "r"),
        "--json",
    )
    doc = json.loads(out)
    assert code == 1 and doc["verdict"] == verdict
    pe = next(t for t in doc["tests"] if t["name"] == "(process exit)")
    assert pe["verdict"] == verdict
    msgs = [f["message"] for a in doc["attempts"] for t in a["tests"] for f in t["failures"]]
    crash = [t["crash"]["reason"] for a in doc["attempts"] for t in a["tests"] if t["crash"]]
    assert any(why in m for m in msgs + crash)
    code, _, _ = lnrepro(
        "run",
        "--backend",
        "local",
        "--binary",
        str(binary),
        "--filter",
        "S.*",
        "--record-dir",
        str(tmp_path / "r"),
        "--bisect-exit-code",
    )
    assert code == 1  # "bad" for git bisect run, never "good"


def test_a_failed_reset_makes_the_attempt_an_environment_error(tmp_path: Path) -> None:
    """Chosen: a reset that fails (tt-smi -r) leaves the card in doubt, so the attempt is not run
    and is ENV_ERROR (exit 5); a bisect takes it as noise."""
    checkout = tmp_path / "tt"
    checkout.mkdir()
    prog(checkout, "exit 0", "ttml_tests")
    (tmp_path / "lnrepro.toml").write_text(
        '[profiles.here]\nbuild = [["true"]]\nbinary = "ttml_tests"\n'
    )
    os.chdir(tmp_path)
    code, out, err = lnrepro(
        "run",
        "--tt-metal",
        str(checkout),
        "--runner",
        "local",
        "--profile",
        "here",
        "--filter",
        "S.*",
        "--reset-cmd",
        "false",
        "--json",
    )
    doc = json.loads(out)
    assert code == 5 and doc["verdict"] == "ENV_ERROR" and "ENV_ERROR" in err
    (a,) = doc["attempts"]
    assert a["env_error"] == "the reset command `false` exited 1" and a["tests"] == []
    code, out, _ = lnrepro(
        "run",
        "--tt-metal",
        str(checkout),
        "--runner",
        "local",
        "--profile",
        "here",
        "--filter",
        "S.*",
        "--reset-cmd",
        "true",
        "--json",
    )
    assert code == 0 and json.loads(out)["verdict"] == "PASS"


# ---------------------------------------------------------------------------------- usage errors
BISECT_TRUE = ("--good", "HEAD~3", "--bad", "HEAD", "--command", "true")


def repo_with_commits(where: Path, n: int = 4) -> Path:
    where.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(where)], check=True)
    for i in range(n):
        (where / "f").write_text(f"{i}\n")
        subprocess.run(
            ["git", "-C", str(where), "commit", "-qam" if i else "-qm", f"c{i}"], check=False
        )
        if i == 0:
            subprocess.run(["git", "-C", str(where), "add", "f"], check=True)
            subprocess.run(["git", "-C", str(where), "commit", "-qm", "c0"], check=True)
    return where


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (
            ["--patch", "/nope/missing.patch", "--command", "true"],
            "--patch /nope/missing.patch does not exist",
        ),
        (["--command", ""], "--command is empty"),
        (["--command", "sh -c 'unbalanced"], "cannot be split"),
        (["--reset-cmd", "tt-smi 'x", "--runner", "local"], "cannot be split"),
        (["--env", "NOEQUALS", "--runner", "local"], "is not KEY=VALUE"),
        (
            ["--confidence", "nan", "--command", "true"],
            "--confidence nan is not from 0.5 to 0.9999",
        ),
        (
            ["--metric", "max_diff", "--threshold", "nan", "--runner", "local"],
            "--threshold nan is not a number",
        ),
        (
            ["--resume", "--repeat", "3"],
            "--resume continues with the options the bisect was started with",
        ),
    ],
)
def test_an_invalid_bisect_option_leaves_nothing_behind(
    tmp_path: Path, extra: list[str], needle: str
) -> None:
    repo = repo_with_commits(tmp_path / "r")
    assert_one_line_error(
        lnrepro(
            "bisect",
            "--repo",
            str(repo),
            *(["--good", "HEAD~3", "--bad", "HEAD"] if "--resume" not in extra else []),
            *extra,
        ),
        2,
        needle,
    )
    assert not (repo / ".git" / "lnrepro").exists()  # no lock, no worktree, no state file


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "--defect", ",,,"], "empty name"),
        (["run", "--seed", "-1"], "--seed -1 is not from 0 to"),
        (["run", "--seed", str(2**70)], "is not from 0 to 4294967295"),
        (["run", "--timeout", "nan"], "--timeout nan is not a number"),
        (["run", "--block-size", "0"], "--block-size 0 is not from 1"),
        (["run", "--env", "A=1"], "--env only applies with --backend tt-metal"),
        (["tolerance", "--alpha", "nan"], "--alpha nan is not from"),
        (["tolerance", "--defect", "shipped"], "--defect only applies with --shape"),
        (["tolerance", "--reference-variants"], "--reference-variants only applies with --shape"),
        (["tolerance", "--shape", "1,1,1,99999999999"], "the largest allowed"),
        (["tolerance", "--shape", "100000,1,1,8462"], "the largest allowed"),
    ],
)
def test_usage_errors_are_one_line_and_leave_no_record(
    tmp_path: Path, args: list[str], needle: str
) -> None:
    os.chdir(tmp_path)
    assert_one_line_error(lnrepro(*args), 2, needle)
    assert not (tmp_path / ".lnrepro").exists()


def test_a_bad_configuration_is_a_bad_input_file_wherever_it_is(tmp_path: Path) -> None:
    (tmp_path / "tt").mkdir()
    os.chdir(tmp_path)
    for name, text in (
        ("pyproject.toml", "[tool.lnrepro]\nprofiles = 3\n"),
        ("lnrepro.toml", "profiles = 3\n"),
    ):
        (tmp_path / name).write_text(text)
        assert_one_line_error(
            lnrepro("run", "--tt-metal", "tt", "--runner", "local", "--dry-run"),
            4,
            name,
            "profiles must be a table",
        )
        (tmp_path / name).unlink()


# ---------------------------------------------------------------------------------- damaged files
def test_damaged_state_and_records_are_named_with_the_fix(tmp_path: Path) -> None:
    repo = repo_with_commits(tmp_path / "r")
    state = repo / ".git" / "lnrepro" / "bisect.json"
    state.parent.mkdir(parents=True)
    cases = [
        "[]",
        '{"schema": "lnrepro.bisect/6"}',
        '{"schema": "lnrepro.bisect/6", "request": 3}',
        '{"schema": "lnrepro.bisect/2", "plan": {}}',
        "[" * 50_000,
    ]
    for text in cases:
        state.write_text(text)
        for flag in ("--resume", "--log"):
            assert_one_line_error(lnrepro("bisect", "--repo", str(repo), flag), 4, str(state))
    runs = tmp_path / "runs"
    for i, text in enumerate(
        [
            '{"schema": "lnrepro.run/3", "request": {"backend": null}}',
            '{"schema": "lnrepro.run/3", "attempts": [null]}',
        ]
    ):
        (runs / f"run-2026010{i}-000000").mkdir(parents=True)
        (runs / f"run-2026010{i}-000000" / "record.json").write_text(text)
    (runs / "run-loop").symlink_to(runs / "run-loop")
    code, out, _ = lnrepro("runs", "--record-dir", str(runs), "--json")
    states = {e["id"]: e["state"] for e in json.loads(out)["records"]}
    assert code == 0 and set(states.values()) == {"unreadable"} and len(states) == 3
    assert_one_line_error(
        lnrepro("show", "run-20260100-000000", "--record-dir", str(runs)),
        4,
        "record.json",
        "request.backend",
    )


json_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda k: st.lists(k, max_size=3) | st.dictionaries(st.text(max_size=6), k, max_size=3),
    max_leaves=15,
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    doc=st.fixed_dictionaries(
        {"schema": st.just("lnrepro.bisect/6")},
        optional={
            k: json_like for k in ("request", "steps", "result", "signature", "state", "record")
        },
    )
)
def test_no_generated_bisect_state_makes_an_internal_error(
    tmp_path_factory: pytest.TempPathFactory,
    doc: dict[str, object],
) -> None:
    repo = tmp_path_factory.mktemp("g")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    state = repo / ".git" / "lnrepro" / "bisect.json"
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text(json.dumps(doc))
    ran = lnrepro("bisect", "--repo", str(repo), "--log")
    assert ran.code in (0, 4) and "internal error" not in ran.err, ran.err
    if ran.code == 4:
        assert_one_line_error(ran, 4, str(state))


# ---------------------------------------------------------------------------------- environment
def test_an_ascii_terminal_still_gets_one_line(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text("[ RUN      ] S.Tést—µ\n[  FAILED  ] S.Tést—µ (1 ms)\n")
    ascii_ = {"PYTHONIOENCODING": "ascii"}
    p = lnrepro_process("parse", log, env=ascii_, timeout=60)
    assert p.code == 1 and "Traceback" not in p.err and "internal error" not in p.err
    assert "S.T\\xe9st" in p.out  # written as an escape, not a crash
    assert_one_line_error(lnrepro_process("parse", tmp_path / "nope—.log", env=ascii_), 4)


def test_odd_repositories_are_one_line_errors(tmp_path: Path) -> None:
    repo = repo_with_commits(tmp_path / "r")
    lock = repo / ".git" / "lnrepro" / "bisect.lock"
    lock.mkdir(parents=True)
    ran = lnrepro("bisect", "--repo", repo, *BISECT_TRUE)
    assert_one_line_error(ran, 5, "is a directory", "rmdir")
    lock.rmdir()
    odd = Path(os.fsdecode(bytes(tmp_path) + b"/caf\xe9"))
    os.rename(repo, odd)
    code, out, err = lnrepro(
        "bisect",
        "--repo",
        str(odd),
        "--good",
        "HEAD~3",
        "--bad",
        "HEAD",
        "--command",
        "grep -q 0 f",
        "--json",
    )
    assert code == 0 and "internal error" not in err, err
    assert json.loads(out)["result"]["commit"]["subject"] == "c1"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["r"[:0] + odd.name]
    )  # no look-alike path made


def test_a_record_directory_nobody_may_use_is_exit_5(tmp_path: Path, test_user: str) -> None:
    user = test_user
    runs = tmp_path / "runs"
    runs.mkdir(mode=0o000)
    for d in (tmp_path, tmp_path.parent, tmp_path.parent.parent):  # pytest's own dirs are 0700
        d.chmod(d.stat().st_mode | 0o005)
    for cmd in (["run"], ["runs"]):
        p = subprocess.run(
            [
                "runuser",
                "-u",
                user,
                "--",
                sys.executable,
                "-m",
                "lnrepro",
                *cmd,
                "--record-dir",
                str(runs),
            ],
            capture_output=True,
            text=True,
            cwd="/",
            timeout=120,
        )
        assert_one_line_error(Result(p.returncode, p.stdout, p.stderr), 5, str(runs))


# ---------------------------------------------------------------------------------- inf metrics
def test_an_infinite_metric_is_a_number_in_parse_run_and_explain(tmp_path: Path) -> None:
    """`max_diff=inf` made parse, run and explain exit 3, and run deleted its own log."""
    fail = (
        'echo "dx FAILED: max_diff=inf, mean_diff=-inf"\n'
        'echo "[  FAILED  ] S.T (1 ms)"\necho "[==========] 1 test from 1 test suite ran. (1 ms total)"\n'
        'echo "[  PASSED  ] 0 tests."\necho "[  FAILED  ] 1 test, listed below:"\necho "[  FAILED  ] S.T"\nexit 1\n'
    )
    binary = tmp_path / "gt"
    binary.write_text("#!/bin/sh\n" + GT_HEAD + fail)
    binary.chmod(0o755)
    log = tmp_path / "gt.log"
    log.write_text(subprocess.run([str(binary)], capture_output=True, text=True).stdout)
    code, out, err = lnrepro("parse", str(log), "--json")
    assert code == 1 and "Traceback" not in err, err
    from tests.consumers.schemas import strict_loads

    parsed = strict_loads(out)  # strict JSON: infinity is not a JSON number, so it is a string
    assert parsed["tests"][0]["metrics"]["dx"]["max_diff"] == "Infinity"
    code, out, err = lnrepro(
        "run",
        "--backend",
        "local",
        "--binary",
        str(binary),
        "--filter",
        "S.*",
        "--record-dir",
        str(tmp_path / "r"),
        "--json",
    )
    assert code == 1 and "Traceback" not in err, err
    doc = strict_loads(out)
    assert (
        doc["verdict"] == "FAIL"
        and doc["tests"][0]["worst_metrics"]["dx"]["max_diff"] == "Infinity"
    )
    assert (Path(doc["record_dir"]) / "attempt-1.log").is_file()  # the log is kept
    code, out, err = lnrepro("explain", doc["record_dir"])
    assert code in (0, 1, 4) and "Traceback" not in err and "internal error" not in err, err


@pytest.mark.root
def test_a_repository_on_a_read_only_mount_is_one_line(tmp_path: Path) -> None:
    """A bisect needs to write its state and worktrees under .git: a read-only mount is exit 5
    with one line, not an internal error, and nothing is left mounted or written."""
    from tests.conftest import need

    need(os.geteuid() == 0, "needs root (mount --bind)")
    repo = repo_with_commits(tmp_path / "r")
    ro = tmp_path / "ro"
    ro.mkdir()
    subprocess.run(["mount", "--bind", str(repo), str(ro)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(ro)], check=True)
        ran = lnrepro("bisect", "--repo", ro, *BISECT_TRUE)
        assert_one_line_error(ran, 5, "Read-only file system", "clone")
        assert not (repo / ".git" / "lnrepro").exists()
    finally:
        subprocess.run(["umount", str(ro)], check=False)
