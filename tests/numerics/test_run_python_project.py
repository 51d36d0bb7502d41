"""``lnrepro run --pytest NODEID --repo DIR`` on a plain Python project (no tt-metal): metrics read
from numpy's own message, a flaky test's pass rate, the environment in the record, bad input."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from lnrepro.errors import ExitCode
from lnrepro.model.pyenv import differences, numerics_env
from lnrepro.run.backends.python import project_python
from tests.conftest import docker_ok, need
from tests.harness import lnrepro
from tests.numerics.conftest import IMAGE_ENV
from tests.pyproject_lookalike import FAILING_NODE, FLAKY_NODE, TEST_NODE, make_project


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("proj") / "tinynorm"
    make_project(repo)
    return repo


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """``lnrepro run ARGS`` in this process, through the tests' one harness."""

    def invoke(*args: str) -> tuple[int, str, str]:
        ran = lnrepro("run", *args)
        return ran.code, ran.out, ran.err

    return invoke


Run = Callable[..., tuple[int, str, str]]


def test_run_reads_numpy_s_counts_and_differences_as_printed(
    project: Path, tmp_path: Path, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    code, out, err = run(
        "--pytest", FAILING_NODE, "--repo", str(project), "--python", sys.executable,
        "--record-dir", str(tmp_path), "--json",
    )  # fmt: skip
    assert code == ExitCode.FAILED, err
    doc = json.loads(out)
    (t,) = doc["tests"]
    assert t["name"] == FAILING_NODE and t["verdict"] == "FAIL"
    m = t["worst_metrics"]["(unnamed)"]
    # numpy printed "Mismatched elements: 1 / 4 (25%)", a max difference of 0.5, rtol=0.001
    assert (m["mismatched"], m["elements"], m["max_abs_diff"], m["rtol"], m["atol"]) == (
        1, 4, 0.5, 0.001, 0.0
    )  # fmt: skip
    (c,) = doc["attempts"][0]["tests"][0]["comparisons"]
    assert c["form"].startswith("numpy-2") and c["over_violations"] is True
    assert doc["backend"]["backend"] == "python" and doc["backend"]["interpreter"] == sys.executable
    frozen = doc["fingerprint"]["python_env"]
    assert frozen["packages"]["numpy"] and frozen["env"]["OMP_NUM_THREADS"] == "3"
    assert doc["rerun"][:4] == ["lnrepro", "run", "--backend", "python"]


def test_minus_n_on_a_flaky_test_gives_a_pass_rate_with_its_interval(
    project: Path, tmp_path: Path, run: Run
) -> None:
    _code, out, err = run(
        "--pytest", FLAKY_NODE, "--repo", str(project), "--python", sys.executable,
        "-n", "10", "--record-dir", str(tmp_path), "--json",
    )  # fmt: skip
    doc = json.loads(out)
    (t,) = doc["tests"]
    assert t["runs"] == 10 and len(doc["attempts"]) == 10
    low, high = t["pass_rate_ci95"]
    assert 0.0 <= low <= t["pass_rate"] <= high <= 1.0 and high - low > 0.2
    # P(all 10 the same) = 2 * 0.5**10: FLAKY nearly always; PASS or FAIL otherwise, never more
    assert t["verdict"] in ("FLAKY", "PASS", "FAIL"), err


def test_a_node_id_that_does_not_exist_is_one_line_and_nothing_is_written(
    project: Path, tmp_path: Path, run: Run
) -> None:
    records = tmp_path / "records"
    for nid in ("tests/test_norm.py::test_nope", "tests/missing.py::test_x"):
        code, out, err = run(
            "--pytest", nid, "--repo", str(project), "--python", sys.executable,
            "--record-dir", str(records),
        )  # fmt: skip
        assert code == ExitCode.USAGE and out == ""
        assert err.count("\n") == 1 and err.startswith("lnrepro: error: --pytest "), err
    assert not records.exists()


def test_a_project_that_is_not_a_directory_and_a_missing_python(tmp_path: Path, run: Run) -> None:
    code, _out, err = run("--pytest", TEST_NODE, "--repo", str(tmp_path / "nope"))
    assert code == ExitCode.USAGE and "is not a directory" in err and err.count("\n") == 1
    code, _out, err = run(
        "--pytest", TEST_NODE, "--repo", str(tmp_path), "--python", str(tmp_path / "py")
    )
    assert code == ExitCode.ENVIRONMENT and "no such interpreter" in err


def test_the_project_s_own_venv_is_its_python(tmp_path: Path) -> None:
    assert project_python(tmp_path, "/x/python") == "/x/python"
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").write_text("")
    (venv / "python").chmod(0o755)
    assert project_python(tmp_path, None) == str(venv / "python")
    dot = tmp_path / ".venv" / "bin"
    dot.mkdir(parents=True)
    (dot / "python").write_text("")
    (dot / "python").chmod(0o755)
    assert project_python(tmp_path, None) == str(dot / "python")


def test_the_variables_that_change_numbers_are_kept_and_compared() -> None:
    env = {
        "NPY_PROMOTION_STATE": "weak",
        "XLA_FLAGS": "--xla_allow_excess_precision",
        "TORCHINDUCTOR_EMULATE_PRECISION_CASTS": "1",
        "MKL_CBWR": "AVX2",
        "CUBLAS_WORKSPACE_CONFIG": ":4096:8",
        "TF_CLI_CONFIG_FILE": "/root/.terraformrc",  # terraform's, not TensorFlow's
        "HOME": "/root",
    }
    assert set(numerics_env(env)) == set(env) - {"HOME", "TF_CLI_CONFIG_FILE"}
    a = {"python": "3.11.7", "packages": {"numpy": "1.26.4", "pytest": "9.2.0"}, "env": {}}
    b = {
        "python": "3.11.7",
        "packages": {"numpy": "2.0.2", "pytest": "9.2.0", "uv": "0.9.0"},
        "env": {"NPY_PROMOTION_STATE": "weak"},
    }
    assert differences(a, b) == [
        "numpy 1.26.4 → 2.0.2",
        "+uv 0.9.0",
        "NPY_PROMOTION_STATE unset → weak",
    ]
    assert differences(a, a) == []


def test_compare_shows_a_numerics_variable_that_changed_between_two_runs(
    project: Path,
    tmp_path: Path,
    run: Run,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ("--pytest", FAILING_NODE, "--repo", str(project), "--python", sys.executable)
    ids = []
    for value in (None, "weak"):
        if value:
            monkeypatch.setenv("NPY_PROMOTION_STATE", value)
        _code, out, _err = run(*args, "--record-dir", str(tmp_path), "--json")
        ids.append(json.loads(out)["id"])
    ran = lnrepro("compare", *ids, "--record-dir", tmp_path, "--json")
    assert ran.code == ExitCode.OK, ran.err
    doc = json.loads(ran.out)
    assert doc["environment"] == ["NPY_PROMOTION_STATE unset → weak"]
    ran = lnrepro("compare", *ids, "--record-dir", tmp_path)
    assert ran.code == ExitCode.OK and "NPY_PROMOTION_STATE unset → weak" in ran.out


def test_image_runs_the_project_s_test_in_a_container_of_that_image(
    project: Path, tmp_path: Path, run: Run, python_image: str
) -> None:
    import numpy

    code, out, err = run(
        "--pytest", FAILING_NODE, "--repo", str(project), "--image", python_image, "-n", "2",
        "--env", "OMP_NUM_THREADS=2", "--record-dir", str(tmp_path), "--json",
    )  # fmt: skip
    assert code == ExitCode.FAILED, err
    doc = json.loads(out)
    (t,) = doc["tests"]
    assert t["name"] == FAILING_NODE and t["verdict"] == "FAIL" and t["runs"] == 2
    assert len(doc["attempts"]) == 2
    m = t["worst_metrics"]["(unnamed)"]
    assert (m["mismatched"], m["elements"], m["max_abs_diff"]) == (1, 4, 0.5)
    # the image's numpy (Debian bookworm's 1.24), not this process's: its 1.x message was read
    (c,) = doc["attempts"][0]["tests"][0]["comparisons"]
    frozen = doc["fingerprint"]["python_env"]
    assert frozen["packages"]["numpy"].startswith("1.") and numpy.__version__.startswith("2.")
    assert c["form"] == "numpy-1" and frozen["python"] != platform.python_version()
    # the variables as the container saw them: --env's and the image's own ENV line
    assert frozen["env"] == {"OMP_NUM_THREADS": "2", IMAGE_ENV[0]: IMAGE_ENV[1]}
    runner = doc["backend"]["runner"]
    assert runner["image"] == python_image and runner["devices"] == []
    assert runner["user"] == f"{os.getuid()}:{os.getgid()}"
    assert doc["backend"]["interpreter"] == "python3" and doc["fingerprint"]["image_id"]
    assert "--image" in doc["rerun"]


def test_image_s_container_is_removed_when_the_test_times_out(
    tmp_path: Path, run: Run, python_image: str
) -> None:
    proj = tmp_path / "hangs"
    (proj / "tests").mkdir(parents=True)
    (proj / "tests" / "test_hang.py").write_text(
        "import time\n\n\ndef test_hangs():\n    time.sleep(600)\n"
    )
    start = time.monotonic()
    code, out, err = run(
        "--pytest", "tests/test_hang.py::test_hangs", "--repo", str(proj), "--image", python_image,
        "--timeout", "3", "--record-dir", str(tmp_path / "rec"), "--json",
    )  # fmt: skip
    assert time.monotonic() - start < 120, err
    (t,) = json.loads(out)["tests"]
    assert t["verdict"] == "HANG", (code, err)
    left = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"volume={proj}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert left == ""  # the project's containers (the test's and the freeze's) are gone


def test_setup_with_an_image_is_one_line(project: Path, tmp_path: Path, run: Run) -> None:
    code, _out, err = run(
        "--pytest", FAILING_NODE, "--repo", str(project), "--image", "any:tag",
        "--setup", "pip install -e .", "--record-dir", str(tmp_path / "rec"),
    )  # fmt: skip
    assert code == ExitCode.USAGE and "--setup does not run in --image" in err
    assert not (tmp_path / "rec").exists()


def test_an_image_this_engine_lacks_is_one_line_and_nothing_is_written(
    project: Path, tmp_path: Path, run: Run
) -> None:
    need(docker_ok(), "no Docker engine answers (scripts/test.sh starts dockerd as root)")
    code, out, err = run(
        "--pytest", FAILING_NODE, "--repo", str(project), "--image", "lnrepro-test-absent:none",
        "--record-dir", str(tmp_path / "rec"),
    )  # fmt: skip
    assert code == ExitCode.ENVIRONMENT and out == "" and err.count("\n") == 1, err
    assert "image lnrepro-test-absent:none is not on this machine" in err
    assert not (tmp_path / "rec").exists()
