"""The layers are visible in the file list, and nothing imports upward.

errors < (model, hang) < (options, gtest, pytests, numerics) < (doors, emulator) < envcheck < run < (bisect, studies, shrink) < present < api < cli.
Function-level imports count too: a late import is still a dependency. ``lnrepro --help``
loads no numpy, docker or git.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "lnrepro"
RANK = {
    "errors": 0,
    "model": 1,
    "hang": 1,  # a run record holds a hang's diagnosis; hang's readers use model's codec
    "options": 2,
    "gtest": 2,
    "pytests": 2,
    "numerics": 2,
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
    """A module one can read whole: split by concern past 700 lines."""
    long = {
        str(p.relative_to(PKG)): n
        for p in PKG.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 700
    }
    assert not long, long


def test_untyped_dicts_stay_at_the_json_boundary() -> None:
    """``dict[str, Any]`` only where lnrepro meets JSON, TOML, click or the Docker SDK (at
    most 25); every record is typed. A new one past the limit fails here: type it."""
    found = [
        f"{p.relative_to(PKG)}:{i}"
        for p in PKG.rglob("*.py")
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if "dict[str, Any]" in line
    ]
    assert len(found) <= 25, "\n".join(found)


# ---------------------------------------------------------------------------------- cycles
def _type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def _nodes(node: ast.AST) -> list[ast.AST]:
    """Every node under ``node``, imports inside functions too, but not ``if TYPE_CHECKING:``."""
    out: list[ast.AST] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _type_checking(child):
            kids: list[ast.AST] = list(child.orelse)
        else:
            kids = [child]
        for k in kids:
            out += [k, *_nodes(k)]
    return out


def import_graph(pkg: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (``from a import b`` is ``a.b`` when b is a
    module), read from the source, imports inside functions included."""
    names = {
        ".".join(p.relative_to(pkg.parent).with_suffix("").parts).removesuffix(".__init__"): p
        for p in pkg.rglob("*.py")
    }
    graph: dict[str, set[str]] = {}
    for mod, path in names.items():
        out: set[str] = set()
        for n in _nodes(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(n, ast.ImportFrom) and n.level == 0 and n.module in names:
                out |= {
                    f"{n.module}.{a.name}" if f"{n.module}.{a.name}" in names else n.module
                    for a in n.names
                }
            elif isinstance(n, ast.ImportFrom) and n.level == 0 and n.module:
                out |= {n.module} & set(names)
            elif isinstance(n, ast.Import):
                out |= {a.name for a in n.names} & set(names)
        graph[mod] = out - {mod}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = stack[stack.index(v) :]
            del stack[stack.index(v) :]
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles() -> None:
    """No module imports, even inside a function, a module that imports it back."""
    assert cycles(import_graph(PKG)) == []


def test_the_cycle_check_sees_a_late_import(tmp_path: Path) -> None:
    """A cycle closed by an import inside a function is found; one through ``TYPE_CHECKING`` is
    not a cycle at run time and is not reported."""
    pkg = tmp_path / "toy"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from toy.sub import b\n")
    (pkg / "sub" / "b.py").write_text(
        textwrap.dedent("""
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from toy import c
        def f():
            from toy import a
        """)
    )
    (pkg / "c.py").write_text("import toy.sub.b\n")
    assert cycles(import_graph(pkg)) == [["toy.a", "toy.sub.b"]]
    (pkg / "sub" / "b.py").write_text("def f():\n    return 1\n")
    assert cycles(import_graph(pkg)) == []
