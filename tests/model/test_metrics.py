from __future__ import annotations

import math

import pytest

from lnrepro.model.metrics import MetricRules, validate_pattern


def test_bug_report_line() -> None:
    assert MetricRules().extract("dx FAILED: max_diff=1000, mean_diff=1004.21") == [
        ("dx", "max_diff", 1000.0),
        ("dx", "mean_diff", 1004.21),
    ]


def test_post_fix_line_and_tensor_forms() -> None:
    r = MetricRules()
    assert r.extract("max_abs_diff=1.06631") == [("(unnamed)", "max_abs_diff", 1.06631)]
    assert r.extract("dgamma: max_abs_diff=2.5e-3") == [("dgamma", "max_abs_diff", 0.0025)]
    assert math.isnan(r.extract("dbeta FAILED: max_abs_diff=nan")[0][2])


def test_allclose_tolerance() -> None:
    hits = MetricRules().extract(
        "Value of: xt::allclose(metal_dgamma_flat, dgamma_ref, 1.0e-2F, 1e-2F)"
    )
    assert hits == [("dgamma", "rtol", 0.01), ("dgamma", "atol", 0.01)]
    # variables instead of literals: no tolerance to report
    assert MetricRules().extract("Value of: xt::allclose(metal_dx_flat, dx_ref, rtol, atol)") == []


def test_configurable_keys_and_patterns() -> None:
    r = MetricRules(keys=("err",), extra_patterns=(r"PCC of (?P<tensor>\w+) = (?P<pcc>[0-9.]+)",))
    assert r.extract("out: err=3 max_diff=4") == [("out", "err", 3.0)]
    assert r.extract("PCC of dx = 0.98") == [("dx", "pcc", 0.98)]


@pytest.mark.parametrize(
    ("pattern", "ok"),
    [
        (r"(?P<x>\d+)", True),
        (r"(\d+)", False),
        (r"(?P<tensor>\w+)", False),
        (r"(", False),
        (r"(?P<a>x)(?P=a)", False),
    ],
)
def test_validate_pattern(pattern: str, ok: bool) -> None:
    assert (validate_pattern(pattern) is None) is ok


def test_a_metric_reported_twice_keeps_its_worst_value() -> None:
    from lnrepro.model.gtest import add_metric

    m: dict[str, dict[str, float]] = {}
    add_metric(m, "dx", "max_diff", 3.0)
    add_metric(m, "dx", "max_diff", 1000.0)
    add_metric(m, "dx", "max_diff", 7.0)
    assert m == {"dx": {"max_diff": 1000.0}}
    add_metric(m, "dx", "max_diff", float("nan"))
    add_metric(m, "dx", "max_diff", 5000.0)
    assert m["dx"]["max_diff"] != m["dx"]["max_diff"]  # NaN is the worst and stays


def test_non_finite_values_parse_and_every_metric_has_a_tensor() -> None:
    import math

    from lnrepro.model.metrics import UNNAMED

    rules = MetricRules()
    got = rules.extract("dx FAILED: max_diff=inf, mean_diff=-inf")
    assert got == [("dx", "max_diff", math.inf), ("dx", "mean_diff", -math.inf)]
    ((t, k, v),) = rules.extract("dgamma: max_abs_diff=NaN")
    assert (t, k) == ("dgamma", "max_abs_diff") and math.isnan(v)
    assert rules.extract("dx: max_diff=Infinity")[0][2] == math.inf
    assert rules.extract("dx: max_diff=information") == []  # a word, not a number
    assert rules.extract("dx: max_diff=1000f") == [("dx", "max_diff", 1000.0)]
    assert rules.extract("max_abs_diff=nan")[0][0] == UNNAMED  # never an empty name
    assert rules.extract("dx max_abs_diff=1.06631") == [("dx", "max_abs_diff", 1.06631)]


def test_a_pcc_is_worst_when_lowest() -> None:
    from lnrepro.model.gtest import add_metric

    m: dict[str, dict[str, float]] = {}
    for v in (0.9999, 0.71, 0.98):
        add_metric(m, "out", "pcc", v)
    add_metric(m, "dx", "max_diff", 3.0)
    add_metric(m, "dx", "max_diff", 1000.0)
    assert m == {"out": {"pcc": 0.71}, "dx": {"max_diff": 1000.0}}
