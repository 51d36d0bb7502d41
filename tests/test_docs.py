"""The docs render with a standard tool (mkdocs --strict: every page in the nav, no broken link),
and the README's first screen keeps its two commands for a fresh machine."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mkdocs_builds_the_docs_strictly(tmp_path: Path) -> None:
    p = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    for page in (
        "commands",
        "api",
        "exit-codes",
        "guarantees",
        "lookalike",
        "performance",
        "schemas",
    ):
        assert (tmp_path / "site" / page / "index.html").is_file(), page


def test_the_first_screen_holds_the_two_fresh_machine_commands() -> None:
    first = "\n".join((ROOT / "README.md").read_text().splitlines()[:40])
    assert "./scripts/demo.sh" in first and "./scripts/test.sh" in first
    ci = (ROOT / ".ci" / "run").read_text()
    assert "./scripts/test.sh" in ci  # CI runs the README's test command as written


def test_every_guarantee_names_tests_that_exist() -> None:
    """docs/guarantees.md: each promise names the tests that check it, and each named test is a
    function in the named file."""
    import re

    text = (ROOT / "docs" / "guarantees.md").read_text()
    promises = [p for p in text.split("\n- **")[1:]]
    assert len(promises) >= 6
    for promise in promises:
        named = re.findall(r"`(tests/[\w/]+\.py)::(test_\w+)`", promise)
        assert named, f"a promise names no test: {promise[:60]}"
        for path, name in named:
            source = (ROOT / path).read_text()
            assert re.search(rf"^def {name}\(", source, re.M), f"{path}::{name} does not exist"
