"""The PCC reader against each printed shape of tt-metal's comparison helpers (samples written
here in the documented formats; see lnrepro/pytests/pcc.py for the source files and commits)."""

from __future__ import annotations

import math

import pytest

from lnrepro.model.metrics import UNNAMED
from lnrepro.pytests.pcc import (
    MAX_ABS_DIFF,
    MAX_REL_DIFF,
    PCC,
    PccReading,
    call_threshold,
    parse_line,
    parse_output,
    parse_traceback,
    passes,
    strip_prefixes,
    summarize,
    verdict,
)

NAN = float("nan")
INF = float("inf")
U = UNNAMED


def triples(readings: list[PccReading]) -> list[tuple[str, str, float, float | None]]:
    return [(r.tensor, r.metric, r.value, r.threshold) for r in readings]


def same(
    a: list[tuple[str, str, float, float | None]], b: list[tuple[str, str, float, float | None]]
) -> bool:
    """Equal, NaN equal to NaN."""

    def key(t: tuple[str, str, float, float | None]) -> tuple[str, str, str, str]:
        return (t[0], t[1], repr(t[2]), repr(t[3]))

    return [key(x) for x in a] == [key(x) for x in b]


LINES: list[tuple[str, list[tuple[str, str, float, float | None]]]] = [
    # assert_with_pcc's bare message (utils_for_testing @cf646dc / @019b681)
    ("AssertionError: 0.6180339887498949", [(U, PCC, 0.6180339887498949, None)]),
    ("E       AssertionError: 7.62939453125e-05", [(U, PCC, 7.62939453125e-05, None)]),
    ("AssertionError: -0.00031415926535897", [(U, PCC, -0.00031415926535897, None)]),
    ("AssertionError: nan", [(U, PCC, NAN, None)]),
    ("AssertionError: tensor(nan)", [(U, PCC, NAN, None)]),
    ("AssertionError: tensor(0.25, dtype=torch.bfloat16)", [(U, PCC, 0.25, None)]),
    ("AssertionError: np.float64(0.4375)", [(U, PCC, 0.4375, None)]),
    ("AssertionError: 0.0 >= 0.9995", [(U, PCC, 0.0, 0.9995)]),
    # check_with_pcc_list joins its messages with ", "
    (
        "AssertionError: 0.99991, 0.8125",
        [("tensor0", PCC, 0.99991, None), ("tensor1", PCC, 0.8125, None)],
    ),
    # not a correlation, not a PCC helper's message
    ("AssertionError: 12.5", []),
    (
        "AssertionError: list(expected_pytorch_result.shape)=[1, 32] vs list(actual_pytorch_result.shape)=[32, 1]",
        [],
    ),
    ("AssertionError: Tensor-likes are not close!", []),
    # comp_pcc's value through str()/f-strings, old string-returning comp_pcc
    ("PCC: 0.9990234375", [(U, PCC, 0.9990234375, None)]),
    ("PCC: 1.0", [(U, PCC, 1.0, None)]),
    ("PCC: True", [(U, PCC, 1.0, None)]),
    ("PCC: False", [(U, PCC, 0.0, None)]),
    ("PCC: -inf", [(U, PCC, -INF, None)]),
    # comparison_funcs @073e2a7
    (
        "Max ATOL Delta: 0.0625, Max RTOL Delta: inf, PCC: 0.73046875, PCC check failed",
        [(U, MAX_ABS_DIFF, 0.0625, None), (U, MAX_REL_DIFF, INF, None), (U, PCC, 0.73046875, None)],
    ),
    (
        "Max ATOL Delta: nan, Max RTOL Delta: nan, PCC: 0.5, PCC check failed (target: 0.999)",
        [(U, MAX_ABS_DIFF, NAN, None), (U, MAX_REL_DIFF, NAN, None), (U, PCC, 0.5, 0.999)],
    ),
    (
        "Tensor 0: Max ATOL Delta: 0.5, Max RTOL Delta: 0.125, PCC: 0.9999 "
        "Tensor 1: Max ATOL Delta: 2.0, Max RTOL Delta: 4.0, PCC: 0.6 , PCC check failed",
        [
            ("tensor0", MAX_ABS_DIFF, 0.5, None),
            ("tensor0", MAX_REL_DIFF, 0.125, None),
            ("tensor0", PCC, 0.9999, None),
            ("tensor1", MAX_ABS_DIFF, 2.0, None),
            ("tensor1", MAX_REL_DIFF, 4.0, None),
            ("tensor1", PCC, 0.6, None),
        ],
    ),
    # comp_allclose / comp_equal (models/*utility_functions.py), oldest comp_equal
    (
        "Max ATOL Delta: 8589934592.0, Max RTOL Delta: 2.0",
        [(U, MAX_ABS_DIFF, 8589934592.0, None), (U, MAX_REL_DIFF, 2.0, None)],
    ),
    ("Max Absolute Delta: 0.375", [(U, MAX_ABS_DIFF, 0.375, None)]),
    ("Max ULP Delta: 3.0 @ [0, 1] = |1.0 - 1.5| / 0.0078125", []),
    # comp_allclose_and_pcc: ", <pcc>" (@c6ab5b0, @a19b16a) and ", pcc=<pcc>" (@022e2c5)
    (
        "Max ATOL Delta: 0.25, Max RTOL Delta: 0.5, 0.9873046875",
        [(U, MAX_ABS_DIFF, 0.25, None), (U, MAX_REL_DIFF, 0.5, None), (U, PCC, 0.9873046875, None)],
    ),
    (
        "Max ATOL Delta: 0.25, Max RTOL Delta: 0.5, pcc=0.9873046875",
        [(U, MAX_ABS_DIFF, 0.25, None), (U, MAX_REL_DIFF, 0.5, None), (U, PCC, 0.9873046875, None)],
    ),
    # tests' own lines name the tensor
    ("dx PCC: 0.96875", [("dx", PCC, 0.96875, None)]),
    ("PCC for dgamma: 0.9375", [("dgamma", PCC, 0.9375, None)]),
    ("PCC of dbeta = 0.90625", [("dbeta", PCC, 0.90625, None)]),
    ("layer_norm_out_pcc=0.9921875", [("layer_norm_out", PCC, 0.9921875, None)]),
    ("attn-output min PCC 0.8671875 < 0.87", [("attn-output", PCC, 0.8671875, 0.87)]),
    ("pcc 0.87 < required 0.99", [(U, PCC, 0.87, 0.99)]),
    ("dx: PCC 0.8125 below expected pcc 0.99", [("dx", PCC, 0.8125, 0.99)]),
    (
        "dgamma: Max ATOL Delta: 0.5, Max RTOL Delta: 0.25",
        [("dgamma", MAX_ABS_DIFF, 0.5, None), ("dgamma", MAX_REL_DIFF, 0.25, None)],
    ),
    ("Got PCC 0.75", [(U, PCC, 0.75, None)]),
    # comp_pcc's tuple, logged (numpy 2 repr) on a line that mentions PCC
    ("comp_pcc -> (False, np.float64(0.8359375))", [(U, PCC, 0.8359375, None)]),
    ("(False, 0.8359375)", []),  # no word PCC on the line: any tuple
    # log prefixes: loguru, pytest's caplog, GitHub Actions + MPI rank
    (
        "2026-02-03 04:05:06.789 | INFO     | tests.ttnn.test_ln:test_ln:42 - dx PCC: 0.5",
        [("dx", PCC, 0.5, None)],
    ),
    ("WARNING  ttnn:test_ln.py:42 dbeta PCC: 0.25", [("dbeta", PCC, 0.25, None)]),
    ("2026-02-03T04:05:06.1234567Z [1,0]<stderr>: PCC: 0.125", [(U, PCC, 0.125, None)]),
    # never PCC
    ("Cosine simmilarity: 0.98", []),
    ("TorchTensor(0.980, dtype=torch.bfloat16)", []),
    ("PCC check failed", []),
    ("", []),
]


