"""The emitted gtest: each flavour calls its tree's helpers; the look-alike's flavour compiles in
the look-alike's tt-train tree, fails at the culprit and passes before it and at the fix."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lnrepro.model.case import Case, DataKind, DataSpec, Shape, Tolerance
from lnrepro.shrink.emit import Flavour, full_name, source
from tests.conftest import need_toolchain, worktree

TOL = tuple((t, Tolerance(0.01, 0.01)) for t in ("dx", "dgamma", "dbeta"))
CONSTANT = Case(Shape(1, 1, 1, 32), DataSpec(DataKind.CONSTANT, "bugrepro"), TOL, "S.T")
FEW = Case(Shape(1, 2, 1, 4928), DataSpec(DataKind.FEW_VALUED, "two-valued"), TOL, "S.T")


def test_the_tt_metal_flavour_uses_tt_trains_api() -> None:
    text = source(CONSTANT, Flavour.TT_METAL)
    for needle in (
        "LayerNormBackwardOperation::invoke(",
        "core::from_xtensor(x_4d, device)",
        "xt::allclose(metal_dx, dx_ref, 0.01F, 0.01F)",
        "ctx().open_device()",
        'std::cout << "dx FAILED: max_diff="',
        f"TEST_F(LayerNormBackwardShrunkTest, {full_name(CONSTANT).split('.')[1]})",
        "x(i) = 0.5F; dy(i) = 1.0F;",
    ):
        assert needle in text, needle


def test_the_data_kinds_fill_as_the_emulator_does() -> None:
    text = source(FEW, Flavour.LOOKALIKE)
    assert "x[i] = odd ? 1.0F : -1.0F;" in text and "dy[i] = odd ? 0.5F : 1.0F;" in text
    assert "features = 4928" in text and "seq = 2" in text
    assert re.fullmatch(
        r"LayerNormBackwardShrunkTest\.Shrunk_T_1x2x1x4928_FewValued_[0-9a-f]{6}", full_name(FEW)
    )


@pytest.mark.compiler
@pytest.mark.timeout(1800)
def test_the_emitted_test_fails_at_the_culprit_and_passes_at_the_fix(
    lookalike: Any, tmp_path: Path
) -> None:
    need_toolchain()
    from tests.lookalike.build import build, device_env, run_tests

    text = source(CONSTANT, Flavour.LOOKALIKE)
    expect = {"culprit": (lookalike.culprit, 1), "parent": (lookalike.culprit_parent, 0)}
    if lookalike.fix:
        expect["fix"] = (lookalike.fix, 0)
    for name, (rev, code) in expect.items():
        tree = worktree(lookalike, tmp_path / name, rev)
        (tree / "tt-train/tests/ops/layernorm_bw_shrunk_test.cpp").write_text(text)
        res = build(tree, "--debug", "--build-tt-train", "--enable-ccache")
        assert res.ok, res.output[-3000:]
        binary = tree / "build_Debug/tt-train/tests/ttml_tests"
        reports = tmp_path / f"{name}-reports"
        reports.mkdir()
        got, out = run_tests(
            binary,
            f"--gtest_filter={full_name(CONSTANT)}",
            f"--gtest_output=json:{reports}/",
            env=device_env(tmp_path / f"{name}-env", tree),
        )
        assert got == code, (name, out[-2000:])
        if code:
            assert "dx FAILED: max_diff=1000" in out
        # each tensor's margin in the report, on a pass too (issue 47), read as lnrepro reads it
        from lnrepro.bisect.oracle import read_margins

        used = read_margins(reports)
        dx = used[f"{full_name(CONSTANT)}/dx"]
        assert (dx > 1) if code else (0 <= dx <= 1), (name, used)
        assert {f"{full_name(CONSTANT)}/{t}" for t in ("dgamma", "dbeta")} <= set(used)
        subprocess.run(
            ["git", "-C", str(lookalike.path), "worktree", "remove", "--force", str(tree)],
            check=False,
        )


@pytest.mark.compiler
@pytest.mark.timeout(1800)
def test_a_lookalike_bisect_that_picks_the_emitted_test_names_the_culprit(tmp_path: Path) -> None:
    """The emitted file, committed on a side branch as a bug report's tests are, picked onto
    every commit a build-and-test bisect tries: the culprit, found by the shrunk test alone."""
    need_toolchain()
    import json
    import os
    import sys

    from tests.conftest import run_gently
    from tests.lookalike import Spec, device_env, generate

    truth = generate(tmp_path / "tt-metal", Spec(tus=1))
    repo = Path(truth.path)
    side = tmp_path / "side"
    git = ["git", "-c", "user.name=shrink", "-c", "user.email=shrink@example.invalid"]
    subprocess.run(
        [
            *git,
            "-C",
            str(repo),
            "worktree",
            "add",
            "-q",
            "--detach",
            str(side),
            truth.culprit_parent,
        ],
        check=True,
    )
    path = "tt-train/tests/ops/layernorm_bw_shrunk_test.cpp"
    (side / path).write_text(source(CONSTANT, Flavour.LOOKALIKE))
    subprocess.run([*git, "-C", str(side), "add", path], check=True)
    subprocess.run([*git, "-C", str(side), "commit", "-q", "-m", "Add the shrunk test"], check=True)
    pick = subprocess.run(
        ["git", "-C", str(side), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(side)], check=True)

    env = {
        **os.environ,
        **device_env(tmp_path / "env", repo),
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "protocol.file.allow",
        "GIT_CONFIG_VALUE_0": "always",
    }
    env.pop("TT_METAL_HOME")
    fp = truth.first_parent
    good = fp[fp.index(truth.culprit_merge) - 8]  # a short range keeps the builds few
    p = run_gently(
        [
            sys.executable,
            "-m",
            "lnrepro",
            "bisect",
            "--repo",
            str(repo),
            "--good",
            good,
            "--bad",
            truth.culprit_merge,
            "--pick",
            pick,
            "--runner",
            "local",
            "--filter",
            full_name(CONSTANT),
            "--record-dir",
            str(tmp_path / "runs"),
            "--json",
        ],
        env=env,
        timeout=1500,
        cwd=repo,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    doc = json.loads(p.stdout)
    assert doc["result"]["first_bad"] == truth.culprit
