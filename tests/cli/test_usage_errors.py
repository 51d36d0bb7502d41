"""Usage errors: a mistake a person makes says what is wrong and what to do, in one line, with
the exit code docs/exit-codes.md gives it, and leaves nothing behind (no record, no bisect
state); the help documents the positional arguments and offers only near misses."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import click
import pytest

from lnrepro.cli import all_commands, cli
from tests.harness import assert_one_line_error, lnrepro


def git_repo(path: Path, files: dict[str, str] | None = None) -> Path:
    git = ["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@t"]
    path.mkdir()
    subprocess.run([*git, "init", "-q"], check=True)
    for i in range(2):
        for name, text in (files or {"n": ""}).items():
            (path / name).write_text(f"{text}{i}\n")
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", f"c{i}"], check=True)
    return path


# ------------------------------------------------------------------ 4: a wrong --binary
@pytest.mark.parametrize("what", ["missing", "directory", "not executable"])
def test_a_wrong_binary_is_a_usage_error_and_writes_no_record(what: str, tmp_path: Path) -> None:
    binary = {
        "missing": tmp_path / "nope" / "ttml_tests",
        "directory": tmp_path,
        "not executable": tmp_path / "t.txt",
    }[what]
    (tmp_path / "t.txt").write_text("x")
    records = tmp_path / "runs"
    code, _, err = lnrepro(
        "run", "--backend", "local", "--binary", str(binary), "--record-dir", str(records)
    )
    assert code == 2, err
    assert err.startswith(f"lnrepro: error: --binary {binary} ") and "BUILD_FAILED" not in err
    assert not records.exists()  # no record, so `last` is not the typo


def test_under_git_bisect_run_a_missing_binary_is_still_the_commits_skip(tmp_path: Path) -> None:
    """A commit whose build left no binary cannot be tested: git bisect run's 125, as before."""
    code, _, err = lnrepro(
        "run",
        "--backend",
        "local",
        "--binary",
        str(tmp_path / "nope"),
        "--record-dir",
        str(tmp_path / "runs"),
        "--bisect-exit-code",
    )
    assert code == 125 and "BUILD_FAILED" in err


# ------------------------------------------------------------------ 5: not tt-metal, no --command
def test_bisect_of_a_repository_without_build_metal_says_so_at_once(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "r")
    ran = lnrepro("bisect", "--repo", repo, "--good", "HEAD~1", "--bad", "HEAD")
    err = assert_one_line_error(ran, 2, "no build_metal.sh", "--command", "--tt-metal")
    assert "docker" not in err.lower()
    assert not (repo / ".git" / "lnrepro").exists()  # no state for --log or --resume to find
    code, _, err = lnrepro("bisect", "--repo", str(repo), "--log")
    assert code == 4 and "no bisect to show" in err


# ------------------------------------------------------------------ 7: --repo
@pytest.mark.parametrize(
    "mode",
    [["--good", "a", "--bad", "b", "--command", "true"], ["--log"], ["--resume"]],
    ids=" ".join,
)
@pytest.mark.parametrize(
    ("what", "said"),
    [
        ("missing", "does not exist"),
        ("plain", "is not a git repository"),
        ("file", "is a file, not a directory"),
    ],
)
def test_a_repo_that_is_not_a_repository_says_what_is_wrong_with_the_path(
    mode: list[str], what: str, said: str, tmp_path: Path
) -> None:
    path = {"missing": tmp_path / "nope", "plain": tmp_path, "file": tmp_path / "f"}[what]
    (tmp_path / "f").write_text("")
    err = assert_one_line_error(lnrepro("bisect", "--repo", path, *mode), 6)
    assert err.startswith(f"lnrepro: error: --repo {path} {said}") and "by hand" not in err
    assert "fix: pass the directory of a git clone" in err


# ------------------------------------------------------------------ 8: small lies
def test_bisect_log_without_a_bisect_does_not_talk_of_resuming(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "r")
    code, _, err = lnrepro("bisect", "--repo", str(repo), "--log")
    assert code == 4 and "resume" not in err and "no bisect to show" in err


