"""``run --help``'s examples say what they do: each emulator example whose comment counts
failing tests, or says "all pass", is run and the count checked (an example that says "all
pass" while some tests fail, as ``--defect none``'s TightTolerance tests do, fails here)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.harness import lnrepro

WORDS = {"no": 0, "one": 1, "two": 2, "three": 3}


def claims() -> list[tuple[list[str], int]]:
    """(argv, failing tests) of each example whose comment says how many fail."""
    out = lnrepro("run", "--help", width=200).out
    found = []
    for line in out.splitlines():
        cmd, _, comment = line.strip().partition("#")
        if not cmd.startswith("lnrepro run") or "--tt-metal" in cmd:
            continue
        argv = shlex.split(cmd)
        if "all pass" in comment:
            found.append((argv[2:], 0))
        elif m := re.search(r"\b(\d+|no|one|two|three) (?:\w+ )?tests? (?:still )?fail", comment):
            n = m.group(1)
            found.append((argv[2:], int(n) if n.isdigit() else WORDS[n]))
    return found


def test_the_examples_say_how_many_fail() -> None:
    argvs = [" ".join(a) for a, _ in claims()]
    assert "--defect none" in argvs and "" in argvs and "--kernel-era fixed" in argvs, argvs


# the bare `lnrepro run` (7 fail) is tests/present/test_reports.py's: not run twice
@pytest.mark.parametrize(("argv", "fails"), [c for c in claims() if c[0]], ids=str)
def test_an_example_fails_as_many_tests_as_its_comment_says(
    argv: list[str], fails: int, tmp_path: Path
) -> None:
    import json

    code, out, err = lnrepro("run", *argv, "--json", "--record-dir", tmp_path)
    assert out, (code, err)
    doc = json.loads(out)
    failed = [t["name"] for t in doc["tests"] if t["verdict"] != "PASS"]
    assert len(failed) == fails, failed
    assert code == (1 if fails else 0)
