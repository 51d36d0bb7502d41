"""The ``lnrepro`` command's contract: its help, one-line errors, exit codes, crash log and
signals; in process through the real entry point (tests/harness.py), as a new process where
start-up or a signal is what is checked."""

from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import click
import pytest

from lnrepro.cli import all_commands
from lnrepro.cli.commands import COMMANDS
from lnrepro.errors import ExitCode
from tests.conftest import ROOT
from tests.harness import LNREPRO, assert_one_line_error, lnrepro


def run_fresh(code: str, heavy: tuple[str, ...]) -> tuple[str, list[str]]:
    """``code`` in a new interpreter: what it printed, and which of ``heavy`` it imported."""
    probe = f"\nimport sys\nprint('HEAVY', [m for m in {heavy!r} if m in sys.modules])\n"
    out = subprocess.run(
        [sys.executable, "-c", code + probe], capture_output=True, text=True, check=True
    ).stdout
    printed, _, loaded = out.rpartition("HEAVY ")
    return printed, ast.literal_eval(loaded)


@pytest.mark.parametrize("command", [None, *sorted(COMMANDS)])
def test_help_does_not_import_heavy_modules(command: str | None) -> None:
    """``lnrepro --help`` and every ``lnrepro COMMAND --help``: each in a new interpreter (issue
    45: none loads msgspec either; scripts/bench_startup.py --help-ratio times them)."""
    args = ["--help"] if command is None else [command, "--help"]
    code = f"from lnrepro.cli import main\ntry:\n    main({args!r})\nexcept SystemExit:\n    pass\n"
    # nor the process machinery: a command becomes a subreaper as it starts, not for its help
    heavy = ("numpy", "docker", "git", "rich", "ml_dtypes", "msgspec", "lnrepro.doors.proc")
    assert run_fresh(code, heavy)[1] == []


def test_checking_an_emulator_run_does_not_import_numpy() -> None:
    """`lnrepro run --backend emulator` checks --defect before it starts the emulator; the check
    is the defect grammar alone, and numpy is the emulator's, loaded in the emulator's process."""
    code = (
        "from lnrepro.errors import UsageError\n"
        "from lnrepro.model.requests import EmulatorSpec\n"
        "from lnrepro.run.validate import check_emulator\n"
        "check_emulator(EmulatorSpec(defect='double-subtract,drop-partial-tile'))\n"
        "try:\n    check_emulator(EmulatorSpec(defect='double-subtract,nonsense'))\n"
        "except UsageError as exc:\n    print('REFUSED', exc)\n"
    )
    printed, loaded = run_fresh(code, ("numpy", "ml_dtypes"))
    assert "REFUSED --defect: unknown defect 'nonsense'" in printed
    assert loaded == []


