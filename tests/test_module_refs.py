"""Every ``:mod:`` a docstring names is a module that exists (``bisect/__init__.py`` named a
``session`` module long after it had gone)."""

from __future__ import annotations

import re
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "lnrepro"


def _exists(dotted: str) -> bool:
    path = PKG.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def test_every_module_a_docstring_names_exists() -> None:
    wrong = []
    for path in sorted(PKG.rglob("*.py")):
        module = ".".join(path.relative_to(PKG.parent).with_suffix("").parts)
        package = module.removesuffix(".__init__") if path.name == "__init__.py" else module
        for ref in re.findall(r":mod:`~?([\w.]+)`", path.read_text()):
            if ref.startswith("."):  # relative: to the package, or beside the module
                here = [package + ref, package.rsplit(".", 1)[0] + ref]
            else:
                here = [ref]
            if not any(_exists(name) for name in here):
                wrong.append(f"{path.relative_to(PKG.parent)}: {ref}")
    assert not wrong, wrong
