"""`bisect --prebuilt dir:TEMPLATE` on the look-alike: ready build trees first, builds last.

Build trees are made for every 4th commit of the range (with the BugRepro tests picked, as a
branch's CI artifacts would have them), the way build_metal.sh leaves them in ``build_Debug``.
The bisect must name the same culprit as building every step, test only artifacts until the last
interval, build only inside it, and never take a verdict from an artifact that cannot be used.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import need_toolchain, worktree
from tests.lookalike import GroundTruth, Spec, build, device_env, generate

LNREPRO = [sys.executable, "-m", "lnrepro"]
GIT_FILE_OK = {
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "protocol.file.allow",
    "GIT_CONFIG_VALUE_0": "always",
}
DETERMINISTIC = "*Deterministic_2048Features"


def rev_list(repo: str, good: str, bad: str) -> list[str]:
    out = subprocess.run(
        ["git", "-C", repo, "rev-list", "--topo-order", "--reverse", bad, f"^{good}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.split()


@dataclass(frozen=True)
class Artifacts:
    truth: GroundTruth  # of the look-alike they were built from
    pristine: Path  # a copy of its repository made before any worktree: each test bisects a copy
    store: Path  # STORE/<sha>/build_Debug
    with_tree: frozenset[str]


def _snapshot(store: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in store.rglob("*") if p.is_file()
    }


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Artifacts:
    """Build trees for every 4th commit of the range (with the BugRepro tests picked), made once
    for both runners: bisects read them and never write them (each test checks), and each test
    bisects its own copy of the history, so neither sees the other's worktrees or state."""
    need_toolchain()  # and the stand-in compilers are on PATH (tests/conftest.py)
    base = tmp_path_factory.mktemp("prebuilt")
    t: GroundTruth = generate(base / "tt-metal", Spec(commits=32, tus=1))
    pristine = base / "pristine"
    shutil.copytree(t.path, pristine, symlinks=True)
    commits = rev_list(t.path, t.good, t.bad)
    with_tree = {t.good, t.bad, *commits[3::4]} - {t.culprit}
    store = base / "artifacts"
    # as CI builds them: with ccache (the session's, tests/conftest.py: paths relative to each
    # tree, so a file that no commit between two artifacts touched compiles once)
    for sha in with_tree:
        tree = worktree(t, store / sha, sha, t.bugrepro)
        res = build(tree, "--debug", "--build-tt-train", "--enable-ccache")
        assert res.ok, res.output[-2000:]
    # the good endpoint's tree is broken: its test binary is gone
    broken = store / t.good / "build_Debug" / "tt-train" / "tests" / "ttml_tests"
    broken.unlink()
    return Artifacts(t, pristine, store, frozenset(with_tree))