@pytest.mark.parametrize(("line", "expected"), LINES, ids=[f"L{i}" for i in range(len(LINES))])
def test_parse_line(line: str, expected: list[tuple[str, str, float, float | None]]) -> None:
    got = triples(parse_line(line))
    assert same(got, expected), (line, got)


def test_bare_assertion_can_be_turned_off() -> None:
    assert parse_line("AssertionError: 0.5", bare_assertion=False) == []
    assert parse_line("AssertionError: 0.5")[0].form == "assertion"


def test_strip_prefixes() -> None:
    assert strip_prefixes(
        "2026-02-03 04:05:06.789 | ERROR    | m:f:1 - One tensor is all zero"
    ) == ("One tensor is all zero")
    assert strip_prefixes("E       AssertionError: 0.5") == "AssertionError: 0.5"
    assert strip_prefixes("Expected") == "Expected"  # the oldest helper's label, not "E   "


def test_parse_output_keeps_every_line() -> None:
    text = "PCC: 0.99\nnothing here\ndx PCC: 0.5\r\nMax ATOL Delta: 1.0, Max RTOL Delta: 2.0\n"
    got = triples(parse_output(text))
    assert got == [
        (U, PCC, 0.99, None),
        ("dx", PCC, 0.5, None),
        (U, MAX_ABS_DIFF, 1.0, None),
        (U, MAX_REL_DIFF, 2.0, None),
    ]


