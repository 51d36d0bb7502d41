"""Faults a user meets, each through the real `lnrepro` command: as a subprocess where the fault
needs one (signals, what the binary leaves behind, containers, a full stdout, a deleted working
directory), in process otherwise (tests/harness.py).

Every case checks the exit code, that stderr is one line with no traceback, what the record
says, and that nothing lnrepro started outlives it (processes by pid, containers by label).
README.md's "What lnrepro guarantees when things go wrong" is backed by these tests.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import rootfs
from tests.conftest import IN_CI, default_signals, docker_ok, need
from tests.harness import LNREPRO, Result, assert_one_line_error, lnrepro, lnrepro_process
from tests.leftovers import left, owner

HEADER = """#!/bin/sh
echo "[==========] Running 1 test from 1 test suite."
echo "[ RUN      ] S.T"
"""
FOOTER = """echo "[       OK ] S.T (1 ms)"
echo "[==========] 1 test from 1 test suite ran. (1 ms total)"
echo "[  PASSED  ] 1 test."
"""


def fake_gtest(path: Path, body: str) -> Path:
    path.write_text(HEADER + body + FOOTER)
    path.chmod(0o755)
    return path


def alive(pid: int) -> bool:
    """Running, sleeping or stopped: not a zombie (Z), nor one being reaped (X, EXIT_DEAD)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X", "x")


def pids(path: Path) -> list[int]:
    return [int(x) for x in path.read_text().split()] if path.exists() else []


def only_run_dir(base: Path) -> Path:
    (d,) = base.iterdir()
    return d


