"""The compatibility table, row by row: `lnrepro run --dry-run` on a look-alike commit of each of
tt-metal's eras plans what the row says (docs/compatibility.md is written from the same rows)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lnrepro.run.compat import ERAS, Era
from tests.conftest import ROOT, worktree
from tests.lookalike import GroundTruth


def dry_run(tree: Path, tmp: Path, *extra: str) -> dict[str, Any]:
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "lnrepro",
            "run",
            "--tt-metal",
            str(tree),
            "--runner",
            "local",
            "--dry-run",
            "--json",
            "--record-dir",
            str(tmp / "runs"),
            *extra,
        ],
        capture_output=True,
        text=True,
        cwd=tmp,
        env=os.environ,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    doc: dict[str, Any] = json.loads(p.stdout)
    return doc


@pytest.mark.parametrize("era", ERAS, ids=[e.name for e in ERAS])
def test_the_dry_run_at_each_era_plans_what_its_row_says(
    era: Era, lookalike: GroundTruth, tmp_path: Path
) -> None:
    # the first main commit of the era: the one that switched on its last flag
    sha = lookalike.eras[era.lookalike[-1]]
    tree = worktree(lookalike, tmp_path / "wt", sha)
    flags_on = [
        f
        for f in lookalike.eras
        if lookalike.first_parent.index(lookalike.eras[f]) <= lookalike.first_parent.index(sha)
    ]
    assert set(era.lookalike) <= set(flags_on)

    plan = dry_run(tree, tmp_path)
    facts, build = plan["backend"]["tree"], plan["backend"]["build_plan"]
    assert facts["default_toolchain"] == era.toolchain
    assert facts["train_compiler"] == era.train_compiler.value
    assert facts["runtime_root_var"] == era.runtime_root_var
    assert (
        tree / "cmake/x86_64-linux-clang-17-libstdcpp-toolchain.cmake"
    ).is_file() == era.clang17_files
    assert [" ".join(c) for c in build["commands"]] == list(era.in_tree)
    assert build["binary"] == era.binary and str(tree / era.binary) in plan["test"]
    for line, want in zip(plan["build"], era.in_tree, strict=True):
        assert line.endswith(want)  # what a person would type, the environment before it
        assert f"TT_METAL_RUNTIME_ROOT={tree}" in line and f"TT_METAL_HOME={tree}" in line

    plan = dry_run(tree, tmp_path, "--profile", "standalone")
    build = plan["backend"]["build_plan"]
    want = [c.replace("<checkout>", str(tree)) for c in era.standalone]
    assert [" ".join(c) for c in build["commands"]] == want
    assert build["binary"] == era.standalone_binary


def test_main_says_which_tests_are_missing_before_anything_is_built(
    lookalike: GroundTruth, tmp_path: Path
) -> None:
    """On main the BugRepro tests do not exist: the plan (and env-check) say so, where they live
    and how to get them, from the test file alone."""
    tree = worktree(lookalike, tmp_path / "wt", lookalike.main)
    plan = dry_run(tree, tmp_path)
    (note,) = [w for w in plan["warnings"] if "BugRepro" in w]
    assert (
        "ivoitovych/layernorm-bw-nightly-test-failure-bug-report-3" in note and "16165972af" in note
    )
    assert "git fetch origin" in note and "--pick 16165972af" in note
    assert not (tree / "build_Debug").exists()
    p = subprocess.run(
        [sys.executable, "-m", "lnrepro", "env-check", "--tt-metal", str(tree), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    checks = {c["id"]: c for c in json.loads(p.stdout)["checks"]}
    assert checks["tests"]["status"] == "warn" and "BugRepro" in checks["tests"]["detail"]
    assert "git fetch origin" in checks["tests"]["fix"]
    picked = worktree(lookalike, tmp_path / "picked", lookalike.main, lookalike.bugrepro)
    assert not [w for w in dry_run(picked, tmp_path)["warnings"] if "BugRepro" in w]


def test_the_docs_table_is_written_from_the_rows() -> None:
    p = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "compat_table.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stdout
