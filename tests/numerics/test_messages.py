"""The numerics libraries' failure messages, read as metrics: every message here was printed by
the real library (numpy and pytest live in this test; numpy 1.26/2.0 and torch 2.13 from the
samples in ``samples/``, made by the scripts beside them)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_almost_equal, assert_array_equal

from lnrepro.model.numerics import Comparison, Form
from lnrepro.numerics.messages import read_message, read_report

SAMPLES = Path(__file__).parent / "samples"


def sample(name: str) -> dict[str, str]:
    """``case -> message`` of one sample file."""
    text = (SAMPLES / name).read_text()
    out = {}
    for block in text.split("==== ")[1:]:
        case, _, body = block.partition("\n")
        out[case.strip()] = body
    return out


def one(text: str) -> Comparison:
    found = read_message(text)
    assert len(found) == 1, found
    return found[0]


def message(fn: object) -> str:
    with pytest.raises(AssertionError) as info:
        fn()  # type: ignore[operator]
    return str(info.value)


# ---- torch (2.13, the CPU build) -------------------------------------------------------------
def test_torch_tensors_give_counts_greatest_differences_where_and_tolerances() -> None:
    c = one(sample("torch-2.13.0.txt")["tensors_2x2"])
    assert c.form is Form.TORCH_TENSORS and c.header == "Tensor-likes are not close!"
    assert (c.mismatched, c.total) == (1, 4)
    assert c.max_abs_diff == 0.010000228881835938 and c.abs_index == (1, 1)
    assert c.max_rel_diff == 0.0025000572204589844 and c.rel_index == (1, 1)
    assert (c.rtol, c.atol) == (1.3e-06, 1e-05)


def test_torch_zero_point_zero_percent_is_154_mismatches_not_none() -> None:
    c = one(sample("torch-2.13.0.txt")["tensors_154_of_10M"])
    assert "(0.0%)" in sample("torch-2.13.0.txt")["tensors_154_of_10M"]
    assert (c.mismatched, c.total) == (154, 10_000_000)
    assert c.max_abs_diff == 0.5 and c.abs_index == (7000,)
    assert c.max_rel_diff is not None and math.isinf(c.max_rel_diff) and c.rel_index == (0,)
    assert c.metrics()["mismatched"] == 154


def test_torch_equality_has_zero_tolerances_and_scalars_read_expected_and_got() -> None:
    s = sample("torch-2.13.0.txt")
    eq = one(s["equal"])
    assert eq.header.endswith("not equal!") and (eq.rtol, eq.atol) == (0.0, 0.0)
    sc = one(s["scalars"])
    assert sc.form is Form.TORCH_SCALARS and (sc.mismatched, sc.total) == (1, 1)
    assert (sc.expected, sc.actual, sc.max_abs_diff, sc.max_rel_diff) == (1.0, 1.5, 0.5, 0.5)
    assert (sc.rtol, sc.atol) == (1e-07, 1e-07)


def test_torch_nested_items_name_the_item() -> None:
    s = sample("torch-2.13.0.txt")
    assert one(s["nested_list"]).item == "[1]"
    c = one(s["nested_dict"])
    assert c.item == "['g'][1]" and c.tensor == "['g'][1]"


def test_torch_older_testcase_sentence() -> None:
    # the sentence PyTorch's TestCase printed before assert_close (its test_torch.py spells it)
    text = (
        "AssertionError: False is not true : Tensors failed to compare as equal!With rtol=1e-05 "
        "and atol=1e-05, found 171 element(s) (out of 196608) whose difference(s) exceeded the "
        "margin of error (including 0 nan comparisons). The greatest difference was "
        "0.00031512975692749023 (0.5294076800346375 vs. 0.52909255027771), which occurred at "
        "index (0, 1, 230, 138)."
    )
    c = one(text)
    assert c.form is Form.TORCH_TESTCASE and (c.mismatched, c.total) == (171, 196608)
    assert c.max_abs_diff == 0.00031512975692749023 and c.abs_index == (0, 1, 230, 138)
    assert (c.actual, c.expected, c.rtol, c.atol) == (
        0.5294076800346375,
        0.52909255027771,
        1e-5,
        1e-5,
    )
    flat = text.replace("index (0, 1, 230, 138)", "index 127")
    assert one(flat).abs_index == (127,)


# ---- numpy: 1.x, 2.0, 2.4 --------------------------------------------------------------------
def test_numpy_1_takes_the_maxima_over_every_element_and_2_0_over_violations_only() -> None:
    old = one(sample("numpy-1.26.4.txt")["allclose_violations_only"])
    new = one(sample("numpy-2.0.2.txt")["allclose_violations_only"])
    assert old.form is Form.NUMPY_1 and old.over_violations is False
    assert new.form is Form.NUMPY_2 and new.over_violations is True
    # the same data: 1.x counts the allowed 100 vs 100.6, 2.0 only the violating 1.0 vs 1.5
    assert (old.max_abs_diff, new.max_abs_diff) == (0.6, 0.5)
    for c in (old, new):
        assert (c.mismatched, c.total, c.rtol, c.atol) == (1, 3, 0.01, 0.0)


@pytest.mark.parametrize("version", ["1.26.4", "2.0.2", "2.4.6"])
def test_numpy_counts_are_read_whatever_the_percentage_says(version: str) -> None:
    c = one(sample(f"numpy-{version}.txt")["allclose_154_of_1M"])
    assert (c.mismatched, c.total, c.rtol, c.atol) == (154, 1_000_000, 1e-05, 0.001)
    assert c.max_abs_diff == 0.5


def test_numpy_2_4_lists_where_the_first_mismatches_are() -> None:
    s = sample("numpy-2.4.6.txt")
    c = one(s["allclose_154_of_1M"])
    assert c.form is Form.NUMPY_2_4
    assert c.mismatch_indices == ((0,), (6000,), (12000,), (18000,), (24000,))
    assert one(s["array_equal"]).mismatch_indices == ((1, 2),)


@pytest.mark.parametrize("version", ["1.26.4", "2.0.2", "2.4.6"])
def test_numpy_almost_equal_and_equal_give_their_tolerances(version: str) -> None:
    s = sample(f"numpy-{version}.txt")
    ae = one(s["almost_equal"])
    assert ae.decimal == 4 and ae.allowed == pytest.approx(1.5e-4)
    eq = one(s["array_equal_many"])
    assert (eq.mismatched, eq.total, eq.max_abs_diff, eq.rtol, eq.atol) == (19, 20, 19.0, 0.0, 0.0)


def test_numpy_nan_location_mismatch_has_no_numbers() -> None:
    for version in ("1.26.4", "2.0.2"):
        c = one(sample(f"numpy-{version}.txt")["allclose_nan"])
        assert c.note == "nan location mismatch" and c.mismatched is None


def test_the_installed_numpy_s_own_messages_read() -> None:
    """Made live by this machine's numpy, whatever its version."""
    c = one(message(lambda: assert_allclose(np.array([1.0, 2.0, 3.0]), [1.0, 2.5, 3.0])))
    assert (c.mismatched, c.total, c.max_abs_diff, c.max_rel_diff) == (1, 3, 0.5, 0.2)
    assert c.rtol == 1e-07
    c = one(message(lambda: assert_array_almost_equal([1.0, 2.0], [1.0, 2.1], decimal=3)))
    assert c.decimal == 3 and (c.mismatched, c.total) == (1, 2)
    big = np.zeros(10_000_000, dtype=np.float32)
    bad = big.copy()
    bad[::100_000] = 1.0
    c = one(message(lambda: assert_array_equal(bad, big)))
    assert (c.mismatched, c.total, c.max_abs_diff) == (100, 10_000_000, 1.0)