def test_only_a_noisy_bisect_imports_numpy(tmp_path: Path) -> None:
    """git's search needs no numpy; the Bayesian one (--confidence) loads it when it starts."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    for i in range(6):
        (repo / "n").write_text(f"{i}\n")
        subprocess.run([*git, "add", "n"], check=True)
        subprocess.run([*git, "commit", "-qm", f"c{i}"], check=True)
    shas = subprocess.run(
        [*git, "rev-list", "--reverse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.split()
    test = "sh -c 'test $(cat n) -lt 3'"
    for extra, numpy in (([], False), (["--confidence", "0.9"], True)):
        args = [
            "bisect",
            "--repo",
            str(repo),
            "--good",
            shas[0],
            "--bad",
            shas[-1],
            "--command",
            test,
            "--json",
            *extra,
        ]
        code = (
            "from lnrepro.cli import main\n"
            f"try:\n    rc = main({args!r})\nexcept SystemExit as e:\n    rc = e.code\n"
            "print('EXIT', rc)\n"
        )
        printed, loaded = run_fresh(code, ("numpy",))
        assert (
            "EXIT 0" in printed
            and json.loads(printed.split("EXIT")[0])["result"]["first_bad"] == shas[3]
        )
        assert loaded == (["numpy"] if numpy else []), (extra, loaded)


def test_every_command_and_every_option_is_in_the_reference() -> None:
    """docs/commands.md documents every command and every option of each, as click defines
    them today (scripts/cli_reference.py writes the option tables); the README names each."""
    reference = (ROOT / "docs" / "commands.md").read_text()
    readme = (ROOT / "README.md").read_text()
    for name, cmd in all_commands().items():
        assert cmd.help and len(cmd.help) > 20, name
        assert f"lnrepro {name}" in readme, f"README has no usage for {name}"
        assert f"## `lnrepro {name}" in reference or f"`lnrepro {name}" in reference, name
        block = reference.split(f"<!-- options:{name}:begin -->", 1)[1].split(
            f"<!-- options:{name}:end -->", 1
        )[0]
        for p in cmd.params:
            if isinstance(p, click.Option):
                for flag in p.opts:
                    assert f"`{flag}" in block or f" {flag}" in block or f"/{flag}" in block, (
                        name,
                        flag,
                    )
    p = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "cli_reference.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr


def test_exit_code_table_in_the_docs_matches_the_enum() -> None:
    page = (ROOT / "docs" / "exit-codes.md").read_text()
    section = page.split("## `lnrepro run --bisect-exit-code`", 1)[0]
    rows = {int(m) for m in re.findall(r"^\|\s*(\d+)\s*\|", section, re.M)}
    assert rows == {int(c) for c in ExitCode}  # every code documented, nothing else claimed
    # and the codes the command really returns for signals are the table's
    assert (ExitCode.HANGUP, ExitCode.INTERRUPTED, ExitCode.TERMINATED) == (129, 130, 143)


def test_version() -> None:
    p = lnrepro("--version")
    assert p.returncode == 0 and re.search(r"\d+\.\d+\.\d+", p.stdout)


def test_bisect_without_endpoints_is_a_usage_error(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    p = lnrepro("bisect", "--repo", str(tmp_path), "--command", "true")
    assert_one_line_error(p, 2, "needs --good and --bad")


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (None, "no such file"),
        (b"", "is empty"),
        (b"hello\nworld\n" * 100, "no googletest output"),
        (bytes(range(256)) * 50, "binary file"),
    ],
)
def test_parse_bad_inputs_are_one_line_errors(
    tmp_path: Path, content: bytes | None, needle: str
) -> None:
    log = tmp_path / "x.log"
    if content is not None:
        log.write_bytes(content)
    assert_one_line_error(lnrepro("parse", str(log)), ExitCode.INPUT, needle, "fix:")


def test_parse_directory_and_bad_report(tmp_path: Path) -> None:
    p = lnrepro("parse", str(tmp_path))
    assert p.returncode == ExitCode.INPUT and "directory" in p.stderr
    log = tmp_path / "ok.log"
    log.write_text("[ RUN      ] A.B\n[       OK ] A.B (1 ms)\n")
    bad = tmp_path / "r.json"
    bad.write_text("{not json")
    p = lnrepro("parse", str(log), "--report", str(bad))
    assert p.returncode == ExitCode.INPUT and "not valid JSON" in p.stderr


def test_parse_bad_metric_pattern_is_usage_error(tmp_path: Path) -> None:
    log = tmp_path / "ok.log"
    log.write_text("[ RUN      ] A.B\n[       OK ] A.B (1 ms)\n")
    p = lnrepro("parse", str(log), "--metric-pattern", "(unclosed")
    assert_one_line_error(p, ExitCode.USAGE, "not a regular expression")


def test_parse_json_schema_and_exit_codes(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text(
        "[ RUN      ] S.Good\n[       OK ] S.Good (3 ms)\n"
        "[ RUN      ] S.Bad\ndx FAILED: max_diff=1000, mean_diff=1004.21\n"
        "x.cpp:183: Failure\nValue of: xt::allclose(metal_dx_flat, dx_ref, 1.0e-3F, 5e-1F)\n"
        "  Actual: false\nExpected: true\n[  FAILED  ] S.Bad (4 ms)\n[ RUN      ] S.Crash\n"
    )
    p = lnrepro("parse", str(log), "--json", "--exit-code", "139")
    assert p.returncode == ExitCode.FAILED
    doc = json.loads(p.stdout)
    assert doc["schema"] == "lnrepro.gtest-run/2"
    tests = {t["name"]: t for t in doc["tests"]}
    assert tests["S.Good"]["status"] == "PASSED" and tests["S.Good"]["duration_ms"] == 3
    assert tests["S.Bad"]["metrics"]["dx"] == {
        "max_diff": 1000,
        "mean_diff": 1004.21,
        "rtol": 0.001,
        "atol": 0.5,
    }
    assert tests["S.Bad"]["failures"][0] == {
        "file": "x.cpp",
        "line": 183,
        "message": "Value of: xt::allclose(metal_dx_flat, dx_ref, 1.0e-3F, 5e-1F)\n  Actual: false\nExpected: true",
    }
    assert (
        tests["S.Crash"]["status"] == "CRASHED" and tests["S.Crash"]["crash"]["signal"] == "SIGSEGV"
    )
    assert doc["totals"]["CRASHED"] == 1
    ok = tmp_path / "ok.log"
    ok.write_text("[ RUN      ] S.Good\n[       OK ] S.Good (3 ms)\n")
    assert lnrepro("parse", str(ok)).returncode == 0
    md = lnrepro("parse", str(log), "--markdown", "--exit-code", "139")
    assert "| 1 | <code>S.Bad</code> | **FAILED** |" in md.stdout


def test_table_output_renders(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text(
        "[ RUN      ] S.Bad\ndx FAILED: max_diff=1000, mean_diff=1\n[  FAILED  ] S.Bad (4 ms)\n"
    )
    r = lnrepro("parse", log)
    assert r.code == ExitCode.FAILED, r.err
    assert "S.Bad" in r.out and "FAILED" in r.out and "max_diff=1000" in r.out


def test_internal_errors_become_exit_3_with_a_crash_log(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import lnrepro.gtest.files as files

    def boom(*a: object, **k: object) -> None:
        raise RuntimeError("synthetic bug")

    monkeypatch.setattr(files, "parse_log_file", boom)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    log = tmp_path / "x.log"
    log.write_text("x")
    code, _, err = lnrepro("parse", str(log))
    assert code == ExitCode.INTERNAL
    assert "internal error: RuntimeError: synthetic bug" in err
    crash = list(tmp_path.glob("lnrepro-crash-*.log"))
    assert crash and "synthetic bug" in crash[0].read_text()


@pytest.mark.parametrize(("sig", "code"), [("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129)])
def test_signals_exit_128_plus_n_without_traceback(sig: str, code: int) -> None:
    import signal
    import time

    # `parse -` on a pipe nobody writes to: blocked in a read when the signal comes
    from tests.conftest import default_signals

    proc = subprocess.Popen(
        [*LNREPRO, "parse", "-"],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_signals,
    )
    signum = getattr(signal, sig)
    # once lnrepro's handlers are in (/proc's SigCgt has SIGTERM and SIGHUP, which Python itself
    # leaves alone), not after a guessed delay that a loaded machine outlasts
    ours = 1 << (signal.SIGTERM - 1) | 1 << (signal.SIGHUP - 1)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        status = Path(f"/proc/{proc.pid}/status").read_text().splitlines()
        caught = next(line.split()[1] for line in status if line.startswith("SigCgt:"))
        if int(caught, 16) & ours == ours:
            break
        time.sleep(0.05)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == code
    assert ("interrupted" in err or "terminated" in err) and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("sig", "code", "line"),
    [("SIGINT", 130, "lnrepro: interrupted"), ("SIGTERM", 143, "lnrepro: terminated by SIGTERM")],
)
@pytest.mark.parametrize("lost", ["in a class body", "swallowed"])
def test_a_signal_wins_when_its_exception_is_lost_on_the_way(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    sig: str,
    code: int,
    line: str,
    lost: str,
) -> None:
    """A signal's exception raised while a class is made (a lazy import of a dataclass) comes
    out of Python 3.11 as a RuntimeError; a library may swallow it. Either way: 128+N, one line,
    no crash log."""
    import signal

    import lnrepro.gtest.files as files
    from lnrepro.errors import InputError

    signum = getattr(signal, sig)

    def in_a_class_body(*a: object, **k: object) -> None:
        class Field:
            def __set_name__(self, owner: type, name: str) -> None:
                os.kill(os.getpid(), signum)  # its handler runs before kill returns

        type("Record", (), {"x": Field()})

    def swallowed(*a: object, **k: object) -> None:
        with contextlib.suppress(BaseException):  # what a careless library does
            os.kill(os.getpid(), signum)
        raise InputError("the log ended early", "rerun")

    monkeypatch.setattr(
        files, "parse_log_file", in_a_class_body if lost == "in a class body" else swallowed
    )
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    log = tmp_path / "x.log"
    log.write_text("x")
    ran = lnrepro("parse", str(log))
    assert (ran.code, ran.err.strip().splitlines()) == (code, [line])
    assert not list(tmp_path.glob("lnrepro-crash-*.log"))


def test_a_second_signal_during_the_unwind_gives_no_second_line(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """Ctrl-C, then SIGTERM while the first unwinds (a supervisor giving up): one line, and the
    exit code of the signal that ended it."""
    import signal

    import lnrepro.gtest.files as files

    def twice(*a: object, **k: object) -> None:
        try:
            os.kill(os.getpid(), signal.SIGINT)
        finally:
            os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(files, "parse_log_file", twice)
    log = tmp_path / "x.log"
    log.write_text("x")
    ran = lnrepro("parse", str(log))
    assert (ran.code, ran.err.strip().splitlines()) == (143, ["lnrepro: terminated by SIGTERM"])


def test_ctrl_c_inside_a_dataclass_being_made_still_exits_130(tmp_path: Path) -> None:
    """Under ``python -m``, CPython 3.11 ends the process by SIGINT, however it was handled, once
    a plain KeyboardInterrupt has left code run by ``exec`` of a string: what dataclasses do as
    a lazy import makes one. Ctrl-C at that moment must still exit 130, with one line."""
    (tmp_path / "ctrl_c_probe.py").write_text(
        "import os, signal, sys\n"
        "import lnrepro.cli, lnrepro.gtest.files as files\n"
        "def boom(*a, **k):\n"
        "    exec('os.kill(os.getpid(), signal.SIGINT)', {'os': os, 'signal': signal})\n"
        "files.parse_log_file = boom\n"
        "raise SystemExit(lnrepro.cli.main(['parse', sys.argv[1]]))\n"
    )
    log = tmp_path / "x.log"
    log.write_text("x")
    from tests.conftest import default_signals

    p = subprocess.run(
        [sys.executable, "-m", "ctrl_c_probe", str(log)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        preexec_fn=default_signals,
    )
    assert (p.returncode, p.stderr.strip().splitlines()) == (130, ["lnrepro: interrupted"])


def test_help_summaries_are_whole() -> None:
    p = lnrepro("--help")
    assert p.returncode == 0
    commands = p.stdout.split("Commands:", 1)[1]
    assert "..." not in commands  # click truncates a long docstring summary with "..."
    for name, cmd in all_commands().items():
        assert cmd.short_help and cmd.short_help.split()[0] in commands, name


def test_default_human_output_of_run_and_env_check(tmp_path: Path) -> None:
    env = {"COLUMNS": "200"}
    p = lnrepro(
        "run",
        "--filter",
        "*2048Features:*OneTilePerRow",
        "--seed",
        "1",
        "--record-dir",
        str(tmp_path),
        cwd=tmp_path,
        env=env,
    )
    assert p.returncode == 1, p.stderr
    out = p.stdout
    assert "BugRepro_Deterministic_2048Features" in out and "FAIL" in out and "PASS" in out
    assert "dx: max_diff=1000" in out and "0/1 = 0%" in out
    assert (
        "rerun:  lnrepro run --backend emulator --kernel-era 2025-12 --arch wormhole_b0 --data random --seed 1"
        in out
    )
    p = lnrepro("env-check", "--sysroot", str(tmp_path), cwd=tmp_path, env=env)
    assert p.returncode == 1 and "lnrepro env-check (sysroot)" in p.stdout
    assert "verdict: not ready" in p.stdout and "device" in p.stdout


@pytest.mark.parametrize("late", [False, True], ids=["", "sent-again-into-the-hook"])
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_raised_where_python_ignores_exceptions_still_stops_the_command(
    sig: str, late: bool
) -> None:
    """CI: a SIGINT's handler ran inside an import lock's weakref callback, where Python prints
    and drops exceptions ("Exception ignored in ... Traceback"): the stop was lost and a bisect
    went on to the end of its step. A weakref callback is the same kind of place: the signal
    arrives there, and the command must still stop, with no traceback. On a loaded machine the
    stop sent again came while the main thread was still in the unraisable hook (ignored there
    too, "went on"): `late` sends it there at once."""
    import sys

    code = f"""
import os, signal, sys, time, weakref
import lnrepro.cli.exits as c

signal.signal(signal.SIGINT, signal.default_int_handler)  # as from a terminal, not a background job

if {late}:
    real = c._send_later
    def at_once(signum):
        c._send_later = real
        os.kill(os.getpid(), signum)  # still inside the hook, as a late timer on a busy machine
    c._send_later = at_once

class Obj: pass

def cb(_ref):
    os.kill(os.getpid(), signal.{sig})  # the handler runs here, in the ignored callback
    time.sleep(0.2)

def command(args):
    o = Obj()
    r = weakref.ref(o, cb)
    del o  # the callback runs now
    time.sleep(5)  # the rest of the command: it must not get here
    print("went on")
    return 0

c._main = command  # the stop must come out of it (main's own handling lives in _main)
try:
    c.main([])
except BaseException as exc:
    print("stopped by", type(exc).__name__)
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    stop = "Interrupted" if sig == "SIGINT" else "Terminated"
    assert p.stdout.strip() == f"stopped by {stop}", (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr and "ignored" not in p.stderr, p.stderr
