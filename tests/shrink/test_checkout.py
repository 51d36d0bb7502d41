"""The checkout probe on the look-alike: patched on, built once, each case one run of
``ttml_tests``; the culprit shrinks to the emulator's answer, its parent to nothing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lnrepro.shrink import probe
from lnrepro.shrink.checkout import read_margin
from tests.conftest import need_toolchain, worktree
from tests.harness import lnrepro


def test_the_margin_line_is_read() -> None:
    assert read_margin("dx FAILED: max_diff=1000\nlnrepro-probe: margin=100000\n") == 100000.0
    assert read_margin("lnrepro-probe: margin=inf") == float("inf")
    assert read_margin("no probe here") is None
    # one reader for the gtest probe and the pytest probe: a NaN is infinitely far out (a NaN
    # margin once passed, being no larger than 1), a cut-off line is no margin at all
    assert read_margin("lnrepro-probe: margin=nan pcc=0.1") == float("inf")
    assert read_margin("lnrepro-probe: margin=0.5x") is None


def _shrink(tree: Path, tmp: Path) -> tuple[int, Any]:
    code, out, err = lnrepro(
        "shrink",
        "--test",
        "BugRepro_Deterministic_2048Features",
        "--tt-metal",
        tree,
        "--runner",
        "local",
        "--source-for",
        "lookalike",
        "--start-runs",
        "1",
        "--record-dir",
        tmp / "runs",
        "--json",
    )
    assert out, (code, err)
    return code, json.loads(out)


@pytest.mark.compiler
@pytest.mark.timeout(1800)
def test_a_lookalike_checkout_shrinks_through_its_probe(
    lookalike: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    need_toolchain()
    from tests.lookalike.build import device_env

    bad = worktree(lookalike, tmp_path / "bad", lookalike.culprit)
    for k, v in device_env(tmp_path / "env", bad).items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("TT_METAL_HOME")
    code, doc = _shrink(bad, tmp_path)
    assert code == 1, doc
    assert doc["evaluator"] == "checkout" and (bad / probe.PATH).is_file()
    case = doc["case"]
    assert (case["seq"], case["features"], case["data"]["kind"]) == (1, 32, "constant")
    assert doc["margin"] >= 100
    # the rerun line runs the built probe on exactly that case
    argv = doc["rerun"]
    env = dict(a.split("=", 1) for a in argv[1:3])
    ran = subprocess.run(
        argv[3:],
        env={**device_env(tmp_path / "env2", bad), **env, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        cwd=bad,
    )
    assert ran.returncode == 1 and "dx FAILED: max_diff=1000" in ran.stdout, ran.stdout[-2000:]

    good = worktree(lookalike, tmp_path / "good", lookalike.culprit_parent)
    for k, v in device_env(tmp_path / "genv", good).items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("TT_METAL_HOME")
    code, doc = _shrink(good, tmp_path)
    assert code == 0 and not doc["found"], doc["note"]
    for tree in (bad, good):
        subprocess.run(
            ["git", "-C", str(lookalike.path), "worktree", "remove", "--force", str(tree)],
            check=False,
        )
