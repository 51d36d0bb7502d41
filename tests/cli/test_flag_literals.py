"""The validators name flags through the table of options (issue 45): a flag that an option of
the table has is never spelled as a string literal in the modules that check requests, so the
table is the one place an option's name is written, and every message follows it."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

import pytest

from lnrepro.options import shrink, table

PKG = Path(__file__).resolve().parents[2] / "lnrepro"
MODULES = (
    "run/validate.py",
    "run/python_project.py",
    "bisect/validate.py",
    "bisect/rates.py",
    "bisect/releases.py",
    "shrink/validate.py",
    "api.py",
)
FLAG = re.compile(r"--[a-z][a-z0-9-]+")  # digits too: --l1-max-tiles
TABLE_FLAGS = frozenset(
    f for o in (*table.ALL, *shrink.OPTS) for f in o.flags if f.startswith("--")
)
# Literals that stay: another command's option, or another tool's flag, spelled as one of the
# table's, with how many times each is written.
ALLOWED = {
    ("api.py", "--record-dir"): 1,  # the record readers' own (cli.params.record_dir_option)
    ("api.py", "--defect"): 4,  # tolerance's own option (cli/studies.py)
    ("api.py", "--test"): 1,  # tolerance's own option (cli/studies.py)
    ("api.py", "--image"): 1,  # doctor --container's own option (cli/envcheck.py)
    ("api.py", "--mount-set"): 1,  # doctor --container's own option (cli/envcheck.py)
    ("bisect/releases.py", "--python"): 1,  # `uv pip install --python`: uv's flag
}


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstrings' nodes: prose for a reader, which no table can fill in."""
    return {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }


def table_literals(source: str) -> Counter[str]:
    """The table's flags written in ``source``'s string constants and the literal parts of its
    f-strings (docstrings aside), each with how often."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    return Counter(
        f
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip
        for f in FLAG.findall(n.value)
        if f in TABLE_FLAGS
    )


@pytest.mark.parametrize("module", MODULES)
def test_no_table_flag_is_spelled_as_a_literal(module: str) -> None:
    found = table_literals((PKG / module).read_text(encoding="utf-8"))
    allowed = {f: n for (m, f), n in ALLOWED.items() if m == module}
    assert dict(found) == allowed, (
        f"{module} spells these flags of the table as literals: ask lnrepro.options.table.flag "
        "(or the Flag class beside the messages) instead, or list another tool's flag in ALLOWED"
    )


def test_the_check_sees_a_literal_in_a_string_and_an_fstring() -> None:
    src = '''
def f(n: int) -> str:
    """A docstring may say --jobs."""
    x = "give --budget"  # shrink's own table
    return f"--jobs {n} and --l1-max-tiles, not --gtest_filter or --collect-only"
'''
    assert table_literals(src) == Counter({"--budget": 1, "--jobs": 1, "--l1-max-tiles": 1})
    assert table_literals(src.replace('"give --budget"', '"give " + table.flag')) == Counter(
        {"--jobs": 1, "--l1-max-tiles": 1}
    )


def test_the_messages_name_the_tables_flags() -> None:
    """The Flag classes ask the table: a renamed option is renamed in the messages."""
    from lnrepro.bisect import validate as bisect_validate
    from lnrepro.run import validate as run_validate
    from lnrepro.shrink import validate as shrink_validate

    assert run_validate.Flag.filter == "--filter"
    assert bisect_validate.Flag.docker_context == "--docker-context"
    assert shrink_validate.Flag.source_for == "--source-for"
    for cls in (run_validate.Flag, bisect_validate.Flag, shrink_validate.Flag):
        names = [v for k, v in vars(cls).items() if not k.startswith("_")]
        assert set(names) <= TABLE_FLAGS, cls
