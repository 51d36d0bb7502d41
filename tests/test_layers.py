"""The layers are visible in the file list, and nothing imports upward.

errors < (model, hang) < (gtest, pytests) < (doors, emulator) < envcheck < run < (bisect, studies, shrink) < present < api < cli.
Function-level imports count too: a late import is still a dependency. ``lnrepro --help``
loads no numpy, docker or git.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "lnrepro"
RANK = {
    "errors": 0,
    "model": 1,
    "hang": 1,  # a run record holds a hang's diagnosis; hang's readers use model's codec
    "gtest": 2,
    "pytests": 2,
    "doors": 3,
    "emulator": 3,
    "envcheck": 4,
    "run": 5,
    "bisect": 6,
    "studies": 6,
    "shrink": 6,
    "present": 7,
    "api": 8,
    "cli": 9,
    "__main__": 10,
    "__init__": 0,
}


def layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("lnrepro"):
            names = (
                [f"{node.module}.{a.name}" for a in node.names]
                if node.module == "lnrepro"
                else [node.module]
            )
            out += [(node.lineno, n) for n in names]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.startswith("lnrepro")]
    return out


def test_nothing_imports_upward() -> None:
    wrong = []
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG.parent).with_suffix("")
        mine = layer(".".join(rel.parts))
        for line, target in imports(path):
            theirs = layer(target)
            if theirs in ("__version__",):
                continue
            if RANK.get(theirs, 0) > RANK[mine]:
                wrong.append(f"{rel}.py:{line} ({mine}) imports {target} ({theirs})")
    assert not wrong, "\n".join(wrong)


def test_every_layer_is_a_package_and_known() -> None:
    tops = {
        p.stem if p.is_file() else p.name
        for p in PKG.iterdir()
        if p.suffix == ".py" or (p / "__init__.py").exists()
    }
    assert tops - {"__init__", "__main__"} <= set(RANK), f"unranked: {tops - set(RANK)}"
    flat = sorted(p.name for p in PKG.glob("*.py"))
    assert flat == ["__init__.py", "__main__.py", "api.py", "errors.py"], flat


def test_help_loads_no_numpy_docker_or_git() -> None:
    code = (
        "import sys; from lnrepro.cli import main; rc = main(['--help']); "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'docker', 'git', 'rich')); "
        "print('LOADED', bad); sys.exit(0)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "LOADED []" in out, out


def test_no_module_is_over_700_lines() -> None:
    """A module a newcomer can read whole (issue 39): split by concern past 700 lines."""
    long = {
        str(p.relative_to(PKG)): n
        for p in PKG.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 700
    }
    assert not long, long


def test_untyped_dicts_stay_at_the_json_boundary() -> None:
    """``dict[str, Any]`` only where lnrepro meets JSON, TOML, click or the Docker SDK (issue 39:
    at most 25); every record is typed. A new one past the limit fails here: type it."""
    found = [
        f"{p.relative_to(PKG)}:{i}"
        for p in PKG.rglob("*.py")
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if "dict[str, Any]" in line
    ]
    assert len(found) <= 25, "\n".join(found)
