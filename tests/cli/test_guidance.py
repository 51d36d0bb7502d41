"""What a person is told on the way: a wrong request, a file that is not an input, a hang with no
diagnosis, a stopped run or bisect each say what is wrong and what to do next (an error in one
line, with the exit code docs/exit-codes.md gives it), and the help keeps every token whole."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.harness import LNREPRO, Result, lnrepro, lnrepro_process
from tests.harness import assert_one_line_error as one_error


# ------------------------------------------------------------------ blank lines, -n, --record-dir
@pytest.mark.parametrize(
    "argv",
    [["-n", "0"], ["--defect", "shiped"], ["--seed", "-1"], ["--tt-metal", "/nope"]],
    ids=" ".join,
)
def test_a_wrong_run_request_is_one_line_and_no_blank_line(argv: list[str], tmp_path: Path) -> None:
    one_error(lnrepro("run", *argv, "--record-dir", str(tmp_path / "runs"), cwd=tmp_path), 2)
    assert not (tmp_path / "runs").exists()


def test_an_option_missing_its_value_names_the_commands_help(tmp_path: Path) -> None:
    err = one_error(lnrepro("run", "-n", cwd=tmp_path), 2)
    assert err.endswith("fix: see `lnrepro run --help`"), err


@pytest.mark.parametrize("command", ["runs", "show", "report"])
def test_a_missing_record_dir_is_a_usage_error(command: str, tmp_path: Path) -> None:
    err = one_error(lnrepro(command, "--record-dir", str(tmp_path / "nope"), cwd=tmp_path), 2)
    assert f"--record-dir {tmp_path / 'nope'} does not exist" in err


# ------------------------------------------------------------------ --tt-metal that is not tt-metal
@pytest.mark.parametrize(
    "extra",
    [[], ["--dry-run"], ["--runner", "local"], ["--runner", "local", "--list"]],
    ids=" ".join,
)
def test_run_of_a_directory_that_is_not_tt_metal_says_so_at_once(
    extra: list[str], tmp_path: Path
) -> None:
    notm = tmp_path / "notm"
    notm.mkdir()
    p = lnrepro(
        "run", "--tt-metal", str(notm), *extra, "--record-dir", str(tmp_path / "runs"), cwd=tmp_path
    )
    err = one_error(p, 2)
    assert f"--tt-metal {notm} has no build_metal.sh: it is not a tt-metal checkout" in err
    assert "docker" not in err.lower() and "no such program" not in err
    assert not (tmp_path / "runs").exists()


def test_run_and_bisect_share_the_check() -> None:
    """One check, asked by both: bisect's of a commit, run's of a directory."""
    import inspect

    from lnrepro.bisect import validate as bv
    from lnrepro.run import validate as rv

    assert "check_builds_tt_metal" in inspect.getsource(bv._buildable)
    assert "check_builds_tt_metal" in inspect.getsource(rv.validate_run)
    assert "load_config" not in inspect.getsource(bv._buildable)


# ------------------------------------------------------------------ one list of defect names
def test_tolerance_and_run_take_the_same_defect_names(tmp_path: Path) -> None:
    from lnrepro.api import tolerance_model as _model
    from lnrepro.emulator.defects import DEFECT_NAMES, Defect

    for name in [
        "shipped",
        "none",
        *(d.value for d in Defect),
        "double-subtract,drop-partial-tile",
    ]:
        if name != "none":
            _model(name)  # accepted, as run accepts it
        ran = lnrepro("run", "--defect", name, "--dry-run", "--record-dir", tmp_path)
        assert ran.code == 0, (name, ran.err)
    # a name run knows, refused by the study for what it is: the reference, not a defect
    one_error(
        lnrepro("tolerance", "--shape", "1,32,1,64", "--defect", "none"), 2, "is the correct kernel"
    )
    assert _model("overwrite-dy-gamma-sum") == "overwrite (refuted)"  # the study's label
    ran = lnrepro("tolerance", "--shape", "1,32,1,64", "--defect", "overwrite (refuted)")
    one_error(ran, 2, "unknown defect 'overwrite (refuted)'")
    from lnrepro.cli import all_commands

    for command in ("run", "tolerance"):
        help_ = next(p for p in all_commands()[command].params if p.name in ("defect", "defects"))
        assert DEFECT_NAMES in str(getattr(help_, "help", "")), command


def test_tolerance_studies_a_defect_only_run_named() -> None:
    code, out, _ = lnrepro(
        "tolerance",
        "--shape",
        "1,32,1,2048",
        "--trials",
        "2",
        "--json",
        "--defect",
        "drop-partial-tile",
    )
    assert code == 0 and '"drop-partial-tile"' in out


# ------------------------------------------------------------------ files that are not inputs
def test_explain_of_a_missing_file_says_no_such_file(tmp_path: Path) -> None:
    err = one_error(lnrepro("explain", "/nope.log", cwd=tmp_path), 4)
    assert "/nope.log: no such file" in err and "no record" not in err


def test_explain_of_a_file_it_cannot_read_names_every_kind_it_reads(tmp_path: Path) -> None:
    (tmp_path / "cap.sh").write_text("#!/bin/sh\necho hi\nsleep 5\n")
    err = one_error(lnrepro("explain", "cap.sh", cwd=tmp_path), 4)
    fix = err.split(" — fix: ", 1)[1]
    for kind in ("run id", "gtest console log", "watcher log", "tt-triage output"):
        assert kind in fix, fix


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("#!/bin/sh\necho hi\n", "is not an lnrepro record"),
        ('{"a": 1}\n', "is not an lnrepro record"),
        ('{"schema": "lnrepro.run/5", "id', "cut off while being written"),
    ],
)
def test_show_of_a_file_that_is_not_a_record_says_so(text: str, said: str, tmp_path: Path) -> None:
    (tmp_path / "f").write_text(text)
    err = one_error(lnrepro("show", "f", cwd=tmp_path), 4)
    assert said in err, err


# ------------------------------------------------------------------ --help breaks at spaces only
def _words(text: str) -> list[str]:
    return text.replace("\b", " ").split()


def _own_tokens(cmd: object) -> set[str]:
    """Every token of a command's own help: its text, its options' flags and help."""
    import click

    assert isinstance(cmd, click.Command)
    out = set(_words(cmd.help or ""))
    for p in cmd.params:
        out.update(o for o in p.opts if o.startswith("-"))
        out.update(_words(getattr(p, "help", None) or ""))
    return out


@pytest.mark.parametrize("columns", [60, 80])
def test_help_breaks_lines_only_at_spaces(columns: int) -> None:
    """Every flag, path, test name and word of every command's help appears whole: click's own
    wrapper broke `--hang-in` after its hyphen and `LayerNormBackwardOpTest.BugRepro_*` inside."""
    from lnrepro.cli import all_commands

    for name, cmd in all_commands().items():
        out = lnrepro(name, "--help", width=columns - 2).out
        printed = set(out.split()) | {w.rstrip(",") for w in out.split()}  # "-n, --repeat"
        missing = sorted(t for t in _own_tokens(cmd) if t not in printed)
        assert not missing, (name, missing[:5])
        wide = [
            line
            for line in out.splitlines()
            if len(line) > columns - 2 and " " in line.strip() and not line.startswith("  lnrepro ")
        ]
        assert not wide, (name, wide[:3])  # a token longer than the line, an example: alone


def test_help_piped_at_80_columns_keeps_long_tokens_whole() -> None:
    p = lnrepro_process("run", "--help", env={"COLUMNS": "80"})
    assert p.code == 0, p.err
    words = p.stdout.split()
    for token in (
        "drop-xhat-blocks,",
        "LayerNormBackwardOpTest.BugRepro_*:LayerNormBackwardOpTest.NIGHTLY_*]",
        "tests/ttnn/unit_tests/operations/test_layer_norm.py::test_layer_norm)",
        "ghcr.io/tenstorrent/tt-metal/tt-metalium/ubuntu-22.04-dev-amd64:latest]",
    ):
        assert token in words, token
    prose = [line for line in p.stdout.splitlines() if not line.startswith("  lnrepro ")]
    assert max(len(line) for line in prose if " " in line.strip()) <= 78


# ------------------------------------------------------------------ a hang with no diagnosis
FAKE_HANG = """#!/bin/sh
for a in "$@"; do case "$a" in --gtest_list_tests) exit 0;; esac; done
echo "[==========] Running 2 tests from 1 test suite."
echo "[ RUN      ] LayerNormBackwardOpTest.MetalLayerNormBw_OneTile"
echo "[       OK ] LayerNormBackwardOpTest.MetalLayerNormBw_OneTile (5 ms)"
echo "[ RUN      ] LayerNormBackwardOpTest.BugRepro_Hang"
exec sleep 30
"""


@pytest.fixture(scope="module")
def hung_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, Result]:
    where = tmp_path_factory.mktemp("hang")
    binary = where / "fakebin.sh"
    binary.write_text(FAKE_HANG)
    binary.chmod(0o755)
    p = lnrepro(
        "run",
        "--backend",
        "local",
        "--binary",
        str(binary),
        "--timeout",
        "1",
        "--filter",
        "*",
        "--record-dir",
        str(where / "runs"),
        cwd=where,
    )
    assert p.returncode == 1, p.stderr
    return where, p


def test_run_says_where_it_hung_and_how_to_get_a_diagnosis(
    hung_run: tuple[Path, Result],
) -> None:
    _, p = hung_run
    assert "attempt 1: attempt 1" not in p.stdout
    assert "attempt 1: killed by lnrepro after the 1 s timeout" in p.stdout
    hang = next(line for line in p.stdout.splitlines() if line.startswith("hang: "))
    assert "hung in LayerNormBackwardOpTest.BugRepro_Hang" in hang
    assert "no watcher log or tt-triage output" in hang
    assert "TT_METAL_WATCHER=1" in hang and "--watcher 1" in hang  # what works for --backend local


def test_explain_of_a_hung_run_names_the_hang_before_any_model(
    hung_run: tuple[Path, Result],
) -> None:
    where, _ = hung_run
    p = lnrepro("explain", "last", "--record-dir", str(where / "runs"), cwd=where)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert "hung: attempt 1 hung in LayerNormBackwardOpTest.BugRepro_Hang" in lines[0]
    assert "no watcher log or tt-triage output" in lines[0] and "TT_METAL_WATCHER=1" in lines[0]
    note = next(i for i, line in enumerate(lines) if line.startswith("note: the models below"))
    table = next(i for i, line in enumerate(lines) if line.startswith("models against"))
    assert note < table and "not on LayerNormBackwardOpTest.BugRepro_Hang (HANG)" in lines[note]
    p = lnrepro("explain", "last", "--json", "--record-dir", str(where / "runs"), cwd=where)
    assert p.returncode == 0  # the passed test is still ranked; the document keeps its schema


def test_explain_of_a_cut_off_log_says_what_its_ranking_leaves_out(
    hung_run: tuple[Path, Result],
) -> None:
    where, _ = hung_run
    log = next((where / "runs").glob("run-*/attempt-1.log"))
    p = lnrepro("explain", str(log), cwd=where)
    assert p.returncode == 0, p.stderr
    first = p.stdout.splitlines()[0]
    assert first.startswith("note: the models below are ranked on the 1 test(s)")
    assert "not on LayerNormBackwardOpTest.BugRepro_Hang (CRASHED)" in first


def test_the_way_to_a_diagnosis_depends_on_the_backend() -> None:
    from lnrepro.model.requests import BinarySpec, EmulatorSpec, TtMetalSpec
    from lnrepro.run.pipeline import diagnosis_how

    assert diagnosis_how(EmulatorSpec()) is None
    local = diagnosis_how(BinarySpec(binary=Path("/b")))
    assert local is not None and "--watcher is --backend tt-metal's" in local
    tt = diagnosis_how(TtMetalSpec(checkout=Path("/t")))
    assert tt is not None and "--watcher 1" in tt and "--dispatch-timeout" in tt
    watched = diagnosis_how(TtMetalSpec(checkout=Path("/t"), watcher_s=1, triage=False))
    assert watched is not None and "--watcher" not in watched and "--no-triage" in watched


# ------------------------------------------------------------------ Ctrl-C in run -n 50
def test_ctrl_c_in_a_long_run_names_the_partial_record(tmp_path: Path) -> None:
    import json
    import signal
    import time

    from tests.conftest import default_signals

    runs = tmp_path / "runs"
    proc = subprocess.Popen(
        [*LNREPRO, "run", "-n", "50", "--filter", "*OneTile*", "--record-dir", str(runs)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        preexec_fn=default_signals,
    )
    deadline = time.monotonic() + 60
    record = None
    while time.monotonic() < deadline and proc.poll() is None:
        found = list(runs.glob("run-*/record.json"))
        if found and json.loads(found[0].read_text() or "{}").get("attempts"):
            record = found[0]
            break
        time.sleep(0.05)
    assert record is not None and proc.poll() is None
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    doc = json.loads(record.read_text())
    ran = len(doc["attempts"])
    assert 1 <= ran < 50 and doc["state"] == "interrupted"
    assert doc["stop_reason"] == f"interrupted (Ctrl-C) after {ran} of 50 attempt(s)"
    last = err.strip().splitlines()[-1]
    assert last == (
        f"lnrepro: interrupted — the {ran} finished attempt(s) are kept in {record} "
        f"(`lnrepro show {record.parent.name}`)"
    )


# ------------------------------------------------------------------ a bisect's state
def _repo(path: Path) -> Path:
    git = ["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@t"]
    path.mkdir()
    subprocess.run([*git, "init", "-q"], check=True)
    for i in range(4):
        (path / "f").write_text(f"{i}\n")
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", f"c{i}"], check=True)
    return path


def _kill_orphans(needle: str) -> None:
    import os
    import signal

    for d in Path("/proc").iterdir():
        try:
            if d.name.isdigit() and needle.encode() in (d / "cmdline").read_bytes():
                os.kill(int(d.name), signal.SIGKILL)
        except OSError:
            continue


def test_a_bisect_whose_process_is_gone_is_not_running_and_is_not_replaced(tmp_path: Path) -> None:
    import signal
    import time

    from tests.conftest import default_signals

    repo = _repo(tmp_path / "r")
    marker = tmp_path / "started"
    proc = subprocess.Popen(
        [
            *LNREPRO,
            "bisect",
            "--repo",
            str(repo),
            "--good",
            "HEAD~3",
            "--bad",
            "HEAD",
            "--command",
            f"sh -c 'touch {marker}; sleep 60'",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=default_signals,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not marker.exists():
            time.sleep(0.05)
        assert marker.exists()
        listed = lnrepro("runs", cwd=repo).stdout.strip().splitlines()[-1]
        assert "\trunning\t" in listed, listed  # it runs
        proc.send_signal(signal.SIGKILL)  # no chance to say it stopped (kill -9, SIGPIPE, a reboot)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        _kill_orphans(str(marker))  # the step's command outlived its killed lnrepro
    listed = lnrepro("runs", cwd=repo).stdout.strip().splitlines()[-1]
    assert "\tinterrupted\t" in listed and "its process is gone" in listed, listed
    p = lnrepro("bisect", "--good", "HEAD~3", "--bad", "HEAD", "--command", "true", cwd=repo)
    err = one_error(p, 2)
    assert "did not finish" in err and "`lnrepro bisect --resume`" in err
    assert f"rm {repo / '.git' / 'lnrepro' / 'bisect.json'}" in err


def test_resume_of_a_finished_bisect_shows_its_result(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "r")
    p = lnrepro(
        "bisect", "--good", "HEAD~3", "--bad", "HEAD", "--command", "grep -q '[01]' f", cwd=repo
    )
    assert p.returncode == 0, p.stderr
    again = lnrepro("bisect", "--resume", cwd=repo)
    assert again.returncode == 0, again.stderr
    assert "already finished" in again.stderr and "bisecting" not in again.stderr
    first_bad = next(line for line in p.stdout.splitlines() if line.startswith("first bad commit"))
    assert first_bad in again.stdout.splitlines()
    p = lnrepro("bisect", "--good", "HEAD~3", "--bad", "HEAD", "--command", "true", cwd=repo)
    assert p.returncode != 2 and "did not finish" not in p.stderr  # a finished one is replaced


def test_ctrl_c_in_a_terminal_erases_the_progress_bar(tmp_path: Path) -> None:
    """At 80 columns the bar filled the line; the terminal's "^C" echo wrapped it, and the bar,
    erased one line too high, stayed on the screen above "lnrepro: interrupted"."""
    import json
    import os
    import shlex
    import time

    from tests.conftest import need

    need(shutil.which("tmux") is not None, "tmux is not installed")
    runs = tmp_path / "runs"
    session = f"lnrepro-ctrl-c-{os.getpid()}"
    cmd = shlex.join(
        [*LNREPRO, "run", "-n", "50", "--filter", "*OneTile*", "--record-dir", str(runs)]
    )
    subprocess.run(
        [
            "tmux",
            "new-session",
            "-d",
            "-s",
            session,
            "-x",
            "80",
            "-y",
            "30",
            f"{cmd} >/dev/null; echo rc=$?; sleep 30",
        ],
        check=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            found = list(runs.glob("run-*/record.json"))
            if found and json.loads(found[0].read_text() or "{}").get("attempts"):
                break
            time.sleep(0.05)
        time.sleep(0.3)  # the bar is drawn again after the attempt
        subprocess.run(["tmux", "send-keys", "-t", session, "C-c"], check=True)
        screen = ""
        while time.monotonic() < deadline and "rc=" not in screen:
            time.sleep(0.1)
            screen = subprocess.run(
                ["tmux", "capture-pane", "-p", "-t", session],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False, capture_output=True)
    assert "rc=130" in screen, screen
    # the bar and its clock are gone; an attempt's own count line ("attempt 1/50: 2 passed") stays
    assert "━" not in screen and not re.search(r"\d/50 +\d:\d\d:\d\d", screen), screen
    assert "lnrepro: interrupted — the " in screen
