"""The margin plugin (issue 47): every comparison's share of its tolerance, passes included, and
no outcome changed. Each run is a fresh pytest process with the plugin loaded by ``-p``."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from lnrepro.numerics.plugin import ENV, read

SAMPLE = """
import numpy as np
import pytest

def test_numpy_passes():
    np.testing.assert_allclose(np.array([1.0, 2.0]), np.array([1.0, 2.1]), rtol=0, atol=0.4)

def test_numpy_fails():
    np.testing.assert_allclose(np.array([1.0]), np.array([2.0]), rtol=0, atol=0.5)

def test_allclose_and_approx():
    assert np.allclose([1.0], [1.0 + 5e-9])
    assert 1.01 == pytest.approx(1.0, abs=0.04)

def test_torch():
    torch = pytest.importorskip("torch")
    torch.testing.assert_close(torch.tensor([1.0]), torch.tensor([1.001]), rtol=0, atol=0.002)
"""


def pytest_run(tmp_path: Path, target: str, plugin: bool, name: str) -> dict[str, str]:
    """Each test's outcome (from the JUnit XML) of one pytest process over ``target``."""
    junit = tmp_path / f"{name}.xml"
    env = {**os.environ, ENV: str(tmp_path / f"{name}.jsonl")}
    argv = [sys.executable, "-m", "pytest", "-q", "-o", "addopts=", "-p", "no:cacheprovider"]
    argv += ["-p", "lnrepro.numerics.plugin"] if plugin else []
    p = subprocess.run(
        [*argv, f"--junitxml={junit}", target],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert junit.exists(), p.stdout[-2000:] + p.stderr[-2000:]
    out = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        kind = next((c.tag for c in case), "passed")
        out[f"{case.get('classname')}.{case.get('name')}"] = kind
    return out


def test_comparisons_give_their_margin_on_passing_runs(tmp_path: Path) -> None:
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    outcomes = pytest_run(tmp_path, "test_sample.py", True, "on")
    margins = read(tmp_path / "on.jsonl")
    assert margins["test_sample.py::test_numpy_passes/test_sample.py:6"] == pytest.approx(0.25)
    assert margins["test_sample.py::test_numpy_fails/test_sample.py:9"] == pytest.approx(2.0)
    approx = margins["test_sample.py::test_allclose_and_approx/test_sample.py:13"]
    assert approx == pytest.approx(0.25)  # 0.01 of abs 0.04
    assert margins["test_sample.py::test_allclose_and_approx/test_sample.py:12"] < 0.5
    try:
        import torch  # noqa: F401
    except ImportError:
        pass
    else:
        torch_used = margins["test_sample.py::test_torch/test_sample.py:17"]
        assert torch_used == pytest.approx(0.5, rel=1e-3)
    assert outcomes == pytest_run(tmp_path, "test_sample.py", False, "off")


def test_the_suites_own_numerics_tests_agree_with_and_without_the_plugin(tmp_path: Path) -> None:
    target = str(Path(__file__).resolve().parents[1] / "model" / "test_stats.py")
    on = pytest_run(tmp_path, target, True, "on")
    assert on and on == pytest_run(tmp_path, target, False, "off")
    assert read(tmp_path / "on.jsonl")  # and it saw their comparisons


def test_lnrepro_reads_the_margins_file_in_a_python_without_pytest(tmp_path: Path) -> None:
    """lnrepro is installed without pytest (``scripts/demo.sh``): a ``--command`` bisect imports
    the plugin for its constant and its reader, and copies it, so it must import with no pytest."""
    code = (
        "import sys; sys.modules['pytest'] = None; sys.modules['_pytest'] = None\n"
        "from pathlib import Path\n"
        "from lnrepro.bisect.oracle import command_env, read_margins\n"
        f"env = command_env(Path({str(tmp_path)!r}))\n"
        "assert 'lnrepro_margins_plugin' in env['PYTEST_ADDOPTS']\n"
        f"print(read_margins(Path({str(tmp_path)!r})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "{}"


def test_the_plugin_goes_before_the_requests_own_pythonpath(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lnrepro.run.pipeline import _plugin_env

    monkeypatch.setenv("PYTHONPATH", "/from/shell")
    assert _plugin_env(tmp_path, 1, "/from/env")["PYTHONPATH"] == f"{tmp_path}{os.pathsep}/from/env"
    assert _plugin_env(tmp_path, 1)["PYTHONPATH"] == f"{tmp_path}{os.pathsep}/from/shell"
    assert (tmp_path / "lnrepro_margins_plugin.py").is_file()


def test_a_tests_margins_go_to_it_alone_whatever_root_named_it(tmp_path: Path) -> None:
    """The plugin and the JUnit report may name a test from other roots (``tests/x.py::t`` and
    ``x.py::t``); ``ax.py::t`` is another test, never matched by its end."""
    import json as _json

    from lnrepro.model.gtest import GtestRun, Iteration, TestResult, TestStatus
    from lnrepro.run.pipeline import _add_margins

    path = tmp_path / "m.jsonl"
    lines = [{"test": "x.py::t", "when": "call", "outcome": "passed", "margins": {"x.py:3": 0.5}}]
    path.write_text("".join(_json.dumps(d) + "\n" for d in lines))
    names = ("tests/x.py::t", "ax.py::t")
    tests = [TestResult(name=n, status=TestStatus.PASSED) for n in names]
    run = GtestRun(exit_code=0)
    run.iterations.append(Iteration(index=1, tests=tests, started=True))
    _add_margins(run, path)
    assert tests[0].metrics == {"x.py:3": {"used": 0.5}} and tests[1].metrics == {}
