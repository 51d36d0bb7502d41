"""A numpy model of tt-train's fused LayerNorm backward kernel, defects included.

What the model follows (facts in ``shared/TTMETAL.md`` and the bug reports):

* Inputs reach the device in bf16 (``ml_dtypes.bfloat16``, round to nearest even); the
  per-row ``mean`` and ``rstd`` come from the forward pass, computed in fp32. Whether the real
  op stores them in bf16 is not on record: ``bf16_stats=True`` models that, and then dgamma
  misses ``atol=1e-2`` over 819 rows from rstd rounding alone (~0.2% per row), so the
  tight-tolerance tests would fail on a fixed kernel too. The default keeps them fp32.
* Rows are cut into 32-wide tiles; F features give ``Wt = ceil(F / 32)`` tiles, the last one
  masked when ``F % 32 != 0`` (padding contributes nothing).
* The two row reductions, ``sum(dy*gamma)`` and ``sum(dy*gamma*x_hat)``, are fp32 running sums,
  scaled by ``1/F`` afterwards.
* The program factory chooses the ``EVERYTHING_FITS_IN_L1`` path when the row's tiles fit
  (here: ``Wt <= l1_max_tiles``), else the block-based path, which walks the row in blocks of
  ``block_size`` tiles (2 in older versions, 3 in newer).
* dx, dgamma, dbeta leave the device in bf16.

Defect models, each switchable (:class:`Defect`):

``overwrite-dy-gamma-sum``
    Seed reports 001/002: on the block path ``compute_dy_gamma_sum()`` overwrites its sum
    register each block, so only the last block of ``sum(dy*gamma)`` survives.
``double-subtract``
    tt-metal PR #53215 (issue #53204): ``compute_dx`` subtracted ``mean(dy*gamma)`` twice (a
    temp register still held it; a ``zero_dst_reg`` was missing). The error is
    ``rstd*mean(dy*gamma)`` — 1000 for constant inputs. Modelled on both paths, because
    ``compute_dx`` is shared; nothing on record limits it to one.
``drop-xhat-blocks``
    Also #53215: on the block path a nested ``tile_regs_acquire`` dropped all but the last
    block of ``sum(dy*gamma*x_hat)``.

The default, ``shipped``, is the kernel as it was before #53215 landed: ``double-subtract``
plus ``drop-xhat-blocks``, the two defects that fix actually removed. The overwrite hypothesis
was the reporters' reading of the code and is kept as its own model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import ml_dtypes
import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]

TILE = 32
EPS = 1e-6  # the test reference's epsilon
DEFAULT_BLOCK_SIZE = 2
# A row "fits in L1" up to this many tiles. The real factory decides from L1 size and buffer
# counts; the bug reports put the threshold at about 1024 features (32 tiles).
DEFAULT_L1_MAX_TILES = 32


class Defect(str, Enum):
    OVERWRITE_DY_GAMMA_SUM = "overwrite-dy-gamma-sum"
    DOUBLE_SUBTRACT = "double-subtract"
    DROP_XHAT_BLOCKS = "drop-xhat-blocks"


PRESETS: dict[str, frozenset[Defect]] = {
    "shipped": frozenset({Defect.DOUBLE_SUBTRACT, Defect.DROP_XHAT_BLOCKS}),
    "none": frozenset(),
}


def parse_defects(text: str) -> frozenset[Defect]:
    """``shipped``, ``none``, or a comma-separated list of defect names."""
    text = text.strip()
    if text in PRESETS:
        return PRESETS[text]
    out = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            out.add(Defect(part))
        except ValueError:
            names = ", ".join([*PRESETS, *(d.value for d in Defect)])
            raise ValueError(f"unknown defect {part!r}; choose from {names}") from None
    return frozenset(out)


def defects_label(defects: frozenset[Defect]) -> str:
    for name, preset in PRESETS.items():
        if defects == preset:
            return name
    return ",".join(sorted(d.value for d in defects))


@dataclass(frozen=True)
class KernelConfig:
    defects: frozenset[Defect] = field(default_factory=lambda: PRESETS["shipped"])
    block_size: int = DEFAULT_BLOCK_SIZE
    l1_max_tiles: int = DEFAULT_L1_MAX_TILES
    bf16_stats: bool = False  # store the forward's mean/rstd in bf16

    def fits_in_l1(self, features: int) -> bool:
        return tiles(features) <= self.l1_max_tiles

    def path(self, features: int) -> str:
        return "l1" if self.fits_in_l1(features) else f"block(block_size={self.block_size})"


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


def reference(x: F32, dy: F32, gamma: F32, eps: float = EPS) -> Grads:
    """The test's xtensor reference, in float64, from the data it is given.

    The test runners hand it the bf16-rounded data the device sees (see ``catalogue``), so a
    comparison measures the kernel, not input quantisation. Written in place: fresh
    temporaries of the NIGHTLY shape cost more in page faults than in arithmetic.
    """
    features = x.shape[1]
    xh = x.astype(np.float64)
    xh -= xh.mean(axis=1, keepdims=True)
    rstd = (1.0 / np.sqrt(np.einsum("ij,ij->i", xh, xh) / features + eps))[:, None]
    xh *= rstd  # x_hat
    dyg = dy.astype(np.float64)
    dgamma = np.einsum("ij,ij->j", dyg, xh)
    dbeta = dyg.sum(axis=0)
    dyg *= gamma.astype(np.float64)
    mean_dyg = dyg.mean(axis=1, keepdims=True)
    mean_dyg_xhat = np.einsum("ij,ij->i", dyg, xh)[:, None] / features
    dyg -= mean_dyg
    xh *= mean_dyg_xhat
    dyg -= xh
    dyg *= rstd
    return Grads(dx=dyg, dgamma=dgamma, dbeta=dbeta)


def forward_stats(x: F32, eps: float = EPS, bf16_storage: bool = False) -> tuple[F32, F32]:
    """mean and rstd as the forward pass hands them over: fp32 maths, optionally bf16 storage."""
    mean = x.mean(axis=1, keepdims=True, dtype=np.float32)
    var = np.square(x - mean).mean(axis=1, keepdims=True, dtype=np.float32)
    rstd = (1.0 / np.sqrt(var + np.float32(eps))).astype(np.float32)
    return (bf16(mean), bf16(rstd)) if bf16_storage else (mean, rstd)


def _row_sums(values: F32, cfg: KernelConfig, last_block_only: bool) -> F32:
    """fp32 per-row sum over tiles, in the order (and with the defects) of the chosen path."""
    rows, wt = values.shape[0], values.shape[1] // TILE
    per_tile: F32 = values.reshape(rows, wt, TILE).sum(axis=2, dtype=np.float32)
    if wt <= cfg.l1_max_tiles or not last_block_only:
        whole: F32 = per_tile.sum(axis=1, keepdims=True, dtype=np.float32)
        return whole
    last_start = ((wt - 1) // cfg.block_size) * cfg.block_size
    last: F32 = per_tile[:, last_start:].sum(axis=1, keepdims=True, dtype=np.float32)
    return last


def kernel(x: F32, dy: F32, gamma: F32, cfg: KernelConfig | None = None) -> Grads:
    """The device's answer: bf16 in, fp32 tile maths, bf16 out."""
    cfg = cfg or KernelConfig()
    _rows, features = x.shape
    wt = tiles(features)
    pad = wt * TILE - features
    xb, dyb, gb = bf16(x), bf16(dy), bf16(gamma)
    mean, rstd = forward_stats(xb, bf16_storage=cfg.bf16_stats)
    if pad:
        xb = np.pad(xb, ((0, 0), (0, pad)))
        dyb = np.pad(dyb, ((0, 0), (0, pad)))
        gb = np.pad(gb, ((0, 0), (0, pad)))
    mask = np.zeros((1, wt * TILE), dtype=np.float32)
    mask[:, :features] = 1.0
    x_hat = (xb - mean) * rstd * mask
    dyg = dyb * gb  # zero in the padding, since dy is padded with zeros
    sum_dyg = _row_sums(dyg, cfg, Defect.OVERWRITE_DY_GAMMA_SUM in cfg.defects)
    sum_dyg_xhat = _row_sums(dyg * x_hat, cfg, Defect.DROP_XHAT_BLOCKS in cfg.defects)
    inv_f = np.float32(1.0 / features)
    mean_dyg = sum_dyg * inv_f
    mean_dyg_xhat = sum_dyg_xhat * inv_f
    inner = dyg - mean_dyg - x_hat * mean_dyg_xhat
    if Defect.DOUBLE_SUBTRACT in cfg.defects:
        inner = inner - mean_dyg
    dx = bf16((rstd * inner)[:, :features])
    dgamma = bf16((dyb * x_hat).sum(axis=0, dtype=np.float32)[:features])
    dbeta = bf16(dyb.sum(axis=0, dtype=np.float32)[:features])
    return Grads(dx=dx, dgamma=dgamma, dbeta=dbeta)


@dataclass(frozen=True)
class Comparison:
    tensor: str
    ok: bool
    max_diff: float
    mean_diff: float


def compare(
    tensor: str,
    metal: npt.NDArray[np.floating],
    ref: npt.NDArray[np.floating],
    rtol: float,
    atol: float,
) -> Comparison:
    """``xt::allclose(metal, ref, rtol, atol)``: |metal - ref| <= atol + rtol*|ref| everywhere."""
    diff = metal.astype(np.float64)
    diff -= ref
    np.abs(diff, out=diff)
    tol = np.abs(ref)
    tol *= rtol
    tol += atol
    ok = bool((diff <= tol).all())  # NaN compares false: not close
    return Comparison(tensor, ok, float(diff.max()), float(diff.mean()))
