"""A numpy model of tt-train's fused LayerNorm backward kernel, defects included.

Second pass: the mechanisms read from the real kernel, program factory and tests at several
commits (``shared/TTMETAL.md``, "Read from the real source since"), each a knob of one model.

* **Formats, as the factory sets them.** Inputs reach the device in bf16 (round to nearest even);
  every circular buffer is bf16 — x̂, the forward's mean and rstd included — except the two sum
  buffers, which are fp32; DEST is fp32 (``fp32_dest_acc_en``). dx leaves in bf16.
* **The 1/N scaler** is packed by ``pack_two_bfloat16_to_uint32(1/N)``: 1/N *truncated* to bf16.
  The row sums are kept per position (32 fp32 lanes, accumulated tile by tile) and reduced by a
  matmul with the scaler tile, so ``mean = Σ_lanes acc · s``. For N a power of two ``s`` is exact
  (the aligned tests print exactly 1000); for N = 8462 it is 0.4% small.
* **dgamma/dbeta**: the kernel writes per-row bf16 components; the host sums them (``ttnn::sum``,
  modelled as an fp32 sum rounded to bf16).
* **Path choice is a byte budget** against the core's free L1, by factory version (``Era``):
  older ``14336·Wt + 20480``, newer ``2048·(3·Wt + ceil3(Wt) + 24) + 8192`` bytes; free L1 per
  ``Arch`` (documented defaults below). Block size: older ``get_block_size(Wt, 2)`` (2 for even
  Wt, else 1), newer 3 (the row padded to a multiple of 3 tiles).
* **Eras** name a commit's kernel + factory + tests: ``2025-11`` (older factory), ``2025-12``
  (newer factory; seed 002's "fresh main" of Dec 17 2025), ``fixed`` (after #53215: newer factory,
  no defect, the relaxed tolerances).

Defects (:class:`Defect`), each a mechanism in the code:

``double-subtract``
    ELWMUL (``mul_tiles``) accumulates into DEST, and ``compute_dx`` loaded mean(dy·γ) into a
    register that still held it: mean(dy·γ) is subtracted twice, on both paths. For constant
    inputs the error is ``rstd · mean(dy·γ)`` = 1000.
``drop-xhat-blocks``
    A nested ``tile_regs_acquire`` on the block path zeroes DEST each block: only the last
    block of ``sum(dy·γ·x̂)`` survives. Invisible to constant inputs (x̂ = 0).
``drop-partial-tile``
    *Hypothesis, mechanism unconfirmed*: on Wormhole the masked last tile is missing from
    ``sum(dy·γ)`` on the block path. It is what turns 8462 features' 992 into the reports' 988.
``overwrite-dy-gamma-sum``
    *Refuted by the code* (ELWMUL accumulates): the reporters' reading, that each block overwrote
    the sum register. Kept as their model, labelled as such.

``shipped`` is the kernel before #53215 landed (double-subtract + drop-xhat-blocks).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
import numpy.typing as npt

from lnrepro.emulator.defects import PRESETS, Arch, Defect, Era, defects_label

F32 = npt.NDArray[np.float32]

TILE = 32
EPS = 1e-6  # the test reference's epsilon


# Free L1 per core for a kernel's circular buffers, bytes. Wormhole: chosen so the older
# factory's budget admits the ~90 tiles TTMETAL.md reports (14336·90 + 20480 = 1,310,720), which
# makes the newer one admit 153. Blackhole: its larger L1 (1536 KB against Wormhole's 1464 KB)
# less the same reserve. Both are assumptions, overridable (--emu_l1_max_tiles).
FREE_L1 = {Arch.WORMHOLE_B0: 1_310_720, Arch.BLACKHOLE: 1_384_448}


def ceil_to(n: int, k: int) -> int:
    return -(-n // k) * k


def l1_bytes(era: Era, wt: int) -> int:
    """What the factory reserves in L1 for a row of ``wt`` tiles on the fits-in-L1 path."""
    if era.newer_factory:
        return 2048 * (3 * wt + ceil_to(wt, 3) + 24) + 8192
    return 14336 * wt + 20480


def factory_block_size(era: Era, wt: int) -> int:
    if era.newer_factory:
        return 3
    return 2 if wt % 2 == 0 else 1  # get_block_size(Wt, 2)


@dataclass(frozen=True)
class KernelConfig:
    defects: frozenset[Defect] = field(default_factory=lambda: PRESETS["shipped"])
    era: Era = Era.DEC_2025
    arch: Arch = Arch.WORMHOLE_B0
    block_size: int | None = None  # override the factory's block size
    l1_max_tiles: int | None = None  # override the byte budget with a tile count
    bf16_stats: bool = True  # mean, rstd and x_hat in bf16 circular buffers (the factory's)
    scaler_bf16: bool = True  # 1/N truncated to bf16 (pack_two_bfloat16_to_uint32)
    dgamma_rows_bf16: bool = True  # per-row bf16 dgamma/dbeta components, summed on the host

    def fits_in_l1(self, features: int) -> bool:
        wt = tiles(features)
        if self.l1_max_tiles is not None:
            return wt <= self.l1_max_tiles
        return l1_bytes(self.era, wt) <= FREE_L1[self.arch]

    def block(self, features: int) -> int:
        return self.block_size or factory_block_size(self.era, tiles(features))

    def path(self, features: int) -> str:
        return "l1" if self.fits_in_l1(features) else f"block(block_size={self.block(features)})"

    @property
    def storage(self) -> tuple[bool, bool]:
        """The knobs the defect-free part of the kernel depends on (:func:`prepare`)."""
        return (self.bf16_stats, self.dgamma_rows_bf16)

    @property
    def label(self) -> str:
        return f"{defects_label(self.defects)} @ {self.era.value}/{self.arch.value}"


@dataclass(frozen=True)
class Grads:
    dx: npt.NDArray[np.floating]  # [rows, F]
    dgamma: npt.NDArray[np.floating]  # [F]
    dbeta: npt.NDArray[np.floating]  # [F]


def tiles(features: int) -> int:
    return -(-features // TILE)


def bf16(a: npt.ArrayLike) -> F32:
    """Round to bfloat16 (nearest even) and widen back to fp32."""
    return np.asarray(a, dtype=np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def bf16_trunc(v: float) -> np.float32:
    """``v`` as fp32, its low 16 bits dropped: what ``pack_two_bfloat16_to_uint32`` keeps."""
    bits = np.array([v], dtype=np.float32).view(np.uint32) & np.uint32(0xFFFF0000)
    out: np.float32 = bits.view(np.float32)[0]
    return out


def reference(x: F32, dy: F32, gamma: F32, eps: float = EPS) -> Grads:
    """The test's xtensor reference: float32 arithmetic on the host's unrounded data."""
    f32 = np.float32
    features = x.shape[1]
    n = f32(features)
    x = np.asarray(x, dtype=f32)  # no copy of what is float32 already
    mean = x.sum(axis=1, keepdims=True, dtype=f32) / n
    xc = x - mean
    var = np.einsum("ij,ij->i", xc, xc, dtype=f32)[:, None] / n
    rstd = f32(1.0) / np.sqrt(var + f32(eps))
    xh = xc * rstd
    dyf = np.asarray(dy, dtype=f32)
    dgamma = np.einsum("ij,ij->j", dyf, xh, dtype=f32)
    dbeta = dyf.sum(axis=0, dtype=f32)
    dyg = dyf * np.asarray(gamma, dtype=f32)
    mean_dyg = dyg.sum(axis=1, keepdims=True, dtype=f32) / n
    mean_dyg_xhat = np.einsum("ij,ij->i", dyg, xh, dtype=f32)[:, None] / n
    dx = (dyg - mean_dyg - xh * mean_dyg_xhat) * rstd
    return Grads(dx=dx, dgamma=dgamma, dbeta=dbeta)


def forward_stats(x: F32, eps: float = EPS, bf16_storage: bool = True) -> tuple[F32, F32]:
    """mean and rstd as the forward pass hands them over: fp32 maths, bf16 circular buffers."""
    mean = x.mean(axis=1, keepdims=True, dtype=np.float32)
    var = np.square(x - mean).mean(axis=1, keepdims=True, dtype=np.float32)
    rstd = (np.float32(1.0) / np.sqrt(var + np.float32(eps))).astype(np.float32)
    return (bf16(mean), bf16(rstd)) if bf16_storage else (mean, rstd)


def _lane_sums(values: F32, first_tile: int) -> F32:
    """Per row, the 32 fp32 lanes accumulated tile by tile from ``first_tile`` on: [rows, 32]."""
    rows, width = values.shape
    wt = width // TILE
    t = values.reshape(rows, wt, TILE)[:, first_tile:, :]
    acc = np.zeros((rows, TILE), dtype=np.float32)
    for k in range(t.shape[1]):  # tile by tile, as DEST/the fp32 CB accumulates
        acc += t[:, k, :]
    return acc


def _row_mean(
    values: F32, cfg: KernelConfig, features: int, keep_last_block: bool, drop_partial: bool
) -> F32:
    """``mean`` of a row as the kernel computes it: lane sums, then the matmul with the scaler."""
    wt = values.shape[1] // TILE
    first = 0
    if not cfg.fits_in_l1(features):
        if drop_partial and features % TILE:
            values = values[:, : (wt - 1) * TILE]
            wt -= 1
        if keep_last_block:
            b = cfg.block(features)
            first = max(0, ceil_to(wt, b) - b)
    acc = _lane_sums(values, first)
    s = bf16_trunc(1.0 / features) if cfg.scaler_bf16 else np.float32(1.0 / features)
    out: F32 = (acc * s).sum(axis=1, keepdims=True, dtype=np.float32)
    return out


@dataclass(frozen=True)
class Prepared:
    """What the kernel computes before any defect, era or arch matters: the bf16 inputs' x̂ and
    dy·γ (padded to whole tiles), rstd, dgamma and dbeta. It depends on the inputs and on the
    two storage knobs of :attr:`KernelConfig.storage` only, so one is shared by every config
    that agrees on those (``explain`` runs dozens of models on one test's data)."""

    storage: tuple[bool, bool]
    features: int
    rstd: F32  # [rows, 1]
    x_hat: F32  # [rows, Wt*32]
    dyg: F32  # [rows, Wt*32], zero in the padding
    dgamma: F32  # [F]
    dbeta: F32  # [F]


def prepare(x: F32, dy: F32, gamma: F32, cfg: KernelConfig) -> Prepared:
    """The defect-free part of :func:`kernel` for ``cfg.storage``."""
    _rows, features = x.shape
    wt = tiles(features)
    pad = wt * TILE - features
    xb, dyb, gb = bf16(x), bf16(dy), bf16(gamma)
    mean, rstd = forward_stats(xb, bf16_storage=cfg.bf16_stats)
    if pad:
        xb, dyb, gb = (np.pad(a, ((0, 0), (0, pad))) for a in (xb, dyb, gb))
    mask = np.zeros((1, wt * TILE), dtype=np.float32)
    mask[:, :features] = 1.0
    x_hat = (xb - mean) * rstd * mask
    if cfg.bf16_stats:
        x_hat = bf16(x_hat)
    dyg = dyb * gb  # exact in fp32 (bf16 x bf16); zero in the padding
    comp_g, comp_b = dyb * x_hat, dyb
    if cfg.dgamma_rows_bf16:
        comp_g, comp_b = bf16(comp_g), bf16(comp_b)
    dgamma = bf16(comp_g.sum(axis=0, dtype=np.float32)[:features])
    dbeta = bf16(comp_b.sum(axis=0, dtype=np.float32)[:features])
    return Prepared(cfg.storage, features, rstd, x_hat, dyg, dgamma, dbeta)


def finish(p: Prepared, cfg: KernelConfig) -> Grads:
    """The rest of :func:`kernel`: the row means as ``cfg``'s path and defects compute them."""
    if p.storage != cfg.storage:
        raise ValueError(f"prepared for storage {p.storage}, not {cfg.storage}")
    features = p.features
    drop_partial = Defect.DROP_PARTIAL_TILE in cfg.defects and cfg.arch is Arch.WORMHOLE_B0
    mean_dyg = _row_mean(
        p.dyg, cfg, features, Defect.OVERWRITE_DY_GAMMA_SUM in cfg.defects, drop_partial
    )
    mean_dyg_xhat = _row_mean(
        p.dyg * p.x_hat, cfg, features, Defect.DROP_XHAT_BLOCKS in cfg.defects, False
    )
    inner = p.dyg - mean_dyg - p.x_hat * mean_dyg_xhat
    if Defect.DOUBLE_SUBTRACT in cfg.defects:
        inner = inner - mean_dyg
    dx = bf16((p.rstd * inner)[:, :features])
    return Grads(dx=dx, dgamma=p.dgamma, dbeta=p.dbeta)


def kernel(x: F32, dy: F32, gamma: F32, cfg: KernelConfig | None = None) -> Grads:
    """The device's answer: bf16 in, fp32 DEST and sums, bf16 buffers and out."""
    cfg = cfg or KernelConfig()
    return finish(prepare(x, dy, gamma, cfg), cfg)


def kernels(x: F32, dy: F32, gamma: F32, cfgs: Iterable[KernelConfig]) -> Iterator[Grads]:
    """:func:`kernel` for each config on the same inputs, one at a time (a large test's dx is
    tens of MB), the defect-free part computed once per :attr:`KernelConfig.storage`."""
    prepared: dict[tuple[bool, bool], Prepared] = {}
    for cfg in cfgs:
        if cfg.storage not in prepared:
            prepared[cfg.storage] = prepare(x, dy, gamma, cfg)
        yield finish(prepared[cfg.storage], cfg)


def seq_mean_f32(a: npt.NDArray[np.floating]) -> float:
    """``xt::mean`` as the test computes it: summed one element after another in float32."""
    flat = np.asarray(np.ravel(a), dtype=np.float32)
    if flat.size == 0:
        return math.nan
    return float(np.cumsum(flat, dtype=np.float32)[-1] / np.float32(flat.size))


@dataclass(frozen=True)
class Comparison:
    tensor: str
    ok: bool
    max_diff: float
    mean_diff: float
    used: float = 0.0  # max |metal - ref| / (atol + rtol·|ref|): the share of the tolerance


def compare(
    tensor: str,
    metal: npt.NDArray[np.floating],
    ref: npt.NDArray[np.floating],
    rtol: float,
    atol: float,
) -> Comparison:
    """``xt::allclose(metal, ref, rtol, atol)`` (|metal - ref| <= atol + rtol*|ref|, float32) and
    the test's own diffs: ``max_diff`` = max|metal - ref|, ``mean_diff`` = xtensor's mean of it."""
    ref32 = np.asarray(ref, dtype=np.float32)
    diff = np.abs(np.asarray(metal, dtype=np.float32) - ref32)
    tol = np.float32(atol) + np.float32(rtol) * np.abs(ref32)
    ok = bool((diff <= tol).all())  # NaN compares false: not close
    with np.errstate(divide="ignore", invalid="ignore"):
        used = float(np.max(diff / tol))
    return Comparison(tensor, ok, float(diff.max()), seq_mean_f32(diff), used)
