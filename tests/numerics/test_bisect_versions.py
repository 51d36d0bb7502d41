"""``lnrepro bisect --package NAME --good V --bad V`` over a local index the tests write
(tests/pyproject_lookalike/index.py): the first bad version, an uninstallable version skipped,
a version that needs a new dependency installed with it, ``--find-fix``, and bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lnrepro.bisect.releases import find_uv, releases, step_env
from lnrepro.errors import ExitCode
from tests.conftest import need
from tests.consumers.schemas import errors
from tests.harness import lnrepro
from tests.pyproject_lookalike.index import TEST_NODE, make_index, make_version_project, wheel


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    root = tmp_path_factory.mktemp("index")
    wheels, simple = make_index(root)
    return wheels, simple, make_version_project(root / "project")


def bisect(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``lnrepro bisect ARGS`` in this process, through the tests' one harness."""
    ran = lnrepro("bisect", *args)
    return ran.code, ran.out, ran.err


def test_the_versions_that_install_here_are_read_from_the_index(
    index: tuple[Path, Path, Path],
) -> None:
    wheels, simple, _project = index
    for source in (str(simple), simple.as_uri(), str(wheels)):
        found = {r.version: r for r in releases(source, "tinyscale")}
        assert list(found) == ["1.0", "1.1", "1.2", "1.3", "1.3.1", "1.4", "1.5"]
        assert not found["1.3"].installable and found["1.3"].why_not == "requires Python >=3.99"
        assert all(r.installable for v, r in found.items() if not v.startswith("1.3"))
    assert [r.version for r in releases(str(simple), "tinyscale", "3.99.0")][3] == "1.3"
    assert all(r.installable for r in releases(str(simple), "tinyscale", "3.99.0"))


def test_first_bad_version_skips_the_uninstallable_and_find_fix_names_the_fix(
    index: tuple[Path, Path, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    wheels, _simple, project = index
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    common = ("--package", "tinyscale", "--find-links", str(wheels), "--pytest", TEST_NODE,
              "--repo", str(project), "--python", sys.executable, "--json")  # fmt: skip
    code, out, err = bisect(capsys, *common, "--good", "1.0", "--bad", "1.4")
    assert code == ExitCode.OK, err
    doc = json.loads(out)
    assert doc["schema"] == "lnrepro.version-bisect/1" and errors(out) == []  # its docs/schemas
    assert doc["result"]["first_bad"] == "1.2" and doc["result"]["last_good"] == "1.1"
    marks = {s["version"]: s for s in doc["steps"]}
    assert marks["1.3"]["mark"] == "skip" and "requires Python" in marks["1.3"]["why"]
    assert (
        marks["1.4"]["mark"] == "bad"
    )  # its new dependency came with it: the numbers, not an import
    venvs = list((tmp_path / "cache" / "lnrepro" / "versions").glob("tinyscale-1.4-*"))
    assert len(venvs) == 1 and list(venvs[0].glob("lib/python*/site-packages/tinyhelper"))
    code, out, err = bisect(capsys, *common, "--good", "1.5", "--bad", "1.2", "--find-fix")
    assert code == ExitCode.OK, err
    doc = json.loads(out)
    assert doc["result"]["kind"] == "first fixed version" and errors(out) == []
    assert doc["result"]["first_bad"] == "1.5" and doc["result"]["last_good"] == "1.4"
    # the user's Python never got the package
    assert "tinyscale" not in sys.modules


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--package", "nopkg", "--good", "1.0", "--bad", "1.4"), "no package nopkg"),
        (
            ("--package", "tinyscale", "--good", "1.3", "--bad", "1.3.1"),
            "no release from 1.3 to 1.3.1",
        ),
        (("--package", "tinyscale", "--good", "1.4", "--bad", "1.0"), "is not older than"),
        (("--package", "tinyscale", "--good", "1.0", "--bad", "9.9"), "no such release"),
        (
            ("--package", "tinyscale", "--good", "1.0", "--bad", "1.4", "--image", "any:tag"),
            "--package does not run in --image",
        ),
    ],
)
def test_bad_version_input_is_one_line(
    index: tuple[Path, Path, Path],
    capsys: pytest.CaptureFixture[str],
    args: tuple[str, ...],
    said: str,
) -> None:
    wheels, _simple, project = index
    code, out, err = bisect(
        capsys, *args, "--find-links", str(wheels), "--pytest", TEST_NODE,
        "--repo", str(project), "--python", sys.executable,
    )  # fmt: skip
    assert code == ExitCode.USAGE and out == "" and err.count("\n") == 1 and said in err, err


def _installer(venv_python: str, dist: str) -> str:
    (info,) = Path(venv_python).parent.parent.glob(f"lib/python*/site-packages/{dist}-*.dist-info")
    return (info / "INSTALLER").read_text().strip()


def test_uv_installs_the_step_s_version_and_what_the_user_s_environment_lacks(
    index: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    need(find_uv() is not None, "uv is not installed (pip install -e '.[dev]' brings it)")
    wheels, _simple, _project = index
    found = {r.version: r for r in releases(str(wheels), "tinyscale")}
    links = ["--no-index", "--find-links", str(wheels)]
    py = step_env(tmp_path / "a", sys.executable, "tinyscale", found["1.2"], links)
    assert _installer(py, "tinyscale") == "uv"
    # 1.4 needs tinyhelper, which the user's environment lacks, and numpy (the test's), which it
    # has: uv, which does not see the user's packages under the step's venv, adds tinyhelper only
    py = step_env(tmp_path / "a", sys.executable, "tinyscale", found["1.4"], links)
    assert (_installer(py, "tinyscale"), _installer(py, "tinyhelper")) == ("uv", "uv")
    code = "import numpy, tinyscale; print(tinyscale.scale([2.0]), numpy.__file__)"
    out = subprocess.run([py, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.startswith("[1.001]") and str(tmp_path) not in out  # the user's numpy
    py = step_env(tmp_path / "b", sys.executable, "tinyscale", found["1.2"], links, installer="pip")
    assert _installer(py, "tinyscale") == "pip"


def test_pip_installs_what_uv_s_way_does_not_settle(
    index: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    need(find_uv() is not None, "uv is not installed (pip install -e '.[dev]' brings it)")
    wheels, _simple, _project = index
    extra = tmp_path / "extra"
    extra.mkdir()
    # a requirement with extras: its own requirements are not followed, so pip takes over
    wheel(extra, "tinyextra", "1.0", "X = 1\n", None, ("tinyhelper[fast]>=1.0",))
    links = ["--no-index", "--find-links", str(wheels), "--find-links", str(extra)]
    (release,) = releases(str(extra), "tinyextra")
    py = step_env(tmp_path / "c", sys.executable, "tinyextra", release, links)
    assert (_installer(py, "tinyextra"), _installer(py, "tinyhelper")) == ("uv", "pip")
