"""What ``shrink`` prints says each thing once and says nothing false: no
"margin ? the tolerance" when a --command gives no margin, "nothing fails" once, a missing
--source folder an error, and ``show`` of a shrink's directory says what it is."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.harness import assert_one_line_error, lnrepro

START = ["shrink", "--test", "BugRepro_Deterministic_2048Features"]


def test_a_command_without_a_margin_is_not_given_one(tmp_path: Path) -> None:
    code, out, err = lnrepro(*START, "--command", "false", "--record-dir", tmp_path)
    assert code == 1, err
    assert "?" not in out.replace("LNREPRO_CASE", ""), out
    assert (
        "fails 5/5 runs (exit 1); no margin: the command prints no `lnrepro-probe: margin=M` line"
        in out
    )


def test_nothing_fails_is_said_once(tmp_path: Path) -> None:
    for budget in ([], ["--budget", "40"]):  # every case tried; the budget ran out
        for fmt in ([], ["--markdown"]):
            argv = [*START, "--kernel-era", "fixed", "--start-runs", "1", *budget, *fmt]
            code, out, err = lnrepro(*argv)
            assert code == 0, err
            said = out.lower().replace("nothing failing", "nothing fails")
            assert said.count("nothing fails") == 1, out


def test_a_source_in_a_missing_folder_is_a_usage_error(tmp_path: Path) -> None:
    where = tmp_path / "no" / "such" / "dir" / "x.cpp"
    assert_one_line_error(
        lnrepro(*START, "--source", where),
        2,
        f"--source {where}: the directory {where.parent} does not exist",
        "mkdir -p",
    )
    assert not (tmp_path / "no").exists()


def test_show_of_a_saved_shrink_says_how_to_see_it(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    script = tmp_path / "fails.py"
    script.write_text("import sys\nsys.exit(1)\n")
    argv = [*START, "--command", f"{sys.executable} {script}", "--record-dir", str(runs)]
    code, out, err = lnrepro(*argv)
    assert code == 1, err
    [saved] = list(runs.iterdir())
    assert saved.name.startswith("shrink-") and saved.name in out  # the note names it
    assert_one_line_error(
        lnrepro("show", saved.name, "--record-dir", runs),
        2,
        f"{saved.name} is a saved shrink",
        f"lnrepro shrink --resume {saved}",
    )
