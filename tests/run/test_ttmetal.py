"""`lnrepro run --tt-metal`: the look-alike checkout built by a profile and tested, for real.

The local runner here (the docker runner has its own tests): every verdict a run can give —
FAIL with the seeds' numbers, ENV_ERROR, BUILD_FAILED, NOT_RUN, HANG, CRASH — and the
`git bisect run` exit protocol.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import worktree
from tests.harness import lnrepro_process
from tests.lookalike import GroundTruth, device_env


def run_json(tree: Path, tmp: Path, env: dict[str, str], *extra: str) -> tuple[int, dict[str, Any]]:
    tmp.mkdir(parents=True, exist_ok=True)
    p = lnrepro_process(
        "run",
        "--tt-metal",
        str(tree),
        "--runner",
        "local",
        "--record-dir",
        str(tmp / "runs"),
        "--json",
        *extra,
        cwd=tmp,
        env=env,
        timeout=600,
    )
    assert "Traceback" not in p.stderr, p.stderr
    records = sorted((tmp / "runs").glob("run-*/record.json"))
    doc = json.loads(p.stdout) if p.stdout.strip() else json.loads(records[-1].read_text())
    return p.returncode, doc


def test_culprit_fails_like_the_reports(
    lookalike_builds: dict[str, Path], lookalike: GroundTruth, tmp_path: Path
) -> None:
    tree = lookalike_builds["bad"]
    env = device_env(tmp_path, tree)
    code, doc = run_json(tree, tmp_path, env)
    assert code == 1 and doc["verdict"] == "FAIL" and doc["state"] == "complete"
    verdicts = {t["name"].split(".")[1]: t for t in doc["tests"]}
    assert verdicts["NIGHTLY_MetalLayerNormBw_LargeFeatures_NoL1Fit"]["verdict"] == "PASS"
    det = [v for k, v in verdicts.items() if "Deterministic" in k]
    assert len(det) == 5 and all(
        v["verdict"] == "FAIL" and v["worst_metrics"]["dx"]["max_diff"] == 1000 for v in det
    )
    assert doc["build"]["ok"] and doc["build"]["profile"] == "in-tree"
    assert doc["build"]["steps"][-1] == "cmake --build build_Debug --target ttml_tests"
    # this run configured the session's tree here if anything had to (what configured it before
    # depends on the order of the tests: a container's run does it with that container's
    # compilers): the next run builds only the test's target
    _, again = run_json(tree, tmp_path / "again", env, "--filter", "*Deterministic_2048Features")
    assert again["build"]["steps"] == ["cmake --build build_Debug --target ttml_tests"]
    assert (Path(again["record_dir"]) / "build.log").read_text().startswith("$ cmake --build")
    fp = doc["fingerprint"]
    assert (
        fp["commit"] == lookalike.culprit
        and fp["runner"] == "local"
        and fp["build_profile"] == "in-tree"
    )
    assert fp["dirty"] is True  # the BugRepro tests are picked, uncommitted
    assert doc["rerun"][:6] == ["lnrepro", "run", "--tt-metal", str(tree), "--runner", "local"]
    # the kernel cache is the run's own: fresh every run, the user's never touched
    assert (Path(doc["record_dir"]) / "kernel-cache").is_dir()


def test_parent_passes_and_bisect_exit_code_is_0(
    lookalike_builds: dict[str, Path], tmp_path: Path
) -> None:
    tree = lookalike_builds["good"]
    code, doc = run_json(tree, tmp_path, device_env(tmp_path, tree), "--bisect-exit-code")
    assert code == 0 and doc["verdict"] == "PASS"


def test_broken_environment_is_env_error_not_a_kernel_failure(
    lookalike_builds: dict[str, Path], tmp_path: Path
) -> None:
    tree = lookalike_builds["bad"]
    env = device_env(tmp_path, tree, hugepages=False)
    code, doc = run_json(tree, tmp_path, env, "--filter", "*Deterministic_2048Features")
    assert code == 5 and doc["verdict"] == "ENV_ERROR"
    assert doc["attempts"][0]["env_error"] == "no huge page mount found in /proc/mounts for path"
    assert doc["tests"][0]["verdict"] == "ENV_ERROR"
    code, _ = run_json(
        tree, tmp_path / "b", env, "--filter", "*Deterministic_2048Features", "--bisect-exit-code"
    )
    assert code == 128  # git bisect run aborts: this machine can test no commit, not just this one


def test_unbuildable_commit_is_build_failed(lookalike: GroundTruth, tmp_path: Path) -> None:
    sha = next(s for s in lookalike.unbuildable if s in lookalike.first_parent)
    tree = worktree(lookalike, tmp_path / "broken", sha)
    p = lnrepro_process(
        "run",
        "--tt-metal",
        str(tree),
        "--runner",
        "local",
        "--record-dir",
        str(tmp_path / "runs"),
        cwd=tmp_path,
        env=device_env(tmp_path, tree),
        timeout=600,
    )
    err = p.stderr.strip().splitlines()
    assert p.returncode == 5 and "Traceback" not in p.stderr
    assert (
        err[-1].startswith("lnrepro: BUILD_FAILED: the build failed") and "check_cluster" in err[-1]
    )
    assert sum(line.startswith("lnrepro:") for line in err) == 1  # the rest is progress
    (record,) = (tmp_path / "runs").glob("run-*/record.json")
    doc = json.loads(record.read_text())
    assert doc["verdict"] == "BUILD_FAILED" and doc["state"] == "complete" and doc["attempts"] == []
    assert any("check_cluster" in line for line in doc["build"]["tail"])
    p = lnrepro_process(
        "run",
        "--tt-metal",
        str(tree),
        "--runner",
        "local",
        "--record-dir",
        str(tmp_path / "runs"),
        "--bisect-exit-code",
        cwd=tmp_path,
        env=device_env(tmp_path, tree),
        timeout=600,
    )
    assert p.returncode == 125 and p.stderr.strip().splitlines()[-1].startswith("lnrepro: skip:")


def test_missing_tests_are_not_run(lookalike_builds: dict[str, Path], tmp_path: Path) -> None:
    tree = lookalike_builds["main"]  # no BugRepro tests on main
    code, doc = run_json(
        tree, tmp_path, device_env(tmp_path, tree), "--filter", "*BugRepro_*", "--bisect-exit-code"
    )
    assert code == 125 and doc["verdict"] == "NOT_RUN" and doc["state"] == "complete"


def test_hang_and_crash(lookalike_builds: dict[str, Path], tmp_path: Path) -> None:
    tree = lookalike_builds["good"]
    flt = ("--filter", "*OneTile")
    env = {**device_env(tmp_path, tree), "TT_LOOKALIKE_FLAKE": "hang=1,seed=1"}
    code, doc = run_json(tree, tmp_path / "h", env, *flt, "--timeout", "3")
    assert code == 1 and doc["verdict"] == "HANG" and doc["attempts"][0]["timed_out"]
    env["TT_LOOKALIKE_FLAKE"] = "crash=1,seed=1"
    code, doc = run_json(tree, tmp_path / "c", env, *flt)
    assert code == 1 and doc["verdict"] == "CRASH" and doc["attempts"][0]["exit_code"] == 134


def test_standalone_profile(lookalike_builds: dict[str, Path], tmp_path: Path) -> None:
    tree = lookalike_builds["good"]
    code, doc = run_json(
        tree,
        tmp_path,
        device_env(tmp_path, tree),
        "--profile",
        "standalone",
        "--filter",
        "*Deterministic_2048Features",
    )
    assert code == 0, doc.get("build")
    assert doc["build"]["profile"] == "standalone"
    assert doc["attempts"][0]["argv"][0] == str(tree / "tt-train/build/tests/ttml_tests")


def test_dry_run_prints_the_plan_and_runs_nothing(lookalike: GroundTruth, tmp_path: Path) -> None:
    tree = Path(lookalike.path)
    p = lnrepro_process(
        "run",
        "--tt-metal",
        str(tree),
        "--runner",
        "local",
        "--dry-run",
        "--json",
        cwd=tmp_path,
        env={},
        timeout=600,
    )
    assert p.returncode == 0, p.stderr
    plan = json.loads(p.stdout)
    assert plan["build"][0].endswith(
        "./build_metal.sh --debug --build-tt-train --enable-ccache --configure-only"
    )
    assert plan["build"][1].endswith("cmake --build build_Debug --target ttml_tests")
    assert (
        "build_Debug/tt-train/tests/ttml_tests" in plan["test"]
        and "--gtest_filter=" in plan["test"]
    )
    assert not (tmp_path / ".lnrepro").exists()


def test_build_inputs_are_equal_exactly_when_nothing_tested_changed(
    lookalike: GroundTruth, tmp_path: Path
) -> None:
    """The hash a bisect shares verdicts by: the same across docs/CI-only commits, different as
    soon as a library the tests load changes (a binary-only hash would miss that)."""
    from lnrepro.model.events import Events
    from lnrepro.run.backends.ttmetal import TtMetalBackend
    from lnrepro.run.config import PROFILES

    fp = lookalike.first_parent
    noop = set(lookalike.noop)
    # a commit followed by a run of no-op commits, then one that changes the build: the last such
    # before the culprit's merge, whose sources the session's other builds have mostly compiled
    # (the first such, in the history's oldest era, compiled every file anew: 10 s of CPU)
    i = next(
        k
        for k in range(fp.index(lookalike.culprit_merge) - 3, 0, -1)
        if fp[k + 1] in noop and fp[k + 2] in noop and fp[k] not in noop
    )
    j = next(k for k in range(i + 1, len(fp)) if fp[k] not in noop)
    tree = worktree(lookalike, tmp_path / "wt", fp[i])
    env = device_env(tmp_path, tree)
    old = dict(os.environ)
    os.environ.update(env)
    try:
        from lnrepro.model.requests import TtMetalSpec

        backend = TtMetalBackend(TtMetalSpec(checkout=tree, runner="local"), PROFILES["in-tree"])
        keys = []
        for k in (i, j - 1, j):
            subprocess.run(
                ["git", "-C", str(tree), "checkout", "-q", "--detach", fp[k]], check=True
            )
            out = backend.build(tmp_path, Events())
            assert out is not None and out.ok and out.inputs is not None, out
            keys.append(dataclasses.asdict(out.inputs))
    finally:
        os.environ.clear()
        os.environ.update(old)
    assert keys[0]["key"] == keys[1]["key"]  # only no-op commits between them
    assert keys[1]["key"] != keys[2]["key"]
    assert (keys[1]["outputs_sha256"], keys[1]["sources_sha256"]) != (
        keys[2]["outputs_sha256"],
        keys[2]["sources_sha256"],
    )
    assert int(keys[0]["output_files"]) > 5
