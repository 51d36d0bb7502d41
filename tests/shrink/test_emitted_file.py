"""The emitted test file as a maintainer keeps it: a test name of its own per shrink
(two kept files must still link into one binary), a header that says only what is true of the
neighbours, and the SPDX lines tt-metal's license check requires."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lnrepro.model.case import Case, DataKind, DataSpec, Shape, Tolerance
from lnrepro.shrink import emit, emit_pytest
from lnrepro.shrink.emit import Flavour, source
from tests.harness import lnrepro

TOL = tuple((t, Tolerance(0.01, 0.01)) for t in ("dx", "dgamma", "dbeta"))
SHAPE = Shape(1, 1, 1, 32)
DATA = DataSpec(DataKind.CONSTANT, "bugrepro")


def test_shrinks_of_different_tests_name_their_tests_apart() -> None:
    a = Case(SHAPE, DATA, TOL, "LayerNormBackwardOpTest.BugRepro_Deterministic_2048Features")
    b = Case(SHAPE, DATA, TOL, "LayerNormBackwardOpTest.BugRepro_Deterministic_128Tiles")
    assert emit.test_name(a) != emit.test_name(b)
    assert "BugRepro_Deterministic_2048Features" in emit.test_name(a)
    for name in (emit.test_name(a), emit.test_name(b)):
        assert re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name), name  # a C++ identifier
    assert emit_pytest.test_name(a) != emit_pytest.test_name(b)


# tt-metal's static checks run espressif's check_copyright with ./check_copyright_config.yaml
# (.github/workflows/all-static-checks.yaml at 0022138026c1; the config at 049e2880a0c5): a
# checked file needs an SPDX-FileCopyrightText line and an SPDX-License-Identifier of an allowed
# license (Apache-2.0). tt-train's layernorm_bw_fused_op_test.cpp at 16165972af opens with both.
@pytest.mark.parametrize("flavour", list(Flavour))
def test_the_emitted_files_carry_the_spdx_lines(flavour: Flavour) -> None:
    case = Case(SHAPE, DATA, TOL, "S.T")
    for text, mark in ((source(case, flavour), "//"), (emit_pytest.source(case, flavour), "#")):
        head = text.splitlines()[:4]
        assert re.fullmatch(
            rf"{mark} SPDX-FileCopyrightText: © \d{{4}} Tenstorrent AI ULC", head[0]
        )
        assert f"{mark} SPDX-License-Identifier: Apache-2.0" in head


def test_the_header_says_no_smaller_step_when_every_axis_is_at_its_lower_bound(
    tmp_path: Path,
) -> None:
    out = tmp_path / "shrunk_test.cpp"
    args = ["shrink", "--test", "BugRepro_Deterministic_2048Features", "--json"]
    code, printed, err = lnrepro(*args, "--source", out)
    assert code == 1, err
    doc = json.loads(printed)
    assert sorted(doc["lower_bounds"]) == ["batch", "features", "heads", "seq"]
    text = out.read_text()
    assert "one step smaller on any axis passes" not in text
    said = re.search(r"every axis \(([a-z, ]+)\) is at its lower bound", text)
    assert said and sorted(said.group(1).split(", ")) == sorted(doc["lower_bounds"])
