"""`lnrepro run --tt-metal --runner docker`: the look-alike built and tested in a real container.

The image is made here (debootstrap + the toolchain, cached by name); the card host is made real
(a character device node and a hugetlbfs mount), so seed 001's two mount sets meet what they met.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_gently, worktree
from tests.leftovers import left
from tests.lookalike import GroundTruth

pytestmark = pytest.mark.docker
LNREPRO = [sys.executable, "-m", "lnrepro"]


def docker_run(
    tree: Path, tmp: Path, image: str | None, *extra: str, env: dict[str, str] | None = None
) -> tuple[int, dict[str, Any], str]:
    tmp.mkdir(parents=True, exist_ok=True)
    p = run_gently(
        [
            *LNREPRO,
            "run",
            "--tt-metal",
            str(tree),
            *(["--image", image] if image else []),
            "--record-dir",
            str(tmp / "runs"),
            "--json",
            *extra,
        ],
        cwd=tmp,
        env={**os.environ, **(env or {})},
        timeout=900,
    )
    assert "Traceback" not in p.stderr, p.stderr
    assert not left(p.owner), "a container was left behind"
    records = sorted((tmp / "runs").glob("run-*/record.json"))
    doc = json.loads(p.stdout) if p.stdout.strip() else json.loads(records[-1].read_text())
    return p.returncode, doc, p.stderr


def test_builds_and_reproduces_the_seeds_table_in_the_container(
    lookalike_builds: dict[str, Path], toolchain_image: str, fake_card_host: None, tmp_path: Path
) -> None:
    tree = lookalike_builds["bad"]
    code, doc, _ = docker_run(tree, tmp_path, toolchain_image)
    assert code == 1 and doc["verdict"] == "FAIL", doc.get("build")
    verdicts = {t["name"].split(".")[1]: t for t in doc["tests"]}
    assert verdicts["NIGHTLY_MetalLayerNormBw_LargeFeatures_NoL1Fit"]["verdict"] == "PASS"
    det = [v for k, v in verdicts.items() if "Deterministic" in k]
    assert len(det) == 5 and all(v["worst_metrics"]["dx"]["max_diff"] == 1000 for v in det)
    fp = doc["fingerprint"]
    assert (
        fp["runner"] == "docker"
        and fp["image"] == toolchain_image
        and fp["image_id"].startswith("sha256:")
    )
    assert fp["devices"] == ["/dev/tenstorrent/0"] and fp["mount_set"] == "full"


def test_seed_broken_mount_set_is_env_error_and_the_working_set_is_not(
    lookalike_builds: dict[str, Path], toolchain_image: str, fake_card_host: None, tmp_path: Path
) -> None:
    tree = lookalike_builds["good"]
    flt = ("--filter", "*Deterministic_2048Features")
    code, doc, _ = docker_run(tree, tmp_path / "full", toolchain_image, *flt)
    assert code == 0 and doc["verdict"] == "PASS"
    code, doc, _ = docker_run(
        tree, tmp_path / "broken", toolchain_image, *flt, "--mount-set", "seed-broken"
    )
    assert code == 5 and doc["verdict"] == "ENV_ERROR"
    assert doc["attempts"][0]["env_error"] == "no huge page mount found in /proc/mounts for path"


def test_runs_as_the_invoking_user_and_outputs_are_theirs(
    lookalike: GroundTruth, toolchain_image: str, fake_card_host: None, tmp_path: Path
) -> None:
    tree = worktree(lookalike, tmp_path / "tree", lookalike.culprit_parent, lookalike.bugrepro)
    subprocess.run(["chown", "-R", "4321:4321", str(tree)], check=True)
    code, doc, _ = docker_run(
        tree,
        tmp_path,
        toolchain_image,
        "--filter",
        "*OneTile",
        env={"SUDO_UID": "4321", "SUDO_GID": "4321"},
    )
    assert code == 0, doc.get("build")
    for built in (tree / "build_Debug", tree / "build_Debug/tt-train/tests/ttml_tests"):
        st = built.stat()
        assert (st.st_uid, st.st_gid) == (4321, 4321), built
    assert doc["fingerprint"]["user"] == "4321:4321"


def test_hang_crash_build_failure_and_missing_tests(
    lookalike: GroundTruth,
    lookalike_builds: dict[str, Path],
    toolchain_image: str,
    fake_card_host: None,
    tmp_path: Path,
) -> None:
    tree = lookalike_builds["good"]
    flt = ("--filter", "*OneTile")
    code, doc, _ = docker_run(
        tree,
        tmp_path / "h",
        toolchain_image,
        *flt,
        "--timeout",
        "5",
        "--env",
        "TT_LOOKALIKE_FLAKE=hang=1,seed=1",
    )
    assert code == 1 and doc["verdict"] == "HANG" and doc["attempts"][0]["seconds"] < 30
    code, doc, _ = docker_run(
        tree, tmp_path / "c", toolchain_image, *flt, "--env", "TT_LOOKALIKE_FLAKE=crash=1,seed=1"
    )
    assert code == 1 and doc["verdict"] == "CRASH"
    code, doc, _ = docker_run(
        lookalike_builds["main"], tmp_path / "n", toolchain_image, "--filter", "*BugRepro_*"
    )
    assert code == 5 and doc["verdict"] == "NOT_RUN"
    sha = next(s for s in lookalike.unbuildable if s in lookalike.first_parent)
    broken = worktree(lookalike, tmp_path / "broken", sha)
    code, doc, err = docker_run(broken, tmp_path / "b", toolchain_image)
    assert code == 5 and doc["verdict"] == "BUILD_FAILED" and "check_cluster" in err


def test_local_runner_gives_the_same_verdicts(
    lookalike_builds: dict[str, Path], toolchain_image: str, fake_card_host: None, tmp_path: Path
) -> None:
    tree = lookalike_builds["bad"]
    _, in_container, _ = docker_run(tree, tmp_path / "d", toolchain_image)
    p = subprocess.run(
        [
            *LNREPRO,
            "run",
            "--tt-metal",
            str(tree),
            "--runner",
            "local",
            "--record-dir",
            str(tmp_path / "l"),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    here = json.loads(p.stdout)
    assert {t["name"]: t["verdict"] for t in here["tests"]} == {
        t["name"]: t["verdict"] for t in in_container["tests"]
    }


def test_dry_run_has_seed_001s_working_mount_set(
    lookalike: GroundTruth, fake_card_host: None, tmp_path: Path
) -> None:
    p = subprocess.run(
        [*LNREPRO, "run", "--tt-metal", lookalike.path, "--dry-run", "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    line = json.loads(p.stdout)["build"][0]
    for part in (
        "--device /dev/tenstorrent/0:/dev/tenstorrent/0",
        "-v /dev:/dev",
        "-v /sys:/sys",
        "-v /dev/hugepages-1G:/dev/hugepages-1G",
        f"-v {lookalike.path}:{lookalike.path}",
        f"-w {lookalike.path}",
        "-e TT_METAL_HOME=",
        "-u ",
    ):
        assert part in line, (part, line)
    assert "--privileged" not in line
    assert "--entrypoint ''" in line  # the dev image's sshd entrypoint needs root: not run
    assert "-v /etc/passwd:/etc/passwd:ro" in line and "-e 'GIT_CONFIG_VALUE_0=*'" in line
    assert line.endswith(
        "./build_metal.sh --debug --build-tt-train --enable-ccache --configure-only"
    )
    # tt-metal's own scripts' set: no /dev, no /sys
    p = subprocess.run(
        [
            *LNREPRO,
            "run",
            "--tt-metal",
            lookalike.path,
            "--dry-run",
            "--json",
            "--mount-set",
            "tt-metal",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    line = json.loads(p.stdout)["build"][0]
    assert "-v /dev:/dev" not in line and "-v /sys:/sys" not in line
    for part in (
        "-v /dev/hugepages-1G:/dev/hugepages-1G",
        "-v /etc/group:/etc/group:ro",
        "--group-add ",
    ):
        assert part in line, (part, line)


def test_lnrepro_builds_its_image_from_the_dockerfile_on_a_base(
    lookalike_builds: dict[str, Path], toolchain_image: str, fake_card_host: None, tmp_path: Path
) -> None:
    (tmp_path / "lnrepro.toml").write_text(f'base_image = "{toolchain_image}"\n')
    tree = lookalike_builds["good"]
    code, doc, _ = docker_run(tree, tmp_path, None, "--filter", "*OneTile")
    assert code == 0, doc.get("build")
    fp = doc["fingerprint"]
    assert fp["image"].startswith("lnrepro-build:") and fp["base_image"] == toolchain_image
    built = subprocess.run(
        [
            "docker",
            "image",
            "inspect",
            fp["image"],
            "--format",
            '{{index .Config.Labels "io.lnrepro.image"}}',
        ],
        capture_output=True,
        text=True,
    )
    assert built.stdout.strip() == "build"
    # without the base on this machine: one line, and what to do
    (tmp_path / "lnrepro.toml").write_text('base_image = "lnrepro-absent-base:0"\n')
    p = subprocess.run(
        [*LNREPRO, "run", "--tt-metal", str(tree), "--record-dir", str(tmp_path / "x")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert p.returncode == 5 and "Traceback" not in p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert (
        "lnrepro-absent-base:0 is not on this machine" in last
        and "docker pull" in last
        and "--image" in last
    )
