"""lnrepro.hang has one door (issue 45): other packages import lnrepro.hang.door, or the data
room lnrepro.hang.model for a record's diagnosis type; the door imports its rooms at the top (no
late import), no room imports the door, and every module opens by saying what it owns."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "lnrepro"
HANG = PKG / "hang"
ENTRIES = {"lnrepro.hang.door", "lnrepro.hang.model"}


def _imports(path: Path) -> list[tuple[int, str, bool]]:
    """(line, module, inside a function) for every import of lnrepro in a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    late = {
        id(n)
        for f in ast.walk(tree)
        if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
        for n in ast.walk(f)
    }
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("lnrepro"):
            mods = [node.module]
            if node.module in ("lnrepro", "lnrepro.hang"):
                mods = [f"{node.module}.{a.name}" for a in node.names]
            out += [(node.lineno, m, id(node) in late) for m in mods]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name, id(node) in late) for a in node.names]
    return out


def test_other_packages_come_in_through_the_door() -> None:
    wrong = [
        f"{p.relative_to(PKG.parent)}:{line} imports {m}"
        for p in PKG.rglob("*.py")
        if HANG not in p.parents
        for line, m, _ in _imports(p)
        if m.startswith("lnrepro.hang") and m not in ENTRIES
    ]
    assert not wrong, "\n".join(wrong)


def test_the_door_imports_its_rooms_at_the_top_and_no_room_imports_the_door() -> None:
    late = [f"door.py:{line} {m}" for line, m, inside in _imports(HANG / "door.py") if inside]
    assert not late, late
    back = [
        f"{p.relative_to(PKG.parent)}:{line}"
        for p in HANG.rglob("*.py")
        if p.name != "door.py"
        for line, m, _ in _imports(p)
        if m == "lnrepro.hang.door"
    ]
    assert not back, back
    assert not [m for _, m, _ in _imports(HANG / "__init__.py")]  # the records load no reader


def test_every_module_says_what_it_owns() -> None:
    bare = [
        str(p.relative_to(PKG))
        for p in HANG.rglob("*.py")
        if not (ast.get_docstring(ast.parse(p.read_text(encoding="utf-8"))) or "").strip()
    ]
    assert not bare, bare
