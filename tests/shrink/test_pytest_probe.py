"""Shrink of a ttnn op's pytest: the start read from the test file, the tiled rows, the control,
and the look-alike's ttnn side shrunk through the pytest probe (host, no Docker, no compiler:
the look-alike's ttnn reads its kernels' numbers from source, so the build is ``true``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from lnrepro.model.case import Axis, Case, DataKind, DataSpec, OpKind, Shape
from lnrepro.shrink import emit_pytest, pytest_probe, space
from lnrepro.shrink.emit import Flavour
from lnrepro.shrink.ttnn_data import lnrepro_case_input
from tests.conftest import worktree
from tests.harness import assert_one_line_error, lnrepro
from tests.lookalike import PCC_TEST

FUSED_TEST = (
    "tests/ttnn/unit_tests/operations/test_layernorm_fused_rm.py::test_layernorm_fused_rm[8x8]"
)

TREE = Path(__file__).resolve().parents[1] / "lookalike" / "tree"


def _case(h: int, w: int, kind: DataKind, variant: str) -> Case:
    return Case(
        Shape(1, h, 1, w), DataSpec(kind, variant), (), "t", op=OpKind.TTNN_LAYER_NORM, pcc=0.9999
    )


def test_the_start_is_read_from_the_test_file() -> None:
    case = pytest_probe.start_case(TREE, PCC_TEST)
    assert (case.shape.seq, case.shape.features, case.pcc) == (64, 1024, 0.9999)
    assert case.op is OpKind.TTNN_LAYER_NORM and case.data.kind is DataKind.RANDOM
    assert case.shape_label == "64x1024"
    # the case's JSON round-trips with its op and threshold; a gtest case's JSON has no op
    assert Case.from_env_value(case.env_value()) == case
    assert "op" not in json.loads(_gtest_case().env_value())


def _gtest_case() -> Case:
    from lnrepro.model.case import TENSORS, Tolerance

    tol = tuple((t, Tolerance(0.01, 0.05)) for t in TENSORS)
    return Case(Shape(1, 1, 1, 32), DataSpec(DataKind.CONSTANT, "bugrepro"), tol)


def test_a_ttnn_op_s_rows_go_by_whole_tiles() -> None:
    s = Shape(1, 96, 1, 64)
    assert space.ladder(Axis.SEQ, s, 0, tiled_rows=True) == [32, 64]
    assert space.ladder(Axis.SEQ, s, 0) == list(range(1, 96))
    steps = {(n.axis, n.value) for n in space.neighbours(s, 0, tiled_rows=True)}
    assert steps == {(Axis.FEATURES, 32), (Axis.SEQ, 64)}
    assert space.lower_bound(Shape(1, 32, 1, 32), Axis.SEQ, tiled_rows=True)


def test_the_control_passes_what_a_correct_layer_norm_passes() -> None:
    for kind, variant in [
        (DataKind.FEW_VALUED, "two-valued"),
        (DataKind.STRUCTURED, "ramp"),
        (DataKind.RANDOM, "uniform"),
        (DataKind.CONSTANT, "bugrepro"),
    ]:
        assert pytest_probe.correct_pcc(_case(64, 1024, kind, variant)) >= 0.9999, kind


def test_the_probe_source_parses_in_both_flavours() -> None:
    for flavour in Flavour:
        text = pytest_probe.probe_source(flavour)
        compile(text, pytest_probe.PATH, "exec")
        assert "assert_with_pcc(expected, output, threshold)" in text
    assert "torch.nn.functional.layer_norm" in pytest_probe.probe_source(Flavour.TT_METAL)


def test_the_emitted_input_is_the_probe_s() -> None:
    import numpy as np

    for kind, variant in [
        (DataKind.CONSTANT, "bugrepro"),
        (DataKind.FEW_VALUED, "two-valued"),
        (DataKind.STRUCTURED, "ramp"),
        (DataKind.RANDOM, "uniform"),
    ]:
        case = _case(64, 96, kind, variant)
        got = eval(emit_pytest.input_expr(case), {"np": np, "h": 64, "w": 96})
        want = lnrepro_case_input(json.loads(case.env_value()))
        assert got.dtype == np.float32 and np.array_equal(got, want), kind


def test_the_emitted_tt_metal_test_is_in_test_layer_norm_py_s_style() -> None:
    case = _case(32, 64, DataKind.FEW_VALUED, "two-valued")
    text = emit_pytest.source(case, Flavour.TT_METAL)
    compile(text, "shrunk.py", "exec")
    for line in (
        "from tests.ttnn.utils_for_testing import assert_with_pcc",
        '@pytest.mark.parametrize("h", [32])',
        '@pytest.mark.parametrize("w", [64])',
        f"def {emit_pytest.test_name(case)}(device, h, w):",
        "    torch_output_tensor = torch.nn.functional.layer_norm(torch_input_tensor, "
        "normalized_shape=[w])",
        "    output_tensor = ttnn.layer_norm(input_tensor)",
        "    assert_with_pcc(torch_output_tensor, output_tensor, 0.9999)",
    ):
        assert line in text.splitlines(), line


def shrink_pytest(tree: Path, tmp: Path, *extra: str) -> tuple[int, Any]:
    """``lnrepro shrink --pytest`` on the look-alike at ``tree``, on this host; the JSON."""
    (tmp / "lnrepro.toml").write_text(
        '[profiles.py]\nbuild = [["true"]]\nbinary = "conftest.py"\n', encoding="utf-8"
    )
    code, printed, err = lnrepro(
        "shrink",
        "--pytest",
        PCC_TEST,
        "--tt-metal",
        tree,
        "--runner",
        "local",
        "--profile",
        "py",
        "--python",
        sys.executable,
        "--source-for",
        "lookalike",
        "--start-runs",
        "1",
        "--record-dir",
        tmp / "runs",
        "--json",
        *extra,
    )
    (tmp / "out.json").write_text(printed)
    assert printed, (code, err[-2000:])
    return code, json.loads(printed)


@pytest.mark.timeout(600)
def test_the_lookalike_s_pcc_regression_shrinks_to_one_tile(
    lookalike: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = worktree(lookalike, tmp_path / "bad", lookalike.pcc_culprit)
    monkeypatch.chdir(tmp_path)
    code, doc = shrink_pytest(bad, tmp_path, "--source", str(tmp_path / "test_shrunk.py"))
    assert code == 1, doc
    assert doc["evaluator"] == "checkout-pytest" and (bad / pytest_probe.PATH).is_file()
    case = doc["case"]
    assert case["op"] == "ttnn.layer_norm" and case["pcc"] == 0.9999
    assert (case["seq"], case["features"], case["data"]["kind"]) == (32, 32, "few-valued")
    assert doc["margin"] >= 100  # 1 - PCC at least 100x 1 - 0.9999
    assert set(doc["lower_bounds"]) == {"features", "seq", "batch", "heads"}
    # the rerun line runs the probe on exactly that case, from any directory
    import subprocess

    ran = subprocess.run(doc["rerun"], capture_output=True, text=True, cwd=tmp_path)
    assert ran.returncode == 1 and "lnrepro-probe: margin=" in ran.stdout, ran.stdout[-2000:]

    # the emitted test fails at the culprit and passes at its parent, in the look-alike's tree
    from tests.lookalike.test_ttnn_side import pytest_in

    emitted = Path(doc["source"])
    fp = lookalike.first_parent
    good = worktree(lookalike, tmp_path / "good", fp[fp.index(lookalike.pcc_culprit) - 1])
    node = "tests/ttnn/unit_tests/operations/test_shrunk.py"
    for tree in (bad, good):
        (tree / node).write_text(emitted.read_text(encoding="utf-8"), encoding="utf-8")
    failed = pytest_in(bad, node)
    assert failed.returncode == 1 and "AssertionError: " in failed.stdout, failed.stdout[-2000:]
    passed = pytest_in(good, node)
    assert passed.returncode == 0, passed.stdout[-2000:]


def test_the_console_names_a_pytest_start_by_its_test() -> None:
    from lnrepro.present.shrink import _start_name

    assert _start_name(PCC_TEST) == "test_layer_norm[64-1024]"
    assert _start_name("LayerNormBackwardOpTest.NIGHTLY_X") == "NIGHTLY_X"


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        ([], "--pytest needs a tt-metal checkout"),
        (["--tt-metal", str(TREE), "--test", "NIGHTLY_*"], "--pytest starts on its own"),
        (
            ["--tt-metal", str(TREE), "--pytest-id", FUSED_TEST],
            "does not call ttnn.layer_norm",
        ),
        (
            ["--tt-metal", str(TREE), "--pytest-id", PCC_TEST.replace("[64-1024]", "")],
            "cannot read h and w",
        ),
    ],
)
def test_a_pytest_start_that_cannot_be_shrunk_is_one_line_with_the_fix(
    argv: list[str], says: str
) -> None:
    node = PCC_TEST
    if "--pytest-id" in argv:
        node = argv.pop(argv.index("--pytest-id") + 1)
        argv.remove("--pytest-id")
    local = ["--runner", "local"] if "--tt-metal" in argv else []
    assert_one_line_error(lnrepro("shrink", "--pytest", node, *local, *argv), 2, says)


def test_a_ttnn_case_needs_its_threshold_and_a_gtest_case_its_tolerances() -> None:
    from lnrepro.errors import LnreproError

    ttnn_case = json.loads(_case(32, 32, DataKind.RANDOM, "uniform").env_value())
    del ttnn_case["pcc"]
    with pytest.raises(LnreproError, match="pcc"):
        Case.from_env_value(json.dumps(ttnn_case))
    gtest_case = json.loads(_gtest_case().env_value())
    del gtest_case["tolerance"]
    with pytest.raises(LnreproError, match="tolerance"):
        Case.from_env_value(json.dumps(gtest_case))
