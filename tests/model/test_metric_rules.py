"""The rules of lnrepro.model.metrics, one by one: which number on a log line belongs to which
tensor and metric, what a user pattern may be, and the words a bad one is refused with."""

from __future__ import annotations

import re

import pytest

from lnrepro.model.metrics import UNNAMED, MetricRules, _num, validate_pattern


def test_trigger_patterns_are_the_literal_cores_and_the_users_patterns_unnamed() -> None:
    assert MetricRules().trigger_patterns() == [b"_diff"]
    rules = MetricRules(keys=("err", "max_diff"), extra_patterns=(r"PCC (?P<pcc>\d+)",))
    assert rules.trigger_patterns() == [b"err", b"_diff", b"PCC (?:\\d+)"]
    # escaped: a key with a regex character finds itself only
    assert MetricRules(keys=("a.b",)).trigger_patterns() == [re.escape(b"a.b")]


def test_a_variable_name_maps_to_its_tensor() -> None:
    r = MetricRules()
    assert r.tensor_name("metal_dx_flat") == "dx"
    assert r.tensor_name("ns::inner::metal_dx_flat") == "dx"
    assert r.tensor_name("a.b.tt_dgamma_ref") == "dgamma"
    assert r.tensor_name("self.grads.device_out_expected") == "out"
    assert r.tensor_name("x::y.z::tt_w") == "w"
    # a name that is only a prefix or a suffix stays whole
    assert r.tensor_name("metal_") == "metal_"
    assert r.tensor_name("_flat") == "_flat"
    assert r.tensor_name("dx") == "dx"


def test_a_line_without_a_metric_core_is_not_searched() -> None:
    r = MetricRules()
    assert r.extract("nothing to see: max=3") == []
    # one core is enough, whatever else the line lacks
    assert r.extract("dx: max_diff=2") == [("dx", "max_diff", 2.0)]


def test_the_tensor_name_stands_before_the_first_metric() -> None:
    r = MetricRules()
    # a "name:" after the numbers is not the tensor's
    assert r.extract("max_diff=2 see: note") == [(UNNAMED, "max_diff", 2.0)]
    assert r.extract("two words max_diff=2") == [(UNNAMED, "max_diff", 2.0)]
    assert r.extract("3x max_diff=2") == [(UNNAMED, "max_diff", 2.0)]


def test_allclose_takes_the_tensor_of_the_expected_side_when_the_actual_names_none() -> None:
    r = MetricRules(strip_prefixes=("metal",))
    hits = r.extract("allclose(metal, dx_ref, 1e-3, 0.5)")
    assert hits == [("metal", "rtol", 0.001), ("metal", "atol", 0.5)]
    r2 = MetricRules(strip_suffixes=(), strip_prefixes=())
    assert r2.extract("allclose(a, b, 1, 2)")[0][0] == "a"
    r3 = MetricRules(
        allclose_pattern=r"allclose\((?P<actual>\w*), (?P<expected>\w+), (?P<rtol>\d), (?P<atol>\d)\)"
    )
    assert r3.extract("allclose(, dx_ref, 1, 2)") == [("dx", "rtol", 1.0), ("dx", "atol", 2.0)]


def test_extra_patterns_keep_every_metric_of_a_match() -> None:
    r = MetricRules(
        extra_patterns=(r"(?P<tensor>\w+)? ?pcc=(?P<pcc>\S+) (?P<note>\S+)? ?rmse=(?P<rmse>\S+)",)
    )
    # an unnamed tensor, a group that did not match, a value that is no number: the rest kept
    assert r.extract("pcc=0.5 rmse=2") == [(UNNAMED, "pcc", 0.5), (UNNAMED, "rmse", 2.0)]
    assert r.extract("out pcc=x note rmse=2") == [("out", "rmse", 2.0)]
    assert r.extract("out pcc=0.5 word rmse=y") == [("out", "pcc", 0.5)]


def test_a_c_float_suffix_is_dropped_only_after_a_number() -> None:
    assert _num("1000f") == 1000.0
    assert _num("1.F") == 1.0
    assert _num("2.5f") == 2.5
    assert _num("15") == 15.0
    assert _num("inf") == float("inf")
    assert _num("-inf") == float("-inf")
    assert _num("nan") != _num("nan")
    assert _num("7") == 7.0  # one character: nothing before it to check
    with pytest.raises(ValueError):
        _num("f")  # a bare "f" is no number


def test_a_bad_pattern_is_refused_with_its_reason() -> None:
    assert validate_pattern(r"(?P<a>x)(?P=a)") == (
        "back-references to named groups are not supported"
    )
    assert validate_pattern(r"(?P<tensor>\w+)") == (
        "needs at least one named group for a metric, e.g. (?P<max_diff>[0-9.]+)"
    )
    assert validate_pattern(r"(\d+)") == (
        "needs at least one named group for a metric, e.g. (?P<max_diff>[0-9.]+)"
    )
    msg = validate_pattern("(")
    assert msg is not None and msg.startswith("not a regular expression: ")
    assert validate_pattern(r"(?P<tensor>\w+) (?P<pcc>\d)") is None
