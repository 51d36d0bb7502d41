"""A ttnn op's case data, one function that both the pytest probe (its source is copied into
the probe file, which cannot import lnrepro where the tests run) and the control (the correct
op's numpy model) call, so that both see the same inputs.

Data kinds for an ``h x w`` input of a normalisation over ``w`` (the rows must differ, or a
defect in per-row statistics cannot show):

* ``constant``: every element ``x`` (the output is all zeros);
* ``few-valued``: ``±1`` alternating along ``w``, plus ``row % 4`` (rows of four means);
* ``structured``: ``linspace(-1, 1, w)`` plus ``row / h``;
* ``random``: ``U(0, 1)`` as the tests' ``torch.rand`` (numpy's generator seeded ``seed``).
"""

from __future__ import annotations

from typing import Any


def lnrepro_case_input(case: Any) -> Any:
    """The input of ``case`` (a decoded ``$LNREPRO_CASE``), float32 ``(h, w)``."""
    import numpy as np

    h, w = int(case["seq"]), int(case["features"])
    data = case["data"]
    kind = data["kind"]
    rows = np.arange(h, dtype=np.float32)[:, None]
    cols = np.arange(w)[None, :]
    if kind == "constant":
        return np.full((h, w), float(data.get("x", 0.5)), dtype=np.float32)
    if kind == "few-valued":
        return (np.where(cols % 2 == 1, 1.0, -1.0) + rows % 4).astype(np.float32)
    if kind == "structured":
        return (np.linspace(-1.0, 1.0, w, dtype=np.float32)[None, :] + rows / h).astype(np.float32)
    rng = np.random.default_rng(int(data.get("seed", 0)))
    return rng.random((h, w), dtype=np.float32)