# a long pytest report of assert_with_pcc failing (the helper's module is not rewritten)
TRACEBACK = """\
device = <Device 0>, shape = [1, 32, 64]

    def test_layer_norm(device, shape):
        torch_out = reference(shape)
>       assert_with_pcc(torch_out, run(device, shape), 0.9995)

tests/ttnn/test_ln.py:21:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

expected_pytorch_result = tensor([[0.5]]), actual_pytorch_result = tensor([[0.25]])
pcc = 0.9995

    def assert_with_pcc(expected_pytorch_result, actual_pytorch_result, pcc=0.9999):
        pcc_passed, pcc_message = comp_pcc(expected_pytorch_result, actual_pytorch_result, pcc)
>       assert pcc_passed, construct_pcc_assert_message(pcc_message, expected_pytorch_result, actual_pytorch_result)
E       AssertionError: 0.7071067811865476

tests/ttnn/utils_for_testing.py:30: AssertionError"""


def test_traceback_threshold_from_the_failing_frame_arguments() -> None:
    got = triples(parse_traceback(TRACEBACK))
    assert got == [(U, PCC, 0.7071067811865476, 0.9995)], "never the def line's default 0.9999"


def test_traceback_threshold_from_the_failing_call_when_no_arguments_are_shown() -> None:
    short = "\n".join(
        ln for ln in TRACEBACK.splitlines() if not ln.startswith(("expected_pytorch", "pcc = "))
    )
    assert triples(parse_traceback(short)) == [(U, PCC, 0.7071067811865476, 0.9995)]


def test_traceback_rewritten_comparison_gives_the_threshold() -> None:
    text = (
        "    def test_x():\n        pcc = measure()\n>       assert pcc >= 0.985\n"
        "E       assert 0.5 >= 0.985\n\ntests/test_x.py:3: AssertionError"
    )
    got = parse_traceback(text)
    assert triples(got) == [(U, PCC, 0.5, 0.985)]
    assert got[0].form == "compare"


def test_traceback_rewritten_comparison_of_something_else_is_not_pcc() -> None:
    text = ">       assert ulp <= 2.0\nE       assert 0.5 <= 2.0\n\nt.py:3: AssertionError"
    assert parse_traceback(text) == []


