"""The emulator honours googletest's environment variables as a real gtest binary does: the real
one (tests/fixtures/gtest_fixture.cpp on Debian's googletest) is the reference, side by side."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lnrepro.emulator.catalogue import CASES

EMU = [sys.executable, "-m", "lnrepro.emulator"]
FAST = "*OneTile:*TwoIncompleteTiles:*OneTilePerRow:*2048Features:*128Tiles"


def emu(
    env: dict[str, str], *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*EMU, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        env={**os.environ, **env},
    )


def real(
    binary: Path, env: dict[str, str], *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(binary), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
        env={**os.environ, **env},
    )


def ran(out: str) -> list[str]:
    return [
        ln.split("] ", 1)[1].strip() for ln in out.splitlines() if ln.startswith("[ RUN      ]")
    ]


def test_shards_partition_the_filtered_tests_as_googletest_does(tmp_path: Path) -> None:
    want = [
        c.full_name
        for c in CASES
        if any(__import__("fnmatch").fnmatchcase(c.full_name, p) for p in FAST.split(":"))
    ]
    got: list[list[str]] = []
    for i in range(3):
        status = tmp_path / f"status-{i}"
        p = emu(
            {
                "GTEST_FILTER": FAST,
                "GTEST_TOTAL_SHARDS": "3",
                "GTEST_SHARD_INDEX": str(i),
                "GTEST_SHARD_STATUS_FILE": str(status),
            }
        )
        assert p.returncode in (0, 1), p.stderr
        assert f"Note: This is test shard {i + 1} of 3." in p.stdout and status.exists()
        got.append(ran(p.stdout))
    assert got == [want[k::3] for k in range(3)]  # test k on shard k % total, in order


def test_bad_shard_variables_exit_1_like_googletest(gtest_binary: Path) -> None:
    for env in (
        {"GTEST_TOTAL_SHARDS": "2", "GTEST_SHARD_INDEX": "2"},
        {"GTEST_SHARD_INDEX": "0"},
        {"GTEST_TOTAL_SHARDS": "x", "GTEST_SHARD_INDEX": "0"},
    ):
        r, e = (
            real(gtest_binary, env, "--gtest_filter=Basic.Passes"),
            emu(env, "--gtest_filter=*OneTile"),
        )
        assert r.returncode == e.returncode == 1, (env, r.stdout, e.stdout)
        key = (
            "Invalid environment variables"
            if "x" not in env.values()
            else "is expected to be a 32-bit integer"
        )
        assert key in r.stdout and key in e.stdout


def test_output_brief_color_repeat_and_seed_from_the_environment(
    tmp_path: Path, gtest_binary: Path
) -> None:
    out = tmp_path / "reports"
    p = emu({"GTEST_OUTPUT": f"json:{out}/", "GTEST_FILTER": "*OneTile"})
    assert p.returncode == 0 and json.loads((out / "ttml_tests.json").read_text())["tests"] == 1
    emu({"GTEST_OUTPUT": f"json:{out}/", "GTEST_FILTER": "*OneTile"})
    assert (out / "ttml_tests_1.json").exists()  # a second run does not overwrite: unique names
    brief = emu({"GTEST_BRIEF": "1", "GTEST_FILTER": "*OneTile:*2048Features"})
    assert "[ RUN      ]" not in brief.stdout and "[  FAILED  ]" in brief.stdout
    assert (
        "[ RUN      ]"
        not in real(gtest_binary, {"GTEST_BRIEF": "1"}, "--gtest_filter=Basic.Passes").stdout
    )
    assert "\x1b[" in emu({"GTEST_COLOR": "yes", "GTEST_FILTER": "*OneTile"}).stdout
    rep = emu(
        {
            "GTEST_REPEAT": "2",
            "GTEST_SHUFFLE": "true",
            "GTEST_RANDOM_SEED": "99999",
            "GTEST_FILTER": "*OneTile",
        }
    )
    assert "Repeating all tests (iteration 2)" in rep.stdout
    seeds = [ln.split("seed of ")[1] for ln in rep.stdout.splitlines() if "seed of" in ln]
    gt = real(
        gtest_binary,
        {"GTEST_REPEAT": "2", "GTEST_SHUFFLE": "true", "GTEST_RANDOM_SEED": "99999"},
        "--gtest_filter=Basic.Passes",
    )
    assert (
        seeds
        == [ln.split("seed of ")[1] for ln in gt.stdout.splitlines() if "seed of" in ln]
        == ["99999 .", "1 ."]
    )


@pytest.mark.parametrize("value", ["0", "1", "false"])
def test_boolean_variables_are_true_unless_exactly_0(value: str, gtest_binary: Path) -> None:
    e = emu({"GTEST_SHUFFLE": value, "GTEST_FILTER": "*OneTile"})
    r = real(gtest_binary, {"GTEST_SHUFFLE": value}, "--gtest_filter=Basic.Passes")
    assert ("Randomizing" in e.stdout) == ("Randomizing" in r.stdout) == (value != "0")
