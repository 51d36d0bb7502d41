"""Pin the kernel model to the mechanisms, each in isolation: the bf16-truncated scaler, the
sequential float32 mean, the byte-budget path choice of both factories, the block sizes, the
test's mt19937 data (against a real C++ compiler's), and each defect's closed form."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import lnrepro.emulator.kernel as kernel_module
from lnrepro.emulator.catalogue import (
    BY_NAME,
    CASES,
    Data,
    DataSource,
    make_inputs,
    mt19937_uniform,
    run_iteration,
)
from lnrepro.emulator.defects import PRESETS, Arch, Defect, Era, parse_defects
from lnrepro.emulator.kernel import (
    F32,
    FREE_L1,
    TILE,
    KernelConfig,
    Prepared,
    bf16,
    bf16_trunc,
    factory_block_size,
    finish,
    kernel,
    kernels,
    l1_bytes,
    prepare,
    reference,
    seq_mean_f32,
    tiles,
)
from tests.conftest import need

NONE = KernelConfig(defects=frozenset(), era=Era.FIXED)


def constant(rows: int, f: int, dy: float = 1.0, g: float = 1.0, x: float = 0.5):  # type: ignore[no-untyped-def]
    return (
        np.full((rows, f), x, np.float32),
        np.full((rows, f), dy, np.float32),
        np.full((1, f), g, np.float32),
    )


# ---------------------------------------------------------------------------------- mechanisms
def test_scaler_is_one_over_n_truncated_to_bf16() -> None:
    s = bf16_trunc(1.0 / 8462)
    assert float(s) == 0.00011777877807617188  # 1.9296875 * 2^-14: the low 16 bits dropped
    assert (
        float(s) < 1.0 / 8462 and bf16(np.float32(1.0 / 8462))[()] > s
    )  # truncation, not rounding
    for n in (2048, 4096, 8192):  # a power of two is exact: the aligned tests show exactly 1000
        assert float(bf16_trunc(1.0 / n)) == 1.0 / n


def test_mean_diff_is_summed_sequentially_in_float32() -> None:
    # the reports' numbers: |diff| = 1000 everywhere, over 819,200 and 409,600 elements
    assert f"{seq_mean_f32(np.full(819_200, 1000.0, np.float32)):g}" == "1004.21"
    assert f"{seq_mean_f32(np.full(409_600, 1000.0, np.float32)):g}" == "994.621"
    assert seq_mean_f32(np.full(1000, 1000.0, np.float32)) == 1000.0  # small: no drift
    assert (
        abs(float(np.full(819_200, 1000.0).mean()) - 1000.0) < 1e-9
    )  # pairwise/f64 would not drift


@pytest.mark.parametrize("arch", list(Arch))
def test_path_choice_is_the_factorys_byte_budget_at_its_boundary(arch: Arch) -> None:
    free = FREE_L1[arch]
    for era in (Era.NOV_2025, Era.DEC_2025):
        last = max(w for w in range(1, 400) if l1_bytes(era, w) <= free)
        cfg = KernelConfig(era=era, arch=arch)
        assert cfg.fits_in_l1(last * TILE) and not cfg.fits_in_l1(last * TILE + 1)
        assert l1_bytes(era, last + 1) > free
    wh = Arch.WORMHOLE_B0
    older, newer = KernelConfig(era=Era.NOV_2025, arch=wh), KernelConfig(era=Era.DEC_2025, arch=wh)
    # TTMETAL.md: ~90 tiles fit with the older formula, 150+ with the newer; 2048 features take
    # the L1 path in both, 4096 only in the newer one
    assert older.fits_in_l1(90 * TILE) and not older.fits_in_l1(91 * TILE)
    assert newer.fits_in_l1(150 * TILE)
    assert older.fits_in_l1(2048) and newer.fits_in_l1(2048)
    assert not older.fits_in_l1(4096) and newer.fits_in_l1(4096)
    assert KernelConfig(l1_max_tiles=32).fits_in_l1(1024) and not KernelConfig(
        l1_max_tiles=32
    ).fits_in_l1(1025)


def test_block_size_per_factory_version() -> None:
    assert [factory_block_size(Era.NOV_2025, w) for w in (264, 265, 256, 129)] == [2, 1, 2, 1]
    assert {factory_block_size(e, w) for e in (Era.DEC_2025, Era.FIXED) for w in (264, 265)} == {3}


def test_data_is_the_same_every_iteration_and_every_run_with_a_copied_generator() -> None:
    case = BY_NAME["LayerNormBackwardOpTest.MetalLayerNormBw_OneTilePerRow"]
    one, two = DataSource(Data.COPY), DataSource(Data.COPY)
    a, b, c = make_inputs(case, one), make_inputs(case, one), make_inputs(case, two)
    assert all(
        np.array_equal(p, q) and np.array_equal(p, r) for p, q, r in zip(a, b, c, strict=True)
    )
    ref = DataSource(Data.REFERENCE)
    first, second = make_inputs(case, ref), make_inputs(case, ref)
    assert np.array_equal(first[0], a[0]) and not np.array_equal(second[0], first[0])  # advances
    x, _, g = a
    assert x.min() >= -1 and x.max() < 1 and g.min() >= 0 and g.max() < 1


def test_iterations_on_the_same_inputs_are_computed_once() -> None:
    """The kernel is deterministic: iterations whose inputs repeat (constant inputs, or the copied
    generator) give the first one's outcome itself, not a recomputation; an advancing
    generator's iterations are each computed, on new data."""
    from lnrepro.emulator.catalogue import Iterations

    case = BY_NAME["LayerNormBackwardOpTest.MetalLayerNormBw_OneTilePerRow"]
    det = BY_NAME["LayerNormBackwardOpTest.BugRepro_Deterministic_2048Features"]
    cfg = KernelConfig()
    copy = Iterations(DataSource(Data.COPY))
    first = copy(case, cfg)
    assert all(copy(case, cfg) is first for _ in range(3))
    other = copy(case, NONE)  # another config is another computation
    assert other is not first and copy(case, NONE) is other
    assert first == run_iteration(case, cfg, DataSource(Data.COPY))  # what computing gives
    advancing = Iterations(DataSource(Data.REFERENCE))
    a, b = advancing(case, cfg), advancing(case, cfg)
    assert a == first and b != a  # the first draw is the copy's; the next is new data
    d = advancing(det, cfg)  # constant inputs repeat whatever the generator does
    assert advancing(det, cfg) is d