def test_traceback_bare_number_needs_a_pcc_helper_in_sight() -> None:
    text = ">       assert ok, err\nE       AssertionError: 0.5\nE       assert False\n\nt.py:9: AssertionError"
    assert parse_traceback(text) == []
    with_helper = text.replace("assert ok, err", "assert ok, err  # check_with_pcc")
    assert triples(parse_traceback(with_helper)) == [(U, PCC, 0.5, None)]


def test_traceback_without_e_lines_is_read_as_output() -> None:
    assert triples(parse_traceback("[XPASS(strict)] PCC: 0.5 now")) == [(U, PCC, 0.5, None)]


def test_traceback_source_lines_are_not_readings() -> None:
    text = (
        '    def test_x():\n        logger.info("PCC: 0.1")\n>       assert False, "PCC: 0.75"\n'
        "E       AssertionError: PCC: 0.75\n\nt.py:3: AssertionError"
    )
    assert triples(parse_traceback(text)) == [(U, PCC, 0.75, None)]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("assert_with_pcc(a, b, 0.999)", 0.999),
        ("assert_with_pcc(a, b, pcc=0.98)", 0.98),
        ("ttu.assert_with_pcc(\n    f(a, [1, 2]),\n    b,\n    pcc=0.97,\n)", 0.97),
        ("passing, msg = check_with_pcc_without_tensor_printout(x, y, 0.96)", 0.96),
        ("ok, out = comp_allclose_and_pcc(g, c, 1e-05, 1e-08, 0.95)", 0.95),
        ("ok, out = comp_allclose_and_pcc(g, c, 0.5)", None),  # rtol, not pcc
        ("assert_with_pcc(a, b, pcc=threshold)", None),
        ("assert_with_pcc(a, b)", None),
        ("def assert_with_pcc(expected, actual, pcc=0.9999):", None),
        ("assert_with_pcc(a, b, pcc=0.9", None),  # never closes
        ("comp_pcc(g, c, 0.99) and comp_pcc(g, c, 0.9)", 0.9),
    ],
)
def test_call_threshold(source: str, expected: float | None) -> None:
    assert call_threshold(source) == expected


def test_summarize_keeps_the_worst_and_its_threshold() -> None:
    readings = [
        PccReading("dx", PCC, 0.99, 0.9),
        PccReading("dx", PCC, 0.5, 0.95),
        PccReading("dx", PCC, 0.7, 0.999),
        PccReading("dx", MAX_ABS_DIFF, 0.25),
        PccReading("dx", MAX_ABS_DIFF, 0.125),
        PccReading(U, PCC, 0.8),
    ]
    metrics, thresholds = summarize(readings)
    assert metrics == {"dx": {PCC: 0.5, MAX_ABS_DIFF: 0.25}, U: {PCC: 0.8}}
    assert thresholds == {"dx": 0.95}


def test_summarize_nan_is_the_worst_pcc() -> None:
    metrics, thresholds = summarize([PccReading(U, PCC, 0.5), PccReading(U, PCC, NAN, 0.99)])
    assert math.isnan(metrics[U][PCC])
    assert thresholds == {U: 0.99}


@pytest.mark.parametrize(
    ("value", "required", "ok", "text"),
    [
        (0.87, 0.99, False, "pcc 0.87 < required 0.99"),
        (0.99995, 0.9999, True, "pcc 0.99995 >= required 0.9999"),
        (0.9999, 0.9999, True, "pcc 0.9999 >= required 0.9999"),
        (0.99989999, 0.9999, False, "pcc 0.99989999 < required 0.9999"),
        (NAN, 0.99, False, "pcc nan (not a number: fails any threshold, required 0.99)"),
        (0.87, None, None, "pcc 0.87 (required value not stated)"),
        (-2.5e-05, 0.5, False, "pcc -2.5e-05 < required 0.5"),
    ],
)
def test_verdict(value: float, required: float | None, ok: bool | None, text: str) -> None:
    assert passes(value, required) is ok
    assert verdict(value, required) == text
