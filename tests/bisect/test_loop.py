"""`lnrepro bisect` for real: subprocesses over generated git histories, kept few.

The loop's own logic (choices, skips, marks, --find-fix, hang and crash policies, signatures,
--confidence, merge bases, replaying a saved state, lost jobs) is tested in process with a
scripted workspace and scripted evidence: tests/bisect/test_loop_inprocess.py. What stays here,
and why it cannot be scripted:

* real git — the user's checkout, branch, index and stash untouched by the worktrees; --pick
  cherry-picked onto old commits; git-LFS pointers in a checkout;
* signals and processes — kill -9 then --resume in a new process; SIGTERM stopping every job's
  command; the lock that keeps a second `lnrepro bisect` process off the repository;
* the build+test oracle and containers — tt-metal's build and gtests (compiler), lnrepro's
  container and Docker contexts (docker).

The command line's answers (exit codes, one-line errors) run in process too, through
``lnrepro.cli.main``, over a small real repository.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.bisect.scripted import git, release_history
from tests.conftest import need_toolchain, run_gently
from tests.harness import lnrepro
from tests.leftovers import Ran, left
from tests.lookalike import KERNEL, TEST_FILE, GroundTruth, Spec, device_env, generate

LNREPRO = [sys.executable, "-m", "lnrepro"]
# the look-alike's UMD submodule comes from a local path: git refuses that transport by default
GIT_FILE_OK = {
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "protocol.file.allow",
    "GIT_CONFIG_VALUE_0": "always",
}
HAS_FIX = f"grep -q 'zero_dst_reg(dest, kMeanDyGamma);' {KERNEL}"  # exit 0 = the fixed kernel


def bisect(
    repo: str | Path, *args: str, env: dict[str, str] | None = None, timeout: float = 600
) -> Ran:
    return run_gently(
        [*LNREPRO, "bisect", "--repo", str(repo), *args],
        env={**os.environ, **GIT_FILE_OK, **(env or {})},
        timeout=timeout,
        cwd=repo,
    )


@pytest.fixture
def history(tmp_path: Path) -> GroundTruth:
    return generate(tmp_path / "tt-metal", Spec(commits=120, tus=1))


def result(p: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """``bisect --json`` prints the bisect record: its result, with its steps and id beside it."""
    assert "Traceback" not in p.stderr, p.stderr
    doc = json.loads(p.stdout)
    assert doc["schema"] == "lnrepro.bisect/6" and doc["kind"] == "bisect"
    return {**(doc["result"] or {}), "steps_taken": doc["steps"], "id": doc["id"], "record": doc}


def test_finds_the_culprit_on_a_merged_branch_and_leaves_the_checkout_alone(
    history: GroundTruth,
) -> None:
    repo = Path(history.path)
    (repo / "README.md").write_text("my uncommitted work\n")
    (repo / "notes.txt").write_text("untracked\n")
    git(repo, "checkout", "-q", "-b", "my-branch")
    git(repo, "stash", "list")
    before = (
        git(repo, "status", "--porcelain"),
        git(repo, "rev-parse", "HEAD"),
        git(repo, "rev-parse", "--abbrev-ref", "HEAD"),
        git(repo, "stash", "list"),
    )
    p = bisect(repo, "--good", history.good, "--bad", history.bad, "--command", HAS_FIX, "--json")
    assert p.returncode == 0, p.stderr
    r = result(p)
    assert r["first_bad"] == history.culprit and history.culprit not in history.first_parent
    assert r["last_good"] == history.culprit_parent and r["confirmed"] is True
    assert r["commit"]["subject"].startswith("[tt-train] LayerNorm backward")
    assert r["endpoint_checks"] == 2 and r["steps"] <= 9  # git-like: ~log2 of the candidates
    after = (
        git(repo, "status", "--porcelain"),
        git(repo, "rev-parse", "HEAD"),
        git(repo, "rev-parse", "--abbrev-ref", "HEAD"),
        git(repo, "stash", "list"),
    )
    assert after == before
    assert (repo / "README.md").read_text() == "my uncommitted work\n"
    assert (repo / "notes.txt").read_text() == "untracked\n"
    assert not (repo / ".git" / "lnrepro" / "bisect.lock").exists()
    assert "locked" not in git(repo, "worktree", "list", "--porcelain")


def test_tests_are_picked_onto_old_commits_and_unbuildable_ones_skipped(
    history: GroundTruth,
) -> None:
    """Old commits lack the BugRepro tests: --pick cherry-picks them onto every tested commit
    (git's own cherry-pick, in lnrepro's worktree); the stretch that does not build exits 125.
    Without the pick nothing can be tested (in process: test_loop_inprocess.py)."""
    check = (
        f"sh -c \"grep -q 'retries=' tt_metal/impl/device.cpp && exit 125; "
        f'grep -q BugRepro_ {TEST_FILE} || exit 125; {HAS_FIX}"'
    )
    p = bisect(
        history.path,
        "--good",
        history.good,
        "--bad",
        history.bad,
        "--command",
        check,
        "--pick",
        history.bugrepro,
        "--json",
    )
    assert p.returncode == 0, p.stderr
    r = result(p)
    assert r["first_bad"] == history.culprit
    assert all(s["mark"] != "skip" or "125" in s["reason"] for s in r["steps_taken"])


def test_kill_9_then_resume_in_a_new_process_repeats_no_step(history: GroundTruth) -> None:
    """The state a killed process left, resumed by another (the replay itself, after 1, 3 and 6
    steps: test_loop_inprocess.py)."""
    after = 3
    slow = f'sh -c "sleep 0.4; {HAS_FIX}"'
    repo = Path(history.path)
    state = repo / ".git" / "lnrepro" / "bisect.json"
    proc = subprocess.Popen(
        [
            *LNREPRO,
            "bisect",
            "--repo",
            str(repo),
            "--good",
            history.good,
            "--bad",
            history.bad,
            "--command",
            slow,
        ],
        env={**os.environ, **GIT_FILE_OK},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if state.exists() and len(json.loads(state.read_text())["steps"]) >= after:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    before = json.loads(state.read_text())["steps"]
    assert len(before) >= after and json.loads(state.read_text())["result"] is None
    # a second bisect meanwhile? the dead owner's lock is taken over, a live one refuses (below)
    p = bisect(repo, "--resume", "--json")
    assert p.returncode == 0, p.stderr
    r = result(p)
    assert r["first_bad"] == history.culprit
    steps = r["steps_taken"]
    assert steps[: len(before)] == before  # nothing finished was lost or redone
    keys = [(s["kind"], s["sha"]) for s in steps]
    assert len(keys) == len(set(keys))
    log = bisect(repo, "--log")
    assert log.returncode == 0 and history.culprit in log.stdout


def test_lfs_pointers_are_pulled_or_said_to_stay(tmp_path: Path) -> None:
    import shutil

    t = generate(tmp_path / "x", Spec(commits=40, tus=1, lfs_pointers=2))
    p = bisect(t.path, "--good", t.good, "--bad", t.bad, "--command", HAS_FIX, "--json")
    r = result(p)
    assert p.returncode == 0 and r["first_bad"] == t.culprit
    notes = {s["note"] for s in r["steps_taken"]}
    if shutil.which("git-lfs") is None:
        assert notes == {
            "the checkout uses git-LFS but git-lfs is not installed: LFS files stay pointers"
        }


def test_one_bisect_per_repository(history: GroundTruth) -> None:
    slow = f'sh -c "sleep 2; {HAS_FIX}"'
    proc = subprocess.Popen(
        [
            *LNREPRO,
            "bisect",
            "--repo",
            history.path,
            "--good",
            history.good,
            "--bad",
            history.bad,
            "--command",
            slow,
        ],
        env={**os.environ, **GIT_FILE_OK},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        lock = Path(history.path) / ".git" / "lnrepro" / "bisect.lock"
        deadline = time.monotonic() + 30
        while not lock.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        p = bisect(history.path, "--good", history.good, "--bad", history.bad, "--command", HAS_FIX)
        assert (
            p.returncode == 2
            and "another lnrepro bisect" in p.stderr
            and len(p.stderr.strip().splitlines()) == 1
        )
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 143
    assert not lock.exists()


def main(capsys: pytest.CaptureFixture[str], repo: Path, *args: str) -> tuple[int, str, str]:
    """``lnrepro bisect --repo REPO ARGS`` in process: its exit code, stdout and stderr."""
    ran = lnrepro("bisect", "--repo", repo, *args)
    return ran.code, ran.out, ran.err


@pytest.fixture
def small(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    return tmp_path / "r", release_history(tmp_path / "r", branch_at=3, fix_on_branch=False)


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["--good", "nope", "--bad", "HEAD", "--command", "true"], 6, "'nope' is not a commit"),
        (["--bad", "HEAD", "--command", "true"], 2, "needs --good and --bad"),
        (["--resume"], 4, "no bisect to resume"),
        (["--good", "main", "--bad", "main~9", "--command", "true"], 6, "is an ancestor of"),
    ],
)
def test_bisect_errors_are_one_line(
    small: tuple[Path, dict[str, str]],
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    code: int,
    needle: str,
) -> None:
    got, _, err = main(capsys, small[0], *args)
    assert got == code and needle in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    if "ancestor" in needle:
        assert "--find-fix" in err  # good after bad: perhaps it is the fix that is wanted


def test_skips_that_hide_the_culprit_exit_1_with_the_candidates(
    small: tuple[Path, dict[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """The loop's answer (in process: test_loop_inprocess.py); here what the command line makes
    of it: no culprit, so exit 1, and the candidates in the JSON."""
    repo, shas = small
    check = "sh -c 'grep -qx [45] n && exit 125; grep -q 0 bug'"  # c4, c5 do not build
    code, out, err = main(
        capsys, repo, "--good", shas["c0"], "--bad", "main", "--command", check, "--json"
    )
    doc = json.loads(out)
    assert code == 1 and doc["result"]["first_bad"] is None, err
    assert [c["sha"] for c in doc["result"]["candidates"]] == [shas["c4"], shas["c5"], shas["c6"]]


@pytest.mark.compiler
def test_build_and_test_oracle_on_the_real_lookalike(
    lookalike: GroundTruth, tmp_path: Path
) -> None:
    """The pipeline as the oracle: every step builds the worktree (incrementally) and runs the
    BugRepro test picked onto it; the unbuildable commits are BUILD_FAILED, hence skipped."""
    need_toolchain()
    env = device_env(tmp_path, Path(lookalike.path))
    env.pop("TT_METAL_HOME")
    fp = lookalike.first_parent
    good = fp[fp.index(lookalike.culprit_merge) - 8]  # a short range keeps the builds few
    p = bisect(
        lookalike.path,
        "--good",
        good,
        "--bad",
        lookalike.culprit_merge,
        "--pick",
        lookalike.bugrepro,
        "--runner",
        "local",
        "--filter",
        "*Deterministic_2048Features",
        "--record-dir",
        str(tmp_path / "runs"),
        "--json",
        env=env,
        timeout=900,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    r = result(p)
    assert r["first_bad"] == lookalike.culprit
    runs = [s for s in r["steps_taken"] if s.get("verdict")]
    assert runs and all(Path(s["record"]).is_dir() for s in runs)
    culprit_step = next(s for s in runs if s["sha"] == lookalike.culprit)
    assert culprit_step["verdict"] == "FAIL"
    # a commit that builds to what an earlier one did (docs, CI) shares its verdict and is not
    # run again; a confirmation always re-runs (the hash itself: test_backend_ttmetal.py)
    shared = [s for s in r["steps_taken"] if s.get("same_as")]
    assert all(s["attempts"] == [] and s["kind"] != "confirm" for s in shared)
    marks = {s["sha"]: s["mark"] for s in r["steps_taken"] if not s.get("same_as")}
    inputs = {s["sha"]: s["inputs"] for s in r["steps_taken"]}
    for s in shared:
        assert s["mark"] == marks[s["same_as"]] and inputs[s["sha"]] == inputs[s["same_as"]]


@pytest.mark.docker
def test_build_and_test_oracle_in_the_container(
    lookalike: GroundTruth, toolchain_image: str, fake_card_host: None, tmp_path: Path
) -> None:
    """The same bisect with every build and test in lnrepro's container, over the unbuildable
    stretch (BUILD_FAILED, skipped) and old commits without the BugRepro tests (picked)."""
    fp = lookalike.first_parent
    stretch = [fp.index(u) for u in lookalike.unbuildable if u in fp]
    good = fp[min(stretch) - 2]  # before the stretch that does not build; the culprit is after it
    p = bisect(
        lookalike.path,
        "--good",
        good,
        "--bad",
        lookalike.culprit_merge,
        "--pick",
        lookalike.bugrepro,
        "--runner",
        "docker",
        "--image",
        toolchain_image,
        "--filter",
        "*Deterministic_2048Features",
        "--record-dir",
        str(tmp_path / "runs"),
        "--json",
        timeout=1500,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    r = result(p)
    assert r["first_bad"] == lookalike.culprit
    verdicts = {s["sha"]: s.get("verdict") for s in r["steps_taken"]}
    assert all(v == "BUILD_FAILED" for sha, v in verdicts.items() if sha in lookalike.unbuildable)
    assert not left(p.owner)
    # tt-metal's configure asks git for the version: the worktree's git directories were there
    logs = [
        (Path(s["record"]) / "build.log").read_text() for s in r["steps_taken"] if s.get("record")
    ]
    assert logs and not any("Cannot parse tag" in log for log in logs)


@pytest.mark.docker
@pytest.mark.timeout(900)  # ~35% of runs are noise, hangs cost their 10 s: a long tail
def test_flaky_bisect_with_two_jobs_on_two_docker_contexts(
    lookalike: GroundTruth, toolchain_image: str, fake_card_host: None, tmp_path: Path
) -> None:
    """The look-alike's flaky modes — the bug shows in 80% of runs, clean commits fail 5%, and
    runs crash, hang or hit a driver error — bisected with --confidence in lnrepro's container,
    two jobs at once, each on its own Docker context (both pointing at the local engine)."""
    cfg = tmp_path / "docker-config"
    hosts = {"lnrepro-a": "unix:///var/run/docker.sock", "lnrepro-b": "unix:///run/docker.sock"}
    for name, host in hosts.items():
        subprocess.run(
            ["docker", "context", "create", name, "--docker", f"host={host}"],
            check=True,
            env={**os.environ, "DOCKER_CONFIG": str(cfg)},
            capture_output=True,
        )
    fp = lookalike.first_parent
    good = fp[fp.index(lookalike.culprit_merge) - 4]
    flake = (
        "TT_LOOKALIKE_FLAKE=p=0.05,q=0.8,crash=0.08,hang=0.04,infra=0.25"  # no noise at all: <1%
    )
    p = bisect(
        lookalike.path,
        "--good",
        good,
        "--bad",
        lookalike.culprit_merge,
        "--pick",
        lookalike.bugrepro,
        "--runner",
        "docker",
        "--image",
        toolchain_image,
        "--filter",
        "*Deterministic_2048Features",
        "--env",
        flake,
        "--timeout",
        "10",
        "--confidence",
        "0.999",
        "--jobs",
        "2",
        "--docker-context",
        "lnrepro-a",
        "--docker-context",
        "lnrepro-b",
        "--record-dir",
        str(tmp_path / "runs"),
        "--json",
        env={"DOCKER_CONFIG": str(cfg)},
        timeout=1800,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    r = result(p)
    assert r["search"] == "bayesian" and r["first_bad"] == lookalike.culprit
    assert r["confidence"] >= 0.999 and r["noisy_runs"] > 0
    assert 0.5 < r["rates"]["bad"] < 1.0 and r["rates"]["good"] < 0.3
    reasons = " ".join(why for s in r["steps_taken"] for o, why in s["outcomes"] if o == "noise")
    assert "infrastructure" in reasons or "crashed" in reasons or "hang" in reasons
    engines = set()
    for s in r["steps_taken"]:
        if s.get("record"):
            rec = json.loads((Path(s["record"]) / "record.json").read_text())
            engines.add((s["job"], rec["backend"]["docker_host"]))
    assert engines == {(0, hosts["lnrepro-a"]), (1, hosts["lnrepro-b"])}
    assert not left(p.owner)  # the jobs' containers are all gone, stopped ones included


def test_sigterm_stops_every_job_and_resume_finishes_the_noisy_search(
    history: GroundTruth, tmp_path: Path
) -> None:
    """--confidence with two jobs: SIGTERM mid-way kills both jobs' commands (nothing outlives
    lnrepro), keeps every finished run, and --resume reaches the answer without redoing one."""
    script = tmp_path / "flaky.py"
    script.write_text(
        "import random, sys, time\n"
        "time.sleep(0.3)\n"
        f"fixed = 'zero_dst_reg(dest, kMeanDyGamma);' in open({str(KERNEL)!r}).read()\n"
        "sys.exit(0 if fixed else int(random.random() < 0.8))  # lnrepro-flaky-marker\n"
    )
    repo = Path(history.path)
    state = repo / ".git" / "lnrepro" / "bisect.json"
    args = [
        "--good",
        history.good,
        "--bad",
        history.bad,
        "--command",
        f"{sys.executable} {script}",
        "--confidence",
        "0.99",
        "--jobs",
        "2",
    ]
    proc = subprocess.Popen(
        [*LNREPRO, "bisect", "--repo", str(repo), *args],
        env={**os.environ, **GIT_FILE_OK},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if state.exists() and len(json.loads(state.read_text())["steps"]) >= 5:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 143
    left = subprocess.run(
        ["pgrep", "-f", str(script)], capture_output=True, text=True
    ).stdout.split()
    assert left == []
    before = json.loads(state.read_text())["steps"]
    assert len(before) >= 5 and {s["job"] for s in before} == {0, 1}
    p = bisect(repo, "--resume", "--json")
    assert p.returncode == 0, p.stderr
    r = result(p)
    assert (
        r["search"] == "bayesian" and r["first_bad"] == history.culprit and r["confidence"] >= 0.99
    )
    assert r["steps_taken"][: len(before)] == before