def test_jax_and_tensorflow_print_numpy_s_message_inside_their_own_lines() -> None:
    """JAX calls numpy's assert_allclose; TensorFlow prints its lines, then numpy's."""
    inner = sample("numpy-2.0.2.txt")["allclose_2x2"]
    tf = "not close where = (array([1]), array([1]))\nnot close lhs = [4.01]\n" + inner
    c = one(tf)
    assert (c.mismatched, c.total, c.max_abs_diff) == (1, 4, 0.01)


# ---- pytest.approx (made live: this module's asserts are rewritten by pytest) ----------------
def test_pytest_approx_scalar() -> None:
    text = message(lambda: _approx_scalar())
    c = one(text)
    assert c.form is Form.PYTEST_APPROX and (c.actual, c.expected) == (1.1, 1.0)
    assert c.allowed == 1e-06 and c.max_abs_diff == pytest.approx(0.1)


def _approx_scalar() -> None:
    assert 1.1 == pytest.approx(1.0)  # noqa: SIM300 (obtained first, as tests write it)


def _approx_array() -> None:
    assert np.array([[1.0, 2.0], [3.0, 4.0]]) == pytest.approx(np.array([[1.0, 2.0], [3.0, 4.01]]))


def test_pytest_approx_array_table() -> None:
    c = one(message(_approx_array))
    assert (c.mismatched, c.total) == (1, 4) and c.abs_index == (1, 1)
    assert (
        c.max_abs_diff == pytest.approx(0.01) and c.allowed == 4.0e-06
    )  # as printed: "4.01 ± 4.0e-06"


# ---- in a pytest report, and tt-metal's PCC ----------------------------------------------------
def test_a_pytest_report_is_read_from_its_e_lines_only() -> None:
    body = sample("torch-2.13.0.txt")["tensors_154_of_10M"]
    report = (
        "def test_x():\n"
        ">       torch.testing.assert_close(a, b)\n"
        + "\n".join(
            "E       " + ("AssertionError: " if i == 0 else "") + ln
            for i, ln in enumerate(body.splitlines())
        )
        + "\n\ntests/test_x.py:12: AssertionError\n"
    )
    (c,) = read_report(report)
    assert (c.mismatched, c.total, c.max_abs_diff) == (154, 10_000_000, 0.5)


def test_pcc_messages_become_comparisons_through_the_pcc_reader() -> None:
    report = (
        ">       assert_with_pcc(expected, actual, 0.999)\n"
        "E       AssertionError: 0.61\n"
        "tests/ttnn/test_ln.py:30: AssertionError\n"
    )
    (c,) = read_report(report)
    assert c.form is Form.PCC and c.pcc == 0.61 and c.pcc_threshold == 0.999


def test_text_of_no_library_gives_nothing() -> None:
    assert read_message("AssertionError: assert 3 == 4") == []
    assert read_message("Tensor-likes are not close!\n\nsomething else entirely") == []
