"""A local package index written by the tests: wheels of a tiny package, ``tinyscale``, at
several versions, and a PEP 503 simple index over them (``simple/<name>/index.html`` with
``data-requires-python``), built with zipfile (a wheel is a zip; no build backend needed).

* 1.0, 1.1: ``scale(x) = x / 2`` (good);
* 1.2: adds 1e-3 (the change);
* 1.3, 1.3.1: ``Requires-Python: >=3.99`` (do not install on this Python);
* 1.4: still off, and needs a new dependency, ``tinyhelper`` (also in the index);
* 1.5: fixed, still needing ``tinyhelper``.

The project: ``tests/test_scale.py::test_scale`` (numpy's assert_allclose).
"""

from __future__ import annotations

import base64
import hashlib
import html
import zipfile
from pathlib import Path

TEST_NODE = "tests/test_scale.py::test_scale"
GOOD = "def scale(x):\n    return [v / 2 for v in x]\n"
BAD = "def scale(x):\n    return [v / 2 + 1e-3 for v in x]\n"
HELPED_BAD = (
    "from tinyhelper import half\n\n\ndef scale(x):\n    return [half(v) + 1e-3 for v in x]\n"
)
HELPED_GOOD = "from tinyhelper import half\n\n\ndef scale(x):\n    return [half(v) for v in x]\n"
# version -> (module text, requires-python, dependencies)
VERSIONS: dict[str, tuple[str, str | None, tuple[str, ...]]] = {
    "1.0": (GOOD, ">=3.8", ()),
    "1.1": (GOOD, ">=3.8", ()),
    "1.2": (BAD, ">=3.8", ()),
    "1.3": (BAD, ">=3.99", ()),
    "1.3.1": (BAD, ">=3.99", ()),
    "1.4": (HELPED_BAD, ">=3.8", ("tinyhelper>=1.0",)),
    "1.5": (HELPED_GOOD, ">=3.8", ("tinyhelper>=1.0",)),
}
PROJECT_TEST = """import numpy as np
from numpy.testing import assert_allclose

from tinyscale import scale


def test_scale():
    assert_allclose(np.array(scale([1.0, 2.0, 4.0])), [0.5, 1.0, 2.0], rtol=1e-6)
"""


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def wheel(
    where: Path, name: str, version: str, module: str, rp: str | None, deps: tuple[str, ...]
) -> Path:
    dist = f"{name}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    meta += f"Requires-Python: {rp}\n" if rp else ""
    meta += "".join(f"Requires-Dist: {d}\n" for d in deps)
    files = {
        f"{name}/__init__.py": module.encode(),
        f"{dist}/METADATA": meta.encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: lnrepro-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = (
        "".join(f"{n},{_digest(d)},{len(d)}\n" for n, d in files.items()) + f"{dist}/RECORD,,\n"
    )
    files[f"{dist}/RECORD"] = record.encode()
    path = where / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for n, d in files.items():
            z.writestr(n, d)
    return path


def make_index(root: Path) -> tuple[Path, Path]:
    """``(wheels folder, simple index folder)`` under ``root``."""
    wheels = root / "wheels"
    wheels.mkdir(parents=True)
    made: dict[str, list[tuple[Path, str | None]]] = {"tinyscale": [], "tinyhelper": []}
    for v, (module, rp, deps) in VERSIONS.items():
        made["tinyscale"].append((wheel(wheels, "tinyscale", v, module, rp, deps), rp))
    helper = "def half(v):\n    return v / 2\n"
    made["tinyhelper"].append((wheel(wheels, "tinyhelper", "1.0", helper, ">=3.8", ()), ">=3.8"))
    simple = root / "simple"
    for name, files in made.items():
        page = simple / name
        page.mkdir(parents=True)
        links = "".join(
            f'<a href="../../wheels/{p.name}" data-requires-python="{html.escape(rp or "")}">{p.name}</a>\n'
            for p, rp in files
        )
        (page / "index.html").write_text(f"<!DOCTYPE html><html><body>\n{links}</body></html>\n")
    return wheels, simple


def make_version_project(root: Path) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_scale.py").write_text(PROJECT_TEST)
    return root