def test_mt19937_uniform_matches_libstdcxx(tmp_path: Path) -> None:
    """The draws of ``uniform_real_distribution<float>`` from ``std::mt19937{5489}``, bit for bit
    against the real thing compiled here."""
    need(shutil.which("g++") is not None, "g++ is not installed")
    src = tmp_path / "mt.cpp"
    src.write_text(
        "#include <random>\n#include <cstdio>\n#include <cstring>\n#include <cstdint>\n"
        "int main(){std::mt19937 g{5489};std::uniform_real_distribution<float> s(-1.0F,1.0F),p(0.0F,1.0F);"
        'for(int i=0;i<3000;++i){float v=i<2000?s(g):p(g);std::uint32_t b;std::memcpy(&b,&v,4);std::printf("%u\\n",b);}}\n'
    )
    subprocess.run(["g++", "-O2", "-o", str(tmp_path / "mt"), str(src)], check=True)
    want = np.array(
        subprocess.run(
            [str(tmp_path / "mt")], capture_output=True, text=True, check=True
        ).stdout.split(),
        dtype=np.uint32,
    )
    gen = np.random.RandomState(5489)
    got = np.concatenate(
        [mt19937_uniform(gen, 2000, -1.0, 1.0), mt19937_uniform(gen, 1000, 0.0, 1.0)]
    )
    assert np.array_equal(got.view(np.uint32), want)


# ---------------------------------------------------------------------------------- defects
@pytest.mark.parametrize("f", [32, 64, 1024, 2048, 4096, 8192])  # both paths, power-of-two N
@pytest.mark.parametrize(("dy", "g"), [(1.0, 1.0), (0.5, 2.0), (0.25, 1.0)])
def test_double_subtract_error_is_rstd_times_mean_dy_gamma(f: int, dy: float, g: float) -> None:
    x, dyv, gv = constant(100, f, dy, g)
    got = kernel(x, dyv, gv, KernelConfig(defects=frozenset({Defect.DOUBLE_SUBTRACT})))
    expected = bf16(np.float32(-1000.0 * dy * g))  # dx = rstd*(dyg - m - m) with m = dyg
    assert np.all(got.dx == expected)
    assert np.abs(reference(x, dyv, gv).dx).max() == 0.0