@pytest.mark.compiler
@pytest.mark.parametrize("runner", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_prebuilt_trees_first_then_builds_inside_the_last_interval(
    runner: str, artifacts: Artifacts, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """In the container the trees are mounted read-only at their own paths."""
    repo = shutil.copytree(artifacts.pristine, tmp_path / "tt-metal", symlinks=True)
    t = dataclasses.replace(artifacts.truth, path=str(repo))
    commits = rev_list(t.path, t.good, t.bad)
    store, with_tree = artifacts.store, artifacts.with_tree
    before = _snapshot(store)
    if runner == "docker":
        how = ["--runner", "docker", "--image", request.getfixturevalue("toolchain_image")]
        request.getfixturevalue("fake_card_host")
        env = {**os.environ, **GIT_FILE_OK}
    spec = f"dir:{store}/{{sha}}/build_Debug"
    if runner == "docker":
        how += ["--prebuilt", spec]
    else:  # from lnrepro.toml, in the directory the bisect starts in
        how = ["--runner", "local"]
        (tmp_path / "lnrepro.toml").write_text(f"prebuilt = [{json.dumps(spec)}]\n")
        env = {**os.environ, **device_env(tmp_path, Path(t.path)), **GIT_FILE_OK}
        env.pop("TT_METAL_HOME")
        env.pop("TT_METAL_RUNTIME_ROOT")
    p = subprocess.run(
        [
            *LNREPRO,
            "bisect",
            "--repo",
            t.path,
            "--good",
            t.good,
            "--bad",
            t.bad,
            "--pick",
            t.bugrepro,
            *how,
            "--filter",
            DETERMINISTIC,
            "--json",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=1500,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    doc: dict[str, Any] = json.loads(p.stdout)
    assert doc["request"]["prebuilt"] == [spec]
    r = doc["result"]
    assert r["first_bad"] == t.culprit  # what building every step finds: the ground truth
    steps = doc["steps"]
    used = [s for s in steps if s["prebuilt"]]
    built = [s for s in steps if s["build_s"] is not None and not s["prebuilt"]]
    assert used and built and r["prebuilt"] == len(used)
    assert all(s["sha"] in with_tree for s in used)
    # the broken tree decided nothing: the good endpoint was built, and its build said good
    [end] = [s for s in steps if s["sha"] == t.good and s["kind"] == "endpoint"]
    assert end["prebuilt_failed"] and "ttml_tests" in end["prebuilt_failed"]
    assert not end["prebuilt"] and end["mark"] == "good"
    # search steps: artifacts while any is left inside the range, then builds only in the last
    # interval, which no artifact splits
    search = [s for s in steps if s["kind"] == "step"]
    first_build = next(i for i, s in enumerate(search) if not s["prebuilt"])
    assert all(s["prebuilt"] for s in search[:first_build])
    assert not any(s["prebuilt"] for s in search[first_build:])
    goods = [t.good, *(s["sha"] for s in used if s["mark"] == "good")]
    bads = [t.bad, *(s["sha"] for s in used if s["mark"] == "bad")]
    inside: set[str] = set(commits)
    for b in bads:  # the last interval: below every bad artifact, above every good one
        out = subprocess.run(
            ["git", "-C", t.path, "rev-list", b, *(f"^{g}" for g in goods)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        inside &= set(out.split())
    assert t.culprit in inside
    assert {s["sha"] for s in search[first_build:]} <= inside
    tested = {s["sha"] for s in steps}
    assert not (inside & with_tree) - tested  # no artifact inside it was left untested
    assert _snapshot(store) == before  # read, never written


@pytest.mark.docker  # the docker CLI makes the context; no engine answers it
def test_prebuilt_from_lnrepro_toml_is_checked_and_a_remote_engine_is_refused_first(
    lookalike: GroundTruth, tmp_path: Path
) -> None:
    """Both before any side effect: no lock, no worktree, no state in the repository."""
    cfg = tmp_path / "docker-config"
    env = {**os.environ, "DOCKER_CONFIG": str(cfg)}
    subprocess.run(
        ["docker", "context", "create", "far", "--docker", "host=tcp://127.0.0.1:9"],
        check=True,
        capture_output=True,
        env=env,
    )
    before = sorted(p.name for p in (Path(lookalike.path) / ".git").iterdir())

    def bisect(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                *LNREPRO,
                "bisect",
                "--repo",
                lookalike.path,
                "--good",
                lookalike.good,
                "--bad",
                lookalike.bad,
                "--runner",
                "docker",
                "--image",
                "any:1",
                *args,
            ],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=env,
            timeout=120,
        )

    (tmp_path / "lnrepro.toml").write_text('prebuilt = ["dir:/artifacts/build_Debug"]\n')
    p = bisect()
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "lnrepro.toml: prebuilt" in p.stderr and "names no commit" in p.stderr

    (tmp_path / "lnrepro.toml").write_text('prebuilt = ["dir:/artifacts/{sha}/build_Debug"]\n')
    p = bisect("--docker-context", "far")
    assert p.returncode == 2 and "--docker-context far cannot see" in " ".join(p.stderr.split())
    assert "lnrepro.toml" in p.stderr  # the fix names where the trees came from
    assert sorted(p.name for p in (Path(lookalike.path) / ".git").iterdir()) == before


@pytest.mark.parametrize(
    "spec", ["image:ghcr.io/x/tt-metalium-release:{describe}", "wheel:/wheels"]
)
def test_images_and_wheels_are_refused_for_what_they_lack(spec: str) -> None:
    """tt-metal's release images and ttnn wheels hold no ttml_tests (dockerfile/Dockerfile at
    42bfdec046d2, setup.py at 00fd98d3f3a3): they could never decide a tt-train step."""
    from lnrepro.bisect.prebuilt import expand, template
    from lnrepro.errors import UsageError

    with pytest.raises(UsageError) as exc:
        template(spec)
    assert "ttml_tests" in exc.value.message and "docs/prebuilt.md" in exc.value.message
    assert "dir:" in (exc.value.fix or "")
    assert expand(template("dir:/a/{short}/{describe}"), "0123456789abcdef", "v0.62.0-5-g0123") == (
        "/a/0123456789/v0.62.0-5-g0123"
    )
