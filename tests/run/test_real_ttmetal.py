"""What tt-metal's real files do to lnrepro, reproduced on the look-alike (docs/compatibility.md).

Each of these broke or misled the first real run or bisect before lnrepro read tt-metal's sources:

* the dev image's entrypoint needs root (sshd), and lnrepro runs as the invoking user;
* tt-metal's CMake asks git for the version while configuring, and a bisect worktree's git
  directories were not in the container;
* on main the BugRepro tests do not exist, and the NIGHTLY test alone passed;
* the standalone profile never built tt-metal, and at some commits tt-train picks no compiler;
* an LLK-only bump builds the same binary but changes the kernels, and a verdict was shared;
* UMD's hugepage warning before tests that ran and failed.

The container tests run lnrepro as a user who is not root (in the docker group), as people do.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import need_toolchain, worktree
from tests.lookalike import GroundTruth, Spec, device_env, generate

LNREPRO = [sys.executable, "-m", "lnrepro"]
GIT_FILE_OK = {  # the look-alike's submodules come from local paths
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "protocol.file.allow",
    "GIT_CONFIG_VALUE_0": "always",
}
DETERMINISTIC = "*Deterministic_2048Features"


def lnrepro(
    *args: str, env: dict[str, str], cwd: Path, user: str | None = None, timeout: float = 900
) -> subprocess.CompletedProcess[str]:
    argv = [*LNREPRO, *args]
    if user is not None:  # as that user, with exactly this environment
        argv = [
            "runuser",
            "-u",
            user,
            "--",
            "env",
            "-i",
            *(f"{k}={v}" for k, v in env.items()),
            *argv,
        ]
    p = subprocess.run(
        argv, capture_output=True, text=True, cwd=cwd, env={**os.environ, **env}, timeout=timeout
    )
    assert "Traceback" not in p.stderr, p.stderr[-3000:]
    return p


def owned_by(user: str, *paths: Path) -> None:
    """``paths`` (recursively) belong to ``user``; their parents let everyone through."""
    for p in paths:
        subprocess.run(["chown", "-R", f"{user}:{user}", str(p)], check=True)
        for d in p.parents:
            if d == Path("/"):
                break
            d.chmod(d.stat().st_mode | 0o005)


def user_env(home: Path) -> dict[str, str]:
    keep = ("PATH", "LANG", "LC_ALL", "CI", "CCACHE_DIR")  # the session's ccache (conftest.py)
    return {"HOME": str(home), **{k: os.environ[k] for k in keep if k in os.environ}, **GIT_FILE_OK}


# ------------------------------------------------------------------ in the container, as a user
@pytest.fixture
def user_tmp() -> Iterator[Path]:
    """A folder the test user can reach, outside pytest's basetemp: any pytest that starts
    meanwhile (an xdist worker's first tmp_path, a look-alike's own pytest) makes
    /tmp/pytest-of-root 0700 again, which took the user's way to its files away mid-run (a
    CI-style flake: "Permission denied" on the attempt's report)."""
    d = Path(tempfile.mkdtemp(prefix="lnrepro-user-", dir="/tmp"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def llk_history(user_tmp: Path) -> GroundTruth:
    """A history whose culprit only bumps the LLK submodule, after the clang-20 switch."""
    return generate(user_tmp / "tt-metal", Spec(commits=60, tus=1, culprit_kind="llk"))


@pytest.mark.docker
def test_bisect_in_the_container_as_a_user_over_the_compiler_switch_to_an_llk_bump(
    llk_history: GroundTruth,
    toolchain_image: str,
    fake_card_host: None,
    test_user: str,
    user_tmp: Path,
) -> None:
    """The image's entrypoint needs root (as tt-metal's dev image's does) and the bisect runs as a
    user who is not: every container still starts. The worktree's git metadata is mounted, so
    tt-metal's configure-time `git describe` works at every step. The range crosses the
    clang-17 -> clang-20 switch (the build directory is configured again) and ends at a commit
    that only bumps LLK, which builds the same binary: the bisect names it."""
    t = llk_history
    fp = t.first_parent
    good = fp[fp.index(t.eras["clang20"]) - 6]
    assert fp.index(good) > max(fp.index(u) for u in t.unbuildable if u in fp)
    assert t.culprit in fp and fp.index(good) < fp.index(t.culprit)
    bad = fp[fp.index(t.culprit) + 3]
    home = user_tmp / "home"
    home.mkdir()
    owned_by(test_user, Path(t.path), home)
    p = lnrepro(
        "bisect",
        "--repo",
        t.path,
        "--good",
        good,
        "--bad",
        bad,
        "--pick",
        t.bugrepro,
        "--runner",
        "docker",
        "--image",
        toolchain_image,
        "--filter",
        DETERMINISTIC,
        "--json",
        env=user_env(home),
        cwd=home,
        user=test_user,
        timeout=1500,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    rec = json.loads(p.stdout)
    assert rec["result"]["first_bad"] == t.culprit
    steps = [s for s in rec["steps"] if s.get("record")]
    assert steps and all(s["verdict"] != "BUILD_FAILED" for s in steps), [
        s["verdict"] for s in steps
    ]
    builds = [json.loads((Path(s["record"]) / "record.json").read_text())["build"] for s in steps]
    assert all(not b["warnings"] or "git metadata" not in " ".join(b["warnings"]) for b in builds)
    logs = [(Path(s["record"]) / "build.log").read_text() for s in steps]
    assert all("Cannot parse tag" not in log for log in logs)
    assert any("-- Version: 0.6" in log for log in logs)  # configure asked git, and git answered
    assert any("configured again from scratch" in log for log in logs)  # the clang-20 switch
    # the LLK bump and its parent built to the same outputs, yet were never taken for each other
    by_sha = {s["sha"]: s for s in rec["steps"]}
    parent = fp[fp.index(t.culprit) - 1]
    if parent in by_sha:
        assert by_sha[t.culprit].get("same_as") != parent


@pytest.mark.docker
def test_run_in_the_container_as_a_user_with_the_dev_images_entrypoint(
    toolchain_image: str, fake_card_host: None, test_user: str, user_tmp: Path
) -> None:
    """`lnrepro run` as a user who is not root, in an image whose entrypoint needs root: it
    builds and reproduces the bug (before: "the build failed (mkdir: cannot create directory
    '/run/sshd': Permission denied)")."""
    t = generate(user_tmp / "tt-metal", Spec(commits=40, tus=1))
    tree = worktree(t, user_tmp / "wt", t.culprit, t.bugrepro)
    home = user_tmp / "home"
    home.mkdir()
    owned_by(test_user, tree, home, Path(t.path))
    p = lnrepro(
        "run",
        "--tt-metal",
        str(tree),
        "--image",
        toolchain_image,
        "--filter",
        DETERMINISTIC,
        "--record-dir",
        str(home / "runs"),
        "--json",
        env=user_env(home),
        cwd=home,
        user=test_user,
    )
    assert p.stdout, (p.returncode, p.stderr[-2000:])  # a failure says why, not "Expecting value"
    doc = json.loads(p.stdout)
    assert p.returncode == 1 and doc["verdict"] == "FAIL", (doc.get("build"), p.stderr[-2000:])
    assert doc["tests"][0]["worst_metrics"]["dx"]["max_diff"] == 1000
    assert doc["fingerprint"]["user"] != "0:0"


# ------------------------------------------------------------------ on this host
def test_main_without_the_bugrepro_tests_is_never_a_bare_pass(
    lookalike_builds: dict[str, Path], tmp_path: Path
) -> None:
    tree = lookalike_builds["main"]
    p = lnrepro(
        "run",
        "--tt-metal",
        str(tree),
        "--runner",
        "local",
        "--record-dir",
        str(tmp_path / "r"),
        env=device_env(tmp_path, tree),
        cwd=tmp_path,
    )
    assert p.returncode == 5
    assert (
        "verdict: INCOMPLETE (PASS on the tests that ran; missing: LayerNormBackwardOpTest.BugRepro_*)"
        in " ".join(p.stdout.split())
    )
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("lnrepro: INCOMPLETE (PASS on the tests that ran")
    for part in (
        "ivoitovych/layernorm-bw-nightly-test-failure-bug-report-3",
        "git fetch origin",
        "16165972af",
        "--pick 16165972af",
    ):
        assert part in last, part
    (record,) = (tmp_path / "r").glob("run-*/record.json")
    doc = json.loads(record.read_text())
    assert doc["verdict"] == "PASS" and doc["missing"] == ["LayerNormBackwardOpTest.BugRepro_*"]


@pytest.mark.compiler
def test_standalone_profile_builds_this_commits_tt_metal_with_its_toolchain(
    lookalike: GroundTruth, tmp_path: Path
) -> None:
    """At the culprit tt-train picks no compiler (GCC would fail) and nothing is built yet:
    the standalone profile builds tt-metal at this commit, then tt-train with the commit's
    toolchain file, and reproduces the bug as the in-tree build does."""
    need_toolchain()
    tree = worktree(lookalike, tmp_path / "wt", lookalike.culprit, lookalike.bugrepro)
    assert not (tree / "tt-train/cmake/compilers.cmake").exists() and not (tree / "build").exists()
    env = device_env(tmp_path, tree)
    p = lnrepro(
        "run",
        "--tt-metal",
        str(tree),
        "--runner",
        "local",
        "--profile",
        "standalone",
        "--filter",
        DETERMINISTIC,
        "--record-dir",
        str(tmp_path / "r"),
        "--json",
        env=env,
        cwd=tmp_path,
    )
    doc = json.loads(p.stdout)
    assert p.returncode == 1 and doc["verdict"] == "FAIL", doc["build"]
    steps = doc["build"]["steps"]
    assert steps[0] == "./build_metal.sh --debug --enable-ccache"
    assert (
        "-DCMAKE_TOOLCHAIN_FILE="
        + str(tree / "cmake/x86_64-linux-clang-20-libstdcpp-toolchain.cmake")
        in steps[1]
    )
    assert doc["attempts"][0]["argv"][0] == str(tree / "tt-train/build/tests/ttml_tests")
    assert doc["tests"][0]["worst_metrics"]["dx"]["max_diff"] == 1000


@pytest.mark.compiler
def test_an_llk_only_bump_is_a_different_input_though_the_binary_is_the_same(
    llk_history: GroundTruth, tmp_path: Path
) -> None:
    """The same worktree built at the LLK bump's parent and at the bump: every build output is
    the same, the kernels the JIT compiles are not, and the verdicts differ."""
    need_toolchain()
    from lnrepro.model.events import Events
    from lnrepro.model.requests import TtMetalSpec
    from lnrepro.run.backends.ttmetal import TtMetalBackend
    from lnrepro.run.config import PROFILES

    t = llk_history
    parent = t.first_parent[t.first_parent.index(t.culprit) - 1]
    tree = worktree(t, tmp_path / "wt", parent, t.bugrepro)
    env = device_env(tmp_path, tree)
    backend = TtMetalBackend(TtMetalSpec(checkout=tree, runner="local"), PROFILES["in-tree"])
    seen: list[tuple[str, dict[str, str], int]] = []
    old = dict(os.environ)
    os.environ.update(env)
    try:
        for sha in (parent, t.culprit):
            subprocess.run(
                ["git", "-C", str(tree), "checkout", "-q", "-f", "--detach", sha], check=True
            )
            subprocess.run(
                ["git", "-C", str(tree), "cherry-pick", "-n", t.bugrepro],
                check=True,
                capture_output=True,
            )
            subprocess.run(
                [
                    "git",
                    "-C",
                    str(tree),
                    "-c",
                    "protocol.file.allow=always",
                    "submodule",
                    "update",
                    "--init",
                    "--force",
                    "-q",
                ],
                check=True,
            )
            out = backend.build(tmp_path, Events())
            assert out is not None and out.ok and out.inputs is not None, out
            code = subprocess.run(
                [str(tree / backend.profile.binary), f"--gtest_filter={DETERMINISTIC}"],
                capture_output=True,
                env=os.environ,
                cwd=tree,
            ).returncode
            seen.append((out.inputs.key, dataclasses.asdict(out.inputs), code))
    finally:
        os.environ.clear()
        os.environ.update(old)
    (k0, p0, c0), (k1, p1, c1) = seen
    assert p0["outputs_sha256"] == p1["outputs_sha256"]  # the same binary, libraries, module
    assert k0 != k1 and p0["sources_sha256"] != p1["sources_sha256"]
    assert (c0, c1) == (0, 1)  # and the bump is the bug


@pytest.mark.compiler
def test_a_local_bisect_names_the_llk_bump(llk_history: GroundTruth, tmp_path: Path) -> None:
    """Before, the bump's parent and the bump hashed alike (same binary, same kernel folders), so
    one verdict served both and the bisect named a wrong commit or found no separation."""
    need_toolchain()
    t = llk_history
    fp = t.first_parent
    good, bad = fp[fp.index(t.culprit) - 3], fp[fp.index(t.culprit) + 2]
    env = {**device_env(tmp_path, Path(t.path)), **GIT_FILE_OK}
    env.pop("TT_METAL_HOME")
    env.pop("TT_METAL_RUNTIME_ROOT")
    p = lnrepro(
        "bisect",
        "--repo",
        t.path,
        "--good",
        good,
        "--bad",
        bad,
        "--pick",
        t.bugrepro,
        "--runner",
        "local",
        "--filter",
        DETERMINISTIC,
        "--json",
        env=env,
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    assert json.loads(p.stdout)["result"]["first_bad"] == t.culprit


def test_umds_hugepage_warning_before_failing_tests_is_a_failure_not_the_environment(
    lookalike_builds: dict[str, Path], tmp_path: Path
) -> None:
    tree = lookalike_builds["bad"]
    env = {**device_env(tmp_path, tree), "TT_LOOKALIKE_HUGEPAGES": "1"}
    p = lnrepro(
        "run",
        "--tt-metal",
        str(tree),
        "--runner",
        "local",
        "--filter",
        DETERMINISTIC,
        "--record-dir",
        str(tmp_path / "r"),
        "--json",
        env=env,
        cwd=tmp_path,
    )
    doc: dict[str, Any] = json.loads(p.stdout)
    assert p.returncode == 1 and doc["verdict"] == "FAIL"
    (attempt,) = doc["attempts"]
    # the message is kept with the attempt; the tests that ran decide the verdict
    assert attempt["env_error"] == "Increase Number of Hugepages"
    assert doc["tests"][0]["verdict"] == "FAIL"
    log = (Path(doc["record_dir"]) / attempt["log"]).read_text()
    assert "Increase Number of Hugepages" in log and "| warning  |" in log
