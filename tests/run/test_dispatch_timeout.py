"""``--dispatch-timeout``: tt-metal's own hang detection (TT_METAL_OPERATION_TIMEOUT_SECONDS),
checked against ``--timeout`` (by ``run``, ``bisect`` and ``shrink``), 0 meaning off, and helps
that say what is set."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import Result, assert_one_line_error, lnrepro


def checkout(tmp_path: Path) -> Path:
    where = tmp_path / "tt-metal"
    where.mkdir()
    (where / "build_metal.sh").write_text("#!/bin/sh\n")
    (where / "build_metal.sh").chmod(0o755)
    return where


def dry_run(tmp_path: Path, *extra: str) -> Result:
    argv = ["run", "--tt-metal", str(checkout(tmp_path)), "--runner", "local", "--dry-run"]
    return lnrepro(*argv, "--record-dir", tmp_path / "runs", *extra)


@pytest.mark.parametrize("seconds", ["60", "30"])
def test_a_dispatch_timeout_not_below_the_timeout_is_refused(seconds: str, tmp_path: Path) -> None:
    assert_one_line_error(
        dry_run(tmp_path, "--dispatch-timeout", seconds, "--timeout", "30"),
        2,
        f"--dispatch-timeout {seconds} is not below --timeout 30",
        "— fix:",
    )


def test_a_dispatch_timeout_below_the_timeout_is_set(tmp_path: Path) -> None:
    code, out, err = dry_run(tmp_path, "--dispatch-timeout", "5", "--timeout", "30")
    assert code == 0, err
    assert "TT_METAL_OPERATION_TIMEOUT_SECONDS=5 " in out


def test_a_dispatch_timeout_of_0_turns_tt_metals_detection_off(tmp_path: Path) -> None:
    """tt-metal reads the variable as a float, 0 = off (tt_metal/llrt/rtoptions.cpp): 0 is
    accepted and set as 0, and no triage command goes with it (it would never run)."""
    code, out, err = dry_run(tmp_path, "--dispatch-timeout", "0")
    assert code == 0, err
    assert "TT_METAL_OPERATION_TIMEOUT_SECONDS=0 " in out
    assert "TT_METAL_DISPATCH_TIMEOUT_COMMAND_TO_EXECUTE" not in out


def test_a_request_with_the_dispatch_timeout_off_reads_back(tmp_path: Path) -> None:
    """A record keeps its request: one made with ``--dispatch-timeout 0`` must read back (the
    type once said ``> 0``, so ``show`` and ``--resume`` refused the record ``run`` wrote)."""
    from lnrepro.model import codec
    from lnrepro.model.jsonio import Reader
    from lnrepro.model.requests import TtMetalSpec

    spec = TtMetalSpec(checkout=checkout(tmp_path), dispatch_timeout_s=0.0)
    back = codec.decode(Reader(codec.encode_obj(spec), "request"), TtMetalSpec)
    assert back.dispatch_timeout_s == 0.0


@pytest.mark.parametrize("command", ["run", "bisect"])
def test_the_helps_say_what_is_set_and_what_no_triage_drops(command: str) -> None:
    out = lnrepro(command, "--help", width=200).out
    text = " ".join(out.split())
    # the command variable holds the triage command, not the seconds
    assert "TT_METAL_OPERATION_TIMEOUT_SECONDS to SECONDS" in text
    assert "TT_METAL_DISPATCH_TIMEOUT_COMMAND_TO_EXECUTE to the checkout's tt-triage" in text
    assert "0 turns tt-metal's own detection off" in text
    # --no-triage drops both: the run at lnrepro's timeout and tt-metal's timeout command
    no_triage = text[text.index("--no-triage") : text.index("--dispatch-timeout SECONDS")]
    assert "TT_METAL_DISPATCH_TIMEOUT_COMMAND_TO_EXECUTE" in no_triage


def test_a_bisect_checks_the_dispatch_timeout_against_its_timeout(tmp_path: Path) -> None:
    import subprocess

    repo = checkout(tmp_path)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    for i in range(2):
        (repo / "n").write_text(f"{i}\n")
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", f"c{i}"], check=True)
    argv = ["bisect", "--repo", str(repo), "--good", "HEAD~1", "--bad", "HEAD"]
    assert_one_line_error(
        lnrepro(*argv, "--runner", "local", "--dispatch-timeout", "60", "--timeout", "30"),
        2,
        "--dispatch-timeout 60 is not below --timeout 30",
    )


def test_a_shrink_checks_the_dispatch_timeout_against_its_timeout(tmp_path: Path) -> None:
    tree = checkout(tmp_path)
    argv = ["shrink", "--test", "BugRepro_Deterministic_2048Features", "--tt-metal", str(tree)]
    assert_one_line_error(
        lnrepro(*argv, "--runner", "local", "--dispatch-timeout", "900", "--timeout", "600"),
        2,
        "--dispatch-timeout 900 is not below --timeout 600",
    )
