"""Pin the kernel model to the physics: reference agreement, closed forms of each defect."""

from __future__ import annotations

import numpy as np
import pytest

from lnrepro.emulator.catalogue import CASES, make_inputs
from lnrepro.emulator.kernel import (
    PRESETS,
    TILE,
    Defect,
    KernelConfig,
    bf16,
    kernel,
    parse_defects,
    reference,
    tiles,
)

NONE = KernelConfig(defects=frozenset())


def constant(rows: int, f: int, dy: float = 1.0, g: float = 1.0, x: float = 0.5):  # type: ignore[no-untyped-def]
    return (
        np.full((rows, f), x, np.float32),
        np.full((rows, f), dy, np.float32),
        np.full((1, f), g, np.float32),
    )


@pytest.mark.parametrize("case", [c for c in CASES if not c.deterministic], ids=lambda c: c.name)
def test_fixed_kernel_is_within_bf16_rounding_of_the_reference(case) -> None:  # type: ignore[no-untyped-def]
    x, dy, g = make_inputs(case, np.random.default_rng(7))
    ref, got = reference(x, dy, g), kernel(x, dy, g, NONE)
    for name in ("dx", "dgamma", "dbeta"):
        r, k = getattr(ref, name), getattr(got, name).astype(np.float64)
        # one bf16 rounding of the output (2^-8 relative, with margin) plus fp32 summation noise
        bound = 2.0**-8 * np.abs(r) + 2e-4 * max(1.0, float(np.abs(r).max()))
        assert np.all(np.abs(k - r) <= bound), name


@pytest.mark.parametrize("f", [20, 64, 1024, 2048, 4096, 8192, 8462])  # L1 path, then block path
@pytest.mark.parametrize(("dy", "g"), [(1.0, 1.0), (0.5, 2.0), (0.25, 1.0)])
def test_double_subtract_error_is_rstd_times_mean_dy_gamma(f: int, dy: float, g: float) -> None:
    assert KernelConfig().fits_in_l1(f) == (f <= 1024)
    x, dyv, gv = constant(100, f, dy, g)
    got = kernel(x, dyv, gv, KernelConfig(defects=frozenset({Defect.DOUBLE_SUBTRACT})))
    rstd = 1 / np.sqrt(1e-6)
    expected = bf16(-rstd * dy * g)  # dx = rstd*(dyg - m - m) with m = dyg: -rstd*dyg
    assert np.all(got.dx == expected)
    assert np.abs(reference(x, dyv, gv).dx).max() == 0.0


@pytest.mark.parametrize("f", [2048, 4096, 8192, 8462, 8191])
@pytest.mark.parametrize("block", [2, 3])
def test_overwrite_keeps_only_the_last_block(f: int, block: int) -> None:
    x, dy, g = constant(64, f)
    got = kernel(
        x, dy, g, KernelConfig(defects=frozenset({Defect.OVERWRITE_DY_GAMMA_SUM}), block_size=block)
    )
    wt = tiles(f)
    first_tile_of_last_block = ((wt - 1) // block) * block
    n_last = f - first_tile_of_last_block * TILE  # valid (unmasked) elements in the last block
    expected = bf16(1000.0 * (1.0 - n_last / f))  # rstd * (dyg - sum_last/F)
    assert np.allclose(got.dx, expected, rtol=0, atol=float(expected.max()) * 2**-8)


def test_dropped_xhat_blocks_are_invisible_to_constant_inputs_and_follow_their_closed_form() -> (
    None
):
    cfg = KernelConfig(defects=frozenset({Defect.DROP_XHAT_BLOCKS}))
    x, dy, g = constant(10, 8192)
    assert np.abs(kernel(x, dy, g, cfg).dx).max() == 0.0  # x_hat = 0: nothing to drop
    rng = np.random.default_rng(3)
    f, rows = 4096, 40
    x = bf16(rng.random((rows, f), dtype=np.float32) * 2 - 1)
    dy = bf16(rng.random((rows, f), dtype=np.float32) * 2 - 1)
    g = bf16(rng.random((1, f), dtype=np.float32))
    mean = x.astype(np.float64).mean(1, keepdims=True)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(1, keepdims=True) + 1e-6)
    xh = (x - mean) * rstd
    prod = dy * g * xh
    last = ((tiles(f) - 1) // 2) * 2 * TILE
    expected_delta = (
        rstd * xh * (prod.sum(1, keepdims=True) - prod[:, last:].sum(1, keepdims=True)) / f
    )
    bad, good = kernel(x, dy, g, cfg).dx.astype(np.float64), kernel(x, dy, g, NONE).dx
    delta = bad - good
    # each side is one bf16 rounding (2^-8 relative) from its exact value; fp32 sums add ~1e-4
    bound = 2.0**-8 * (np.abs(bad) + np.abs(good)) + 1e-3 * np.abs(expected_delta) + 1e-4
    assert np.all(np.abs(delta - expected_delta) <= bound)
    assert np.abs(expected_delta).max() > 0.01  # the defect is visible: the bound is not vacuous


@pytest.mark.parametrize("f", [20, 33, 213, 1000, 8191, 8462])
def test_block_and_l1_paths_agree_without_defects(f: int) -> None:
    rng = np.random.default_rng(f)
    x = bf16(rng.random((16, f), dtype=np.float32) * 2 - 1)
    dy = bf16(rng.random((16, f), dtype=np.float32) * 2 - 1)
    g = bf16(rng.random((1, f), dtype=np.float32))
    l1 = kernel(x, dy, g, KernelConfig(defects=frozenset(), l1_max_tiles=10**6))
    blk = kernel(x, dy, g, KernelConfig(defects=frozenset(), l1_max_tiles=0, block_size=3))
    assert np.allclose(l1.dx, blk.dx, rtol=2**-7, atol=1e-3)


@pytest.mark.parametrize("f", [20, 33, 213, 8191, 8462])
def test_partial_tiles_are_masked(f: int) -> None:
    # an unmasked pad would divide F real values among Wt*32 slots: dx = 1000*(1 - F/(32*Wt))
    x, dy, g = constant(8, f)
    for cfg in (
        KernelConfig(defects=frozenset(), l1_max_tiles=10**6),
        KernelConfig(defects=frozenset(), l1_max_tiles=0),
    ):
        got = kernel(x, dy, g, cfg)
        assert np.abs(got.dx).max() < 1e-3
        assert got.dx.shape == (8, f) and got.dgamma.shape == (f,)
        assert np.all(got.dbeta == 8.0)


def test_presets_and_names() -> None:
    assert (
        parse_defects("shipped")
        == PRESETS["shipped"]
        == {Defect.DOUBLE_SUBTRACT, Defect.DROP_XHAT_BLOCKS}
    )
    assert parse_defects("none") == frozenset()
    assert parse_defects("overwrite-dy-gamma-sum,double-subtract") == {
        Defect.OVERWRITE_DY_GAMMA_SUM,
        Defect.DOUBLE_SUBTRACT,
    }
    with pytest.raises(ValueError, match="unknown defect"):
        parse_defects("typo")
