"""The case space shrink walks: which smaller values each axis may take, and the one-step-smaller
neighbours that make a result minimal. Pure.

Features go by whole tiles of 32 (``Wt = ceil(F/32)``, the last tile masked when ``F % 32``): a
start with a partial last tile of ``r`` features keeps it only while it matters — the ladder is
``32·w`` once dropping the partial tile still fails, else ``32·(w-1) + r``. Batch, seq and heads
only multiply into rows (the kernel tiles ``B·S·H`` rows, not each), so each is an integer >= 1.
With ``tiled_rows`` (a ttnn op's ``h x w`` in ``TILE_LAYOUT``: ``seq`` is ``h``), the rows go by
whole tiles as well.
"""

from __future__ import annotations

from dataclasses import dataclass

from lnrepro.model.case import TILE, Axis, Shape

AXES = (Axis.FEATURES, Axis.SEQ, Axis.BATCH, Axis.HEADS)  # the largest factor first


@dataclass(frozen=True)
class Step:
    """A smaller value on one axis, and how a person says the step."""

    axis: Axis
    value: int
    words: str


def partial(features: int) -> int:
    """The partial last tile's width (0 when F is whole tiles)."""
    return features % TILE


def feature_values(features: int, keep: int) -> list[int]:
    """Every feature count below ``features`` in its ladder, ascending: whole tiles (``keep`` 0)
    or whole tiles plus the kept partial tile of ``keep`` features."""
    w = -(-features // TILE)
    if keep:
        vals = [TILE * (k - 1) + keep for k in range(1, w + 1)]
    else:
        vals = [TILE * k for k in range(1, w + 1)]
    return [v for v in vals if v < features]


def ladder(axis: Axis, shape: Shape, keep: int, tiled_rows: bool = False) -> list[int]:
    """Smaller values of ``axis`` than ``shape``'s, ascending."""
    v = shape.get(axis)
    if axis is Axis.FEATURES:
        return feature_values(v, keep)
    if axis is Axis.SEQ and tiled_rows:
        return feature_values(v, 0)
    return list(range(1, v))


def sparse(values: list[int]) -> list[int]:
    """A few of ``values`` (ascending) for a search that has no failing case yet: the smallest,
    powers of two of the index, and the largest — O(log n) of them."""
    if not values:
        return []
    idx = {0, len(values) - 1}
    k = 1
    while k < len(values):
        idx.add(k)
        k *= 2
    return [values[i] for i in sorted(idx)]


def neighbours(shape: Shape, keep: int, tiled_rows: bool = False) -> list[Step]:
    """One step smaller on each axis (none where the axis is at its lower bound): one tile fewer
    (and, with a kept partial tile, that tile dropped); one fewer of batch, seq, heads."""
    out: list[Step] = []
    f = shape.features
    if keep and f > TILE:
        out.append(Step(Axis.FEATURES, f - keep, "the partial tile dropped"))
    if f - TILE >= 1:
        out.append(Step(Axis.FEATURES, f - TILE, "one tile fewer"))
    for axis in AXES[1:]:
        if axis is Axis.SEQ and tiled_rows:
            if shape.seq > TILE:
                out.append(Step(axis, shape.seq - TILE, "one tile fewer"))
            continue
        if shape.get(axis) > 1:
            out.append(Step(axis, shape.get(axis) - 1, "one fewer"))
    return out


def lower_bound(shape: Shape, axis: Axis, tiled_rows: bool = False) -> bool:
    if axis is Axis.FEATURES or (axis is Axis.SEQ and tiled_rows):
        return shape.get(axis) <= TILE
    return shape.get(axis) <= 1