# ------------------------------------------------------------------ nothing left running
@pytest.mark.parametrize(
    ("how", "warning"),
    [
        ("( sleep 1000 >/dev/null 2>&1 </dev/null & echo $! > PIDS )", "left 1 process"),
        ("sleep 1000 & echo $! > PIDS", "left 1 process"),  # holds stdout open
        ("setsid sleep 1000 & echo $! > PIDS", "escaped"),  # leaves the group, holds stdout
    ],
    ids=["leftover-in-group", "leftover-holding-stdout", "setsid-escapee"],
)
def test_what_the_binary_leaves_behind_is_killed(tmp_path: Path, how: str, warning: str) -> None:
    pidfile = tmp_path / "pids"
    binary = fake_gtest(tmp_path / "gt", how.replace("PIDS", str(pidfile)) + "\n")
    start = time.monotonic()
    p = lnrepro_process(
        "run",
        "--filter",
        "S.*",
        "--backend",
        "local",
        "--binary",
        str(binary),
        "--timeout",
        "60",
        "--record-dir",
        str(tmp_path / "runs"),
        "--json",
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    assert time.monotonic() - start < 20  # never the 60 s timeout
    doc = json.loads(p.stdout)
    (attempt,) = doc["attempts"]
    assert attempt["exit_code"] == 0 and not attempt["timed_out"]
    assert any(warning in w for w in attempt["warnings"]), attempt["warnings"]
    (pid,) = pids(pidfile)
    assert not alive(pid)


def hanging_second_attempt(tmp_path: Path) -> tuple[Path, Path]:
    """A binary whose first attempt passes at once and whose later attempts hang."""
    pidfile, counter = tmp_path / "pids", tmp_path / "count"
    body = f"""n=$(cat {counter} 2>/dev/null || echo 0); echo $((n + 1)) > {counter}
if [ "$n" -ge 1 ]; then sleep 1000 & echo $! >> {pidfile}; echo $$ >> {pidfile}; wait; fi
"""
    return fake_gtest(tmp_path / "gt", body), pidfile


@pytest.mark.parametrize(("sig", "code"), [("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129)])
def test_a_signal_mid_run_kills_the_attempt_and_keeps_the_finished_ones(
    tmp_path: Path, sig: str, code: int
) -> None:
    binary, pidfile = hanging_second_attempt(tmp_path)
    runs = tmp_path / "runs"
    proc = subprocess.Popen(
        [
            *LNREPRO,
            "run",
            "--filter",
            "S.*",
            "--backend",
            "local",
            "--binary",
            str(binary),
            "-n",
            "5",
            "--record-dir",
            str(runs),
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_signals,
    )
    deadline = time.monotonic() + 30
    while len(pids(pidfile)) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(pids(pidfile)) == 2, "attempt 2 never started"
    proc.send_signal(getattr(signal, sig))
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    assert "Traceback" not in err
    assert not any(alive(pid) for pid in pids(pidfile))  # the binary and its child
    doc = json.loads((only_run_dir(runs) / "record.json").read_text())
    assert doc["state"] == "interrupted" and len(doc["attempts"]) == 1
    assert doc["attempts"][0]["tests"][0]["status"] == "PASSED"
    assert (
        doc["stop_reason"]
        == ("interrupted (Ctrl-C)" if sig == "SIGINT" else f"interrupted ({sig})")
        + " after 1 of 5 attempt(s)"
    )


def test_kill_9_after_an_attempt_keeps_the_finished_attempt(tmp_path: Path) -> None:
    """SIGKILL cannot be caught: the record written after each attempt is what survives."""
    binary, pidfile = hanging_second_attempt(tmp_path)
    runs = tmp_path / "runs"
    proc = subprocess.Popen(
        [
            *LNREPRO,
            "run",
            "--filter",
            "S.*",
            "--backend",
            "local",
            "--binary",
            str(binary),
            "-n",
            "5",
            "--record-dir",
            str(runs),
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while len(pids(pidfile)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        proc.kill()
        proc.wait(timeout=30)
        doc = json.loads((only_run_dir(runs) / "record.json").read_text())
        assert doc["state"] == "running" and len(doc["attempts"]) == 1
        assert doc["attempts"][0]["tests"][0]["status"] == "PASSED"
    finally:  # lnrepro could not clean up after SIGKILL: the test does
        for pid in pids(pidfile):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


# ------------------------------------------------------------------ records survive
def test_half_written_report_is_the_attempts_problem(tmp_path: Path) -> None:
    body = """for a in "$@"; do case "$a" in --gtest_output=json:*) printf '{"testsuites": [{"na' > "${a#--gtest_output=json:}";; esac; done
echo "dx FAILED: max_diff=1000, mean_diff=1000"
"""
    binary = fake_gtest(tmp_path / "gt", body)
    p = lnrepro_process(
        "run",
        "--filter",
        "S.*",
        "--backend",
        "local",
        "--binary",
        str(binary),
        "--record-dir",
        str(tmp_path / "runs"),
        "--json",
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["state"] == "complete"
    assert any("report ignored" in w for w in doc["attempts"][0]["warnings"])
    assert doc["tests"][0]["worst_metrics"]["dx"]["max_diff"] == 1000  # the console stands


def test_record_and_logs_have_the_same_permissions(tmp_path: Path) -> None:
    binary = fake_gtest(tmp_path / "gt", "")
    p = lnrepro_process(
        "run",
        "--filter",
        "S.*",
        "--backend",
        "local",
        "--binary",
        str(binary),
        "--record-dir",
        str(tmp_path / "runs"),
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    d = only_run_dir(tmp_path / "runs")
    modes = {f.name: stat.S_IMODE(f.stat().st_mode) for f in d.iterdir()}
    assert modes["record.json"] == modes["attempt-1.log"], modes


def test_full_disk_is_exit_5_and_leaves_no_empty_run(tmp_path: Path) -> None:
    need(os.geteuid() == 0, "needs root to mount a tiny tmpfs")
    small = tmp_path / "small"
    small.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(small)], check=True)
    try:
        (small / "filler").write_bytes(b"\0" * 12 * 1024)
        binary = fake_gtest(
            tmp_path / "gt",
            "i=0; while [ $i -lt 400 ]; do echo 'noise line of a chatty test binary'; i=$((i+1)); done\n",
        )
        p = lnrepro_process(
            "run",
            "--filter",
            "S.*",
            "--backend",
            "local",
            "--binary",
            str(binary),
            "--record-dir",
            str(small / "runs"),
            cwd=tmp_path,
        )
        assert_one_line_error(p, 5, "no space left", "free space at")
        assert not any((small / "runs").iterdir())
    finally:
        subprocess.run(["umount", str(small)], check=True)


def test_no_empty_run_directory_when_the_binary_cannot_start(tmp_path: Path) -> None:
    junk = tmp_path / "junk"
    junk.write_bytes(os.urandom(4096))
    junk.chmod(0o755)
    p = lnrepro_process(
        "run",
        "--filter",
        "S.*",
        "--backend",
        "local",
        "--binary",
        str(junk),
        "--record-dir",
        str(tmp_path / "runs"),
        cwd=tmp_path,
    )
    assert_one_line_error(p, 5, "not an executable")
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


# ------------------------------------------------------------------ hostile text
HOSTILE = "Value of: m[idx] == v[x, y] [/] [bold]x[/bold] [link=file:///etc]y[/link]"


def test_hostile_names_and_messages_render_as_written(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text(
        f"[ RUN      ] S.T[/x]\nf.cpp:3: Failure\n{HOSTILE}\n[  FAILED  ] S.T[/x] (1 ms)\n"
    )
    for fmt in ([], ["--markdown"], ["--json"]):
        p = lnrepro_process(
            "parse", str(log), *fmt, cwd=tmp_path, env={**os.environ, "COLUMNS": "300"}
        )
        assert p.returncode == 1, p.stderr
        assert "Traceback" not in p.stderr
        if fmt == ["--markdown"]:  # escaped for Markdown: what a renderer shows is the text
            from tests.present.gfm import rendered_text

            assert "S.T[/x]" in rendered_text(p.stdout) and HOSTILE in rendered_text(p.stdout)
        else:
            assert "S.T[/x]" in p.stdout
        if not fmt:
            assert HOSTILE in p.stdout


def test_bracketed_paths_do_not_break_env_check(tmp_path: Path) -> None:
    weird = tmp_path / "x[/y]"
    weird.mkdir(parents=True)
    p = lnrepro_process(
        "env-check", "--tt-metal", str(weird), cwd=tmp_path, env={**os.environ, "COLUMNS": "300"}
    )
    assert p.returncode in (0, 1) and "Traceback" not in p.stderr
    assert "x[/y]" in p.stdout


# ------------------------------------------------------------------ one-line errors
@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["run", "--timeout", "nan"], 2, "is not a number"),
        (["run", "--timeout", "inf"], 2, "is not a number"),
        (["run", "--defect", ""], 2, "--defect is empty"),
        (["run", "--filter", ""], 2, "--filter is empty"),
        (["run", "--binary", "/bin/true"], 2, "--binary only applies"),
        (["run", "--json", "--markdown"], 2, "do not go together"),
        (["parse", "x.log", "--json", "--markdown"], 2, "do not go together"),
        (["env-check", "--image", "busybox"], 2, "only applies with --container"),
        (["env-check", "--mount-set", "full"], 2, "only applies with --container"),
        (["env-check", "--container", "--image", "Bad Image!!"], 2, "not a valid image name"),
        (["env-check", "--min-driver", "abc"], 2, "not a version"),
        (["env-check", "--min-driver", "-1"], 2, "not a version"),
        (["run", "--filter", "Nothing.*"], 5, "lnrepro run --list"),
        (["parse", "/dev/zero"], 4, "not a regular file"),
        (["parse", "nodir/x.log"], 4, "no such file"),
        (["parse", "x.log/inner"], 4, "cannot read"),
    ],
)
def test_ordinary_faults_are_one_line_errors(
    tmp_path: Path, args: list[str], code: int, needle: str
) -> None:
    (tmp_path / "x.log").write_text("[ RUN      ] S.T\n[       OK ] S.T (1 ms)\n")
    p = (
        lnrepro(*args, "--record-dir", str(tmp_path / "runs"), cwd=tmp_path)
        if args[0] == "run"
        else lnrepro(*args, cwd=tmp_path)
    )
    if code == 5:  # nothing to run is a verdict (NOT_RUN), said in one line, with a record
        assert p.code == 5 and p.err.count("\n") == 1 and needle in p.err, p.err
        assert p.err.startswith("lnrepro: NOT_RUN: "), p.err
    else:
        assert_one_line_error(p, code, needle)
    if code == 2:  # refused before anything ran: no record directory either
        assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert_one_line_error(lnrepro("parse", str(fifo), cwd=tmp_path), 4, "not a regular file")


def test_parse_dash_reads_stdin(tmp_path: Path) -> None:
    p = lnrepro(
        "parse", "-", "--json", cwd=tmp_path, input="[ RUN      ] S.T\n[  FAILED  ] S.T (1 ms)\n"
    )
    assert p.returncode == 1 and json.loads(p.stdout)["totals"]["FAILED"] == 1


def test_script_without_shebang_is_enoexec(tmp_path: Path) -> None:
    script = tmp_path / "noshebang"
    script.write_text("echo hi\n")
    script.chmod(0o755)
    p = lnrepro_process(
        "run",
        "--filter",
        "S.*",
        "--backend",
        "local",
        "--binary",
        str(script),
        "--record-dir",
        str(tmp_path / "runs"),
        cwd=tmp_path,
    )
    assert_one_line_error(p, 5, "not an executable", "#! line")


def test_unusable_record_directory_is_exit_5(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    p = lnrepro("run", "--record-dir", str(tmp_path / "afile" / "runs"), cwd=tmp_path)
    assert_one_line_error(p, 5, "record directory", "--record-dir")


@pytest.mark.parametrize(
    "report",
    [
        "[" * 200_000 + "]" * 200_000,
        '{"testsuites": [{"name": "S", "testsuite": 7}]}',
        '{"testsuites": [{"name": "S", "testsuite": [{"name": "T", "failures": 5}]}]}',
    ],
    ids=["nested-200k", "testsuite-7", "failures-5"],
)
def test_malformed_reports_are_bad_input(tmp_path: Path, report: str) -> None:
    (tmp_path / "x.log").write_text("[ RUN      ] S.T\n[       OK ] S.T (1 ms)\n")
    (tmp_path / "r.json").write_text(report)
    p = lnrepro("parse", "x.log", "--report", "r.json", cwd=tmp_path)
    assert_one_line_error(p, 4, "r.json")


def test_deleted_working_directory(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    proc = subprocess.run(
        [
            "sh",
            "-c",
            f'cd "{gone}" && rmdir "{gone}" && exec "$0" -m lnrepro parse x.log',
            sys.executable,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    ran = Result(proc.returncode, proc.stdout, proc.stderr)
    assert_one_line_error(ran, 5, "current directory no longer exists")


def test_stdout_on_a_full_device(tmp_path: Path) -> None:
    need(Path("/dev/full").exists(), "no /dev/full")
    log = tmp_path / "x.log"
    log.write_text("[ RUN      ] S.T\n[       OK ] S.T (1 ms)\n" * 2000)
    with open("/dev/full", "w") as full:
        p = subprocess.run(
            [*LNREPRO, "parse", str(log), "--json"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    assert p.returncode == 5 and "no space left" in p.stderr and "Traceback" not in p.stderr


def test_existing_directory_that_is_not_tt_metal(tmp_path: Path) -> None:
    p = lnrepro("env-check", "--tt-metal", str(tmp_path), "--json", cwd=tmp_path)
    check = next(c for c in json.loads(p.stdout)["checks"] if c["id"] == "tt-metal-home")
    assert check["status"] == "fail" and "does not exist" not in check["detail"]


def test_dubious_ownership_is_a_git_error(tmp_path: Path) -> None:
    need(os.geteuid() == 0, "needs root to hand the repository to another user")
    repo = tmp_path / "tt-metal"
    repo.mkdir()
    for name in ("build_metal.sh", "tt_metal", "tt-train"):
        (repo / name).mkdir() if "." not in name else (repo / name).write_text("")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["chown", "-R", "12345:12345", str(repo)], check=True)
    env = {k: v for k, v in os.environ.items() if k != "GIT_CONFIG_NOSYSTEM"}
    p = lnrepro_process("env-check", "--tt-metal", str(repo), cwd=tmp_path, env=env)
    assert_one_line_error(p, 6, "dubious ownership", "safe.directory")


# ------------------------------------------------------------------ the rerun line
@pytest.mark.parametrize(
    "opts",
    [
        [],
        ["--fp32-stats"],
        ["--block-size", "3"],
        ["--l1-max-tiles", "0"],
        ["--timeout", "300"],
        ["--defect", "overwrite-dy-gamma-sum", "--repeat", "2"],
        ["--kernel-era", "2025-11", "--arch", "blackhole", "--data", "random"],
    ],
)
def test_the_rerun_line_reproduces_the_run(tmp_path: Path, opts: list[str]) -> None:
    flt = ["--filter", "*OneTile:*TwoIncompleteTiles:*OneTilePerRow:*2048Features"]
    first = lnrepro_process(
        "run", *flt, *opts, "--record-dir", str(tmp_path / "a"), "--json", cwd=tmp_path
    )
    assert first.returncode in (0, 1), first.stderr
    doc = json.loads(first.stdout)
    rerun = doc["rerun"]
    assert rerun[:2] == ["lnrepro", "run"] and "--kernel-era" in rerun
    assert ("--seed" in rerun) == ("random" in opts)  # the test's own data needs no seed
    for o in opts:
        assert o in rerun, (o, rerun)
    again = lnrepro_process(*rerun[1:], "--record-dir", str(tmp_path / "b"), "--json", cwd=tmp_path)
    doc2 = json.loads(again.stdout)
    moved = [x.replace(str(tmp_path / "a"), str(tmp_path / "b")) for x in rerun]
    assert doc2["backend"] == doc["backend"] and doc2["rerun"] == moved
    assert [(t["name"], t["verdict"], t["worst_metrics"]) for t in doc2["tests"]] == [
        (t["name"], t["verdict"], t["worst_metrics"]) for t in doc["tests"]
    ]


# ------------------------------------------------------------------ containers
@pytest.fixture(scope="module")
def shell_less_image(tmp_path_factory: pytest.TempPathFactory) -> str:
    need(docker_ok(), "no Docker engine answers (scripts/test.sh starts dockerd as root)")
    root = tmp_path_factory.mktemp("nosh")
    (root / "hello.txt").write_text("no shell here\n")
    return rootfs.docker_import(root, "lnrepro-test-nosh:latest")


@pytest.mark.docker
def test_image_without_a_shell_leaves_no_container(tmp_path: Path, shell_less_image: str) -> None:
    p = lnrepro_process("env-check", "--container", "--image", shell_less_image, cwd=tmp_path)
    assert_one_line_error(p, 5, "did not start")
    assert not left(p.owner)


@pytest.mark.docker
def test_missing_bind_source_is_refused_before_anything_starts(
    tmp_path: Path, busybox_image: str
) -> None:
    missing = tmp_path / "missing-checkout"
    p = lnrepro_process(
        "env-check",
        "--container",
        "--image",
        busybox_image,
        "--tt-metal",
        str(missing),
        cwd=tmp_path,
    )
    assert_one_line_error(p, 4, "does not exist", "nothing was started")
    assert not missing.exists() and not left(p.owner)


@pytest.mark.docker
def test_sigterm_during_env_check_container_removes_it(tmp_path: Path, busybox_image: str) -> None:
    # an image whose shell takes its time: the probe is still running when SIGTERM comes
    root = rootfs.busybox_root(tmp_path / "slow", ("sleep",))
    (root / "bin" / "sh").write_text(
        '#!/bin/busybox sh\n/bin/busybox sleep 300\nexec /bin/busybox sh "$@"\n'
    )
    (root / "bin" / "sh").chmod(0o755)
    name = rootfs.docker_import(root, "lnrepro-test-slowsh:latest")
    proc = subprocess.Popen(
        [*LNREPRO, "env-check", "--container", "--image", name],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    its = owner(proc)
    deadline = time.monotonic() + 90  # a loaded engine took over 30 s to start it
    while not left(its) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert left(its), "the container never started"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and "Traceback" not in err
    assert not left(its)


def test_fault_suite_runs_in_ci() -> None:
    """The suite must not quietly skip its Docker and root cases where CI runs it."""
    if IN_CI:
        assert docker_ok() and os.geteuid() == 0