@pytest.mark.parametrize(
    ("arch", "defects", "want"),
    [
        (Arch.WORMHOLE_B0, "double-subtract", 992.0),  # S = 8462: a later report's value
        (Arch.WORMHOLE_B0, "double-subtract,drop-partial-tile", 988.0),  # S = 8448: the reports'
        (
            Arch.BLACKHOLE,
            "double-subtract,drop-partial-tile",
            992.0,
        ),  # the hypothesis is Wormhole's
    ],
)
def test_8462_features_follow_the_truncated_scaler(arch: Arch, defects: str, want: float) -> None:
    x, dy, g = constant(4, 8462)
    got = kernel(x, dy, g, KernelConfig(defects=parse_defects(defects), arch=arch))
    s = float(bf16_trunc(1.0 / 8462))
    summed = 8448 if want == 988.0 else 8462
    assert float(bf16(np.float32(1000 * abs(1 - 2 * summed * s)))[()]) == want
    assert np.all(np.abs(got.dx) == want)


@pytest.mark.parametrize(
    ("era", "f"),
    [(Era.NOV_2025, 8192), (Era.NOV_2025, 8191), (Era.DEC_2025, 8192), (Era.DEC_2025, 8462)],
)
def test_overwrite_keeps_only_the_last_block(era: Era, f: int) -> None:
    """The reporters' (refuted) model: only the last block of sum(dy*gamma) survives."""
    x, dy, g = constant(8, f)
    cfg = KernelConfig(defects=frozenset({Defect.OVERWRITE_DY_GAMMA_SUM}), era=era)
    wt, b = tiles(f), cfg.block(f)
    first = -(-wt // b) * b - b
    n_last = f - first * TILE  # the valid elements of the last block
    expected = bf16(np.float32(1000.0 * (1.0 - n_last * float(bf16_trunc(1.0 / f)))))
    assert np.allclose(kernel(x, dy, g, cfg).dx, expected, rtol=2**-7)
    assert Defect.OVERWRITE_DY_GAMMA_SUM.status.startswith("refuted")


def test_dropped_xhat_blocks_are_invisible_to_constant_inputs_and_shift_random_ones() -> None:
    cfg = KernelConfig(defects=frozenset({Defect.DROP_XHAT_BLOCKS}))
    x, dy, g = constant(10, 8192)
    assert np.abs(kernel(x, dy, g, cfg).dx).max() == 0.0  # x_hat = 0: nothing to drop
    case = BY_NAME["LayerNormBackwardOpTest.BugRepro_TightTolerance_8192Features"]
    x, dy, g = make_inputs(case, DataSource())
    bad, good = kernel(x, dy, g, cfg).dx, kernel(x, dy, g, KernelConfig(defects=frozenset())).dx
    assert 0.01 < float(np.abs(bad - good).max()) < 0.5  # visible, yet under NIGHTLY's atol 0.5
    l1 = KernelConfig(defects=frozenset({Defect.DROP_XHAT_BLOCKS}), l1_max_tiles=10**6)
    assert np.array_equal(kernel(x, dy, g, l1).dx, good)  # the L1 path has no blocks to drop


def test_fixed_kernel_errors_are_the_devices_magnitude() -> None:
    """After #53215 the device showed dx <= 0.014 and dgamma/dbeta ~0.29 at ~8k features; the
    model, from the formats alone, lands there too — so the old TightTolerance tests (0.01)
    fail on the fixed kernel, as was found."""
    case = BY_NAME["LayerNormBackwardOpTest.NIGHTLY_MetalLayerNormBw_LargeFeatures_NoL1Fit"]
    out = {t.tensor: t.max_diff for t in run_iteration(case, NONE, DataSource()).tensors}
    assert 0.005 < out["dx"] <= 0.014
    assert 0.15 < out["dgamma"] < 0.4 and 0.1 < out["dbeta"] < 0.4
    tight = BY_NAME["LayerNormBackwardOpTest.BugRepro_TightTolerance_8462Features"]
    assert (
        run_iteration(tight, KernelConfig(defects=frozenset(), era=Era.DEC_2025), DataSource()).ok
        is False
    )
    assert run_iteration(tight, NONE, DataSource()).ok  # the fixed era's tolerances pass it


def test_configs_on_one_draw_share_the_defect_free_part_and_answer_as_one_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``kernels`` (explain's and the tolerance study's way) prepares once per storage setting,
    and each answer is bit for bit what ``kernel`` alone gives; a prepared part is refused by a
    config that stores differently."""
    case = BY_NAME["LayerNormBackwardOpTest.MetalLayerNormBw_DoesNotFitInL1_WtNotDivisibleBy4"]
    x, dy, g = make_inputs(case, DataSource())
    cfgs = [
        KernelConfig(defects=d, era=e, arch=a, bf16_stats=s)
        for d in (
            frozenset(),
            PRESETS["shipped"],
            frozenset({Defect.OVERWRITE_DY_GAMMA_SUM, Defect.DROP_PARTIAL_TILE}),
        )
        for e in (Era.NOV_2025, Era.DEC_2025)
        for a in Arch
        for s in (True, False)
    ]
    seen: list[tuple[bool, bool]] = []
    real_prepare = kernel_module.prepare

    def counting(x: F32, dy: F32, g: F32, cfg: KernelConfig) -> Prepared:
        seen.append(cfg.storage)
        return real_prepare(x, dy, g, cfg)

    monkeypatch.setattr(kernel_module, "prepare", counting)
    together = list(kernels(x, dy, g, cfgs))
    monkeypatch.undo()
    assert sorted(seen) == [(False, True), (True, True)]
    for cfg, got in zip(cfgs, together, strict=True):
        alone = kernel(x, dy, g, cfg)
        for t in ("dx", "dgamma", "dbeta"):
            assert np.array_equal(getattr(got, t), getattr(alone, t)), (cfg.label, t)
    assert len({together[0].dx.tobytes(), together[1].dx.tobytes()}) == 2  # storage matters
    with pytest.raises(ValueError, match="prepared for storage"):
        finish(prepare(x, dy, g, cfgs[0]), cfgs[1])


@pytest.mark.parametrize("f", [20, 33, 213, 8191, 8462])
def test_partial_tiles_are_masked(f: int) -> None:
    """Constant inputs on the fixed kernel: dx is exactly the scaler's truncation error,
    1000*(1 - F*s), and zero with an exact scaler — an unmasked pad would add F/(32*Wt)."""
    x, dy, g = constant(8, f)
    for l1 in (10**6, 0):
        exact = kernel(
            x, dy, g, KernelConfig(defects=frozenset(), l1_max_tiles=l1, scaler_bf16=False)
        )
        assert np.abs(exact.dx).max() < 1e-3
        trunc = kernel(x, dy, g, KernelConfig(defects=frozenset(), l1_max_tiles=l1))
        want = 1000 * (1 - f * float(bf16_trunc(1.0 / f)))
        assert np.allclose(trunc.dx, want, rtol=2**-7, atol=1e-3)
        assert (
            trunc.dx.shape == (8, f) and trunc.dgamma.shape == (f,) and np.all(trunc.dbeta == 8.0)
        )


def test_presets_eras_and_names() -> None:
    assert (
        parse_defects("shipped")
        == PRESETS["shipped"]
        == {Defect.DOUBLE_SUBTRACT, Defect.DROP_XHAT_BLOCKS}
    )
    assert parse_defects("none") == frozenset()
    assert parse_defects("drop-partial-tile,double-subtract") == {
        Defect.DROP_PARTIAL_TILE,
        Defect.DOUBLE_SUBTRACT,
    }
    assert Defect.DROP_PARTIAL_TILE.status.startswith("hypothesis")
    assert KernelConfig().label == "shipped @ 2025-12/wormhole_b0"
    with pytest.raises(ValueError, match="unknown defect"):
        parse_defects("typo")


MAIN = [c for c in CASES if not c.deterministic and not c.name.startswith("BugRepro_")]


@pytest.mark.parametrize("case", MAIN, ids=lambda c: c.name)
def test_the_shipped_kernel_passes_the_random_data_tests_on_main(case) -> None:  # type: ignore[no-untyped-def]
    """The NIGHTLY puzzle: with the test's own data and atol 0.5 the defective kernel passes."""
    assert run_iteration(case, KernelConfig(), DataSource()).ok
