"""Every in-process run of the CLI goes through ``tests/harness.py``: it puts back what a command
changes in its process (the signal handlers, the unraisable hook, the subreaper, the stop's
hint). A test that called ``lnrepro.cli.main`` itself left a bisect's "--resume continues it"
hint behind, and a later test in that worker read it on its own stop line."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
ENTRY_POINTS = {("lnrepro.cli", "main"), ("lnrepro.cli.exits", "main")}


def direct_calls(source: str) -> list[str]:
    """The imports of lnrepro's entry point in ``source`` (code in strings, run as a process of
    its own, is not an import)."""
    return [
        f"line {node.lineno}: from {node.module} import {alias.name}"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if (node.module, alias.name) in ENTRY_POINTS
    ]


def test_only_the_harness_calls_the_entry_point_in_process() -> None:
    found = {
        str(path.relative_to(TESTS)): calls
        for path in TESTS.rglob("*.py")
        if path.name != "harness.py" and "lookalike/tree" not in path.as_posix()
        if (calls := direct_calls(path.read_text(encoding="utf-8")))
    }
    assert not found, f"call it through tests.harness.lnrepro: {found}"


def test_the_check_sees_an_import_and_not_a_subprocess_string() -> None:
    assert direct_calls("from lnrepro.cli import main as cli_main\n")
    assert direct_calls("def f():\n    from lnrepro.cli.exits import main\n")
    assert not direct_calls("code = 'from lnrepro.cli import main; main([])'\n")