@pytest.mark.parametrize(
    "command", [["runs"], ["show"], ["report"], ["compare", "a", "b"]], ids=" ".join
)
def test_a_record_dir_that_is_a_file_is_a_usage_error(command: list[str], tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    code, _, err = lnrepro(*command, "--record-dir", str(tmp_path / "f"))
    assert code == 2 and f"--record-dir {tmp_path / 'f'} is a file, not a directory" in err


@pytest.fixture(scope="module")
def one_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    records = tmp_path_factory.mktemp("runs")
    ran = lnrepro("run", "--defect", "none", "--filter", "*OneTile*", "--record-dir", records)
    assert ran.code == 0, ran.err
    return records


@pytest.mark.parametrize("where", ["directory", "no parent"])
def test_report_to_a_directory_is_a_usage_error(where: str, one_run: Path, tmp_path: Path) -> None:
    out = tmp_path if where == "directory" else tmp_path / "nope" / "r.md"
    err = assert_one_line_error(lnrepro("report", "--record-dir", one_run, "-o", out), 2)
    assert "record directory" not in err
    assert err.startswith(f"lnrepro: error: -o {out}") and "fix: " in err


@pytest.mark.parametrize("command", ["show", "report"])
def test_an_id_that_defaults_to_last_is_optional_in_the_usage(command: str) -> None:
    out = lnrepro(command, "--help").out
    assert f"Usage: lnrepro {command} [OPTIONS] [ID]" in out and "[default: last]" in out


# ------------------------------------------------------------------ 12: help text
@pytest.mark.parametrize(
    ("command", "metavars"),
    [
        ("show", ["[ID]"]),
        ("compare", ["A", "B"]),
        ("report", ["[ID]"]),
        ("explain", ["RUN|LOG"]),
        ("parse", ["LOG|-"]),
        ("bisect", ["[-- PATHS]"]),
    ],
)
def test_positional_arguments_are_documented_and_not_options(
    command: str, metavars: list[str]
) -> None:
    out = lnrepro(command, "--help").out
    sections = re.split(r"\n(?=\S[^\n]*:\n)", out)
    args = next(s for s in sections if s.startswith("Positional arguments:"))
    for m in metavars:
        row = next(line for line in args.splitlines() if line.strip().startswith(m))
        assert len(row.strip()) > len(m) + 5, f"{command}: {m} has no description"
        for s in sections:
            if not s.startswith("Positional arguments:"):
                assert not any(line.strip() == m for line in s.splitlines()), (command, m)


def test_a_typo_is_offered_only_near_misses() -> None:
    code, _, err = lnrepro("run", "--thershold", "3")
    assert code == 2 and "--watcher" not in err
    assert "--threshold is an option of `lnrepro bisect`" in err
    code, _, err = lnrepro("run", "--filer", "x")
    assert code == 2 and "did you mean --filter?" in err


def test_the_tolerance_example_says_the_real_default_draws() -> None:
    out = lnrepro("tolerance", "--help").out
    cmd = all_commands()["tolerance"]
    trials = next(p for p in cmd.params if p.name == "trials")
    assert isinstance(trials, click.Option)
    plain = re.search(r"^\s*lnrepro tolerance\s+#(.*)$", out, re.M)
    assert plain is not None and f"{trials.default} draws" in plain.group(1)


# ------------------------------------------------------------------ 6: Ctrl-C in a bisect
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_ctrl_c_in_a_bisect_says_how_to_continue(sig: str, tmp_path: Path) -> None:
    import signal
    import sys
    import time

    from tests.conftest import default_signals

    repo = git_repo(tmp_path / "r")
    state = repo / ".git" / "lnrepro" / "bisect.json"
    marker = tmp_path / "started"
    argv = [
        sys.executable,
        "-m",
        "lnrepro",
        "bisect",
        "--repo",
        str(repo),
        "--good",
        "HEAD~1",
        "--bad",
        "HEAD",
        "--command",
        f"sh -c 'touch {marker}; sleep 60'",
    ]
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_signals,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not marker.exists() and proc.poll() is None:
        time.sleep(0.05)  # the first step runs: the state is on disk
    assert proc.poll() is None and state.exists()
    proc.send_signal(getattr(signal, sig))
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + getattr(signal, sig), err
    last = err.strip().splitlines()[-1]
    assert last.startswith("lnrepro: interrupted" if sig == "SIGINT" else "lnrepro: terminated")
    assert f"`lnrepro bisect --resume --repo {repo}` continues it" in last, last


def test_the_command_list_imports_no_command() -> None:
    """`lnrepro --help` lists the commands from one table and imports none of their modules, nor
    the model (click's LazyGroup pattern); scripts/bench_startup.py --help-ratio times it."""
    import sys

    code = (
        "import sys\nfrom lnrepro.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n"
        "    pass\nprint(sorted(m for m in sys.modules if m.startswith('lnrepro')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(ast.literal_eval(out.stdout.strip().splitlines()[-1]))
    assert loaded <= {
        "lnrepro",
        "lnrepro.cli",
        "lnrepro.cli.commands",
        "lnrepro.cli.exits",
        "lnrepro.cli.help",
        "lnrepro.errors",
        "lnrepro.doors",
        "lnrepro.doors.proc",
    }
    assert "tolerance  Which tolerance" in out.stdout  # the list itself


def test_the_command_table_is_the_commands() -> None:
    commands = all_commands()
    assert set(commands) == set(cli.commands)  # nothing registered that the table lacks
    for name, cmd in commands.items():
        assert cmd.short_help and cmd.name == name


def test_bisect_outside_a_repository_without_repo_names_the_current_directory(
    tmp_path: Path,
) -> None:
    code, _, err = lnrepro("bisect", "--log", cwd=tmp_path)
    assert code == 6 and f"the current directory {tmp_path} is not in a git repository" in err
    assert "--repo DIR" in err and "by hand" not in err


def test_a_failed_git_command_is_named_in_the_fix(tmp_path: Path) -> None:
    """The fix said "run the same git command by hand" without saying which: now it names it."""
    from lnrepro.doors import gitops
    from lnrepro.errors import GitError

    repo = git_repo(tmp_path / "r")
    with pytest.raises(GitError) as info:
        gitops.git(repo, "cat-file", "-p", "no-such-ref")
    assert info.value.fix == f"run git -C {repo} cat-file -p no-such-ref by hand to see why"


@pytest.mark.parametrize(
    ("flag", "meant"),
    [("--markdown", "--format md"), ("--json", "--format json"), ("--junit", "--format junit")],
)
def test_a_value_given_as_a_flag_names_the_option_that_takes_it(flag: str, meant: str) -> None:
    """Was: ``report last --markdown`` pointed at compare's --markdown; report takes
    ``--format md`` (run's help says its Markdown is report's)."""
    err = assert_one_line_error(
        lnrepro("report", "last", flag), 2, f"no such option {flag}; did you mean {meant}?"
    )
    assert "is an option of" not in err
