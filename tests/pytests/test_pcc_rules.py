"""The rules of lnrepro.pytests.pcc that decide what a user is told, one by one: how a NaN PCC
is judged, how a long number is shown beside its threshold, which threshold goes with a tensor."""

from __future__ import annotations

from lnrepro.model.metrics import UNNAMED
from lnrepro.pytests.pcc import (
    MAX_ABS_DIFF,
    PCC,
    PccReading,
    _is_correlation,
    _literal,
    _show,
    _tensor_name,
    passes,
    strip_prefixes,
    summarize,
    verdict,
)

NAN = float("nan")


def test_a_nan_pcc_fails_with_or_without_a_stated_threshold() -> None:
    assert passes(NAN, None) is False
    assert passes(NAN, 0.5) is False
    assert verdict(NAN, None) == "pcc nan (not a number: fails any threshold)"
    assert verdict(NAN, 0.123456789) == (
        "pcc nan (not a number: fails any threshold, required 0.123457)"
    )
    assert verdict(0.123456789, None) == "pcc 0.123457 (required value not stated)"


def test_a_long_number_is_shortened_but_never_crosses_its_threshold() -> None:
    assert _show(0.5, 0.9) == "0.5"
    assert _show(0.123456789012, 0.9) == "0.123457"
    # six digits would round 0.99989999 up to the threshold: more digits until it differs
    assert _show(0.9998999999, 0.9999) == "0.9998999999"
    assert _show(0.99990000001, 0.9999) == "0.99990000001"
    assert _show(0.1234567891234, 0.1234567891234) == "0.1234567891234"  # equal stays equal
    assert verdict(0.9998999999, 0.9999) == "pcc 0.9998999999 < required 0.9999"


def test_a_threshold_goes_with_the_tensors_worst_pcc_or_its_first_stated() -> None:
    metrics, thresholds = summarize(
        [PccReading("a", PCC, 0.5), PccReading("a", PCC, 0.9, 0.95), PccReading("b", PCC, 0.9, 0.8)]
    )
    assert metrics == {"a": {PCC: 0.5}, "b": {PCC: 0.9}}
    assert thresholds == {"a": 0.95, "b": 0.8}  # not the worst's (none stated): the one stated
    _, thresholds = summarize([PccReading("a", PCC, 0.9, 0.95), PccReading("a", PCC, 0.95, 0.99)])
    assert thresholds == {"a": 0.95}  # a better reading's threshold does not replace it
    _, thresholds = summarize([PccReading("a", MAX_ABS_DIFF, 3.0, 0.5)])
    assert thresholds == {}  # a delta has no PCC threshold


def test_what_is_a_correlation_and_a_literal() -> None:
    assert _is_correlation(1.000001) and _is_correlation(-1.000001) and _is_correlation(NAN)
    assert not _is_correlation(1.00001) and not _is_correlation(-1.00001)
    assert _literal(" 0.5 ") == 0.5 and _literal("True") is None and _literal("x") is None
    assert _literal("False") is None and _literal("1e-3") == 0.001


def test_words_that_are_not_a_tensors_name() -> None:
    for word in (
        "min",
        "Expected",
        "AssertionError",
        "pcc_value",
        "RuntimeError",
        "MyException",
        None,
        "",
    ):
        assert _tensor_name(word) == UNNAMED
    assert _tensor_name("dx") == "dx"
    assert _tensor_name("decoder-output") == "decoder-output"


def test_the_prefixes_of_a_log_line() -> None:
    assert strip_prefixes("2026-01-01T06:09:12.43Z [1,0]<stderr>: PCC: 0.5\r\n") == "PCC: 0.5"
    assert strip_prefixes("2026-01-01 06:08:53.672 | INFO     | m:f:12 - PCC: 0.5") == "PCC: 0.5"
    assert strip_prefixes("WARNING  root:t.py:12 PCC: 0.5") == "PCC: 0.5"
    assert strip_prefixes("E") == ""
    assert strip_prefixes("  x  ") == "x"
