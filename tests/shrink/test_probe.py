"""The emulator's probe test: a case from $LNREPRO_CASE, its data kinds' inputs."""

from __future__ import annotations

import io

import numpy as np

from lnrepro.emulator.probe import inputs, probe_cases
from lnrepro.model.case import CASE_ENV, DataKind, DataSpec, data_menu


def test_a_case_in_the_environment_is_the_probe_test() -> None:
    text = (
        '{"batch":1,"seq":2,"heads":1,"features":40,"data":{"kind":"few-valued",'
        '"variant":"two-valued"},"tolerance":{"dx":{"rtol":0,"atol":0.5},'
        '"dgamma":{"rtol":0,"atol":0.25},"dbeta":{"rtol":0,"atol":0.25}}}'
    )
    [case] = probe_cases({CASE_ENV: text}, io.StringIO())
    assert case.full_name == "LayerNormBackwardOpTest.LnreproProbe"
    assert (case.rows, case.features, case.iterations) == (2, 40, 1)
    assert case.tensor_tols is not None and case.tensor_tols[1][:2] == (0.0, 0.25)
    assert case.inputs is not None and case.inputs()[0].shape == (2, 40)


def test_a_value_that_is_not_a_case_is_said_and_no_probe_exists() -> None:
    err = io.StringIO()
    assert probe_cases({CASE_ENV: '{"batch": 1}'}, err) == []
    assert "is not a case" in err.getvalue()
    assert probe_cases({}, err) == []


def test_each_data_kind_makes_its_pattern() -> None:
    for data in data_menu(7):
        x, dy, g = inputs(data, 3, 64)
        assert x.shape == dy.shape == (3, 64) and g.shape == (1, 64) and x.dtype == np.float32
        if data.kind is DataKind.CONSTANT:
            assert len(np.unique(x)) == len(np.unique(dy)) == 1
        elif data.kind is DataKind.FEW_VALUED:
            assert len(np.unique(x)) == 2 and np.std(x) == 1.0  # rstd = 1
    one = DataSpec(DataKind.RANDOM, "uniform", seed=3)
    assert not np.array_equal(inputs(one, 2, 32, 0)[0], inputs(one, 2, 32, 1)[0])  # fresh draws
    assert np.array_equal(inputs(one, 2, 32, 1)[0], inputs(one, 2, 32, 1)[0])  # repeatable
