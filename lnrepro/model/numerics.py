"""What a numerics library's failure message says about one comparison, as typed data.

Written by :mod:`lnrepro.numerics.messages` (which reads the messages) into a test result's
``comparisons`` (``lnrepro.run/5``). Every number is the one the library printed; a number the
message does not give is None, never a guess. Pure data.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from lnrepro.model.codec import Real


class Form(str, Enum):
    """Which message a comparison was read from (library, and the wording's era)."""

    TORCH_TENSORS = "torch.assert_close:tensors"  # "Tensor-likes are not close!"
    TORCH_SCALARS = "torch.assert_close:scalars"  # "Scalars are not close!"
    TORCH_TESTCASE = "torch.TestCase"  # the sentence before assert_close ("With rtol=… found N…")
    NUMPY_1 = "numpy-1"  # maxima over every element; " x:"/" y:"
    NUMPY_2 = "numpy-2"  # maxima "among violations"; " ACTUAL:"/" DESIRED:"
    NUMPY_2_4 = "numpy-2.4"  # numpy 2 plus the block of mismatch indices
    PYTEST_APPROX = "pytest.approx"  # "comparison failed" (a scalar, or a table for arrays)
    PCC = "pcc"  # tt-metal's PCC helpers (lnrepro.pytests.pcc)


@dataclass(frozen=True, slots=True, kw_only=True)
class Comparison:
    """One failed comparison, as its library printed it.

    ``mismatched``/``total``: the element counts (never derived from a rounded percentage: torch
    prints 154 of 10 million as ``(0.0%)``). ``max_abs_diff``/``max_rel_diff``: the greatest
    differences printed, ``over_violations`` says whether the library took them over the
    violating elements only (torch, numpy >= 2.0, pytest.approx) or over all (numpy 1.x);
    ``abs_index``/``rel_index``: where (torch); ``mismatch_indices``: the indices numpy 2.4
    lists (at most 5). Tolerances: ``rtol``/``atol`` as printed; ``allowed``: the absolute
    difference allowed at the worst element when that is what is printed (pytest.approx's
    ``± t``, numpy's ``decimal`` as ``1.5 * 10**-decimal``). ``item``: the nested input
    (torch's ``[0]['w']``). ``note``: a message with no numbers (``nan location mismatch``).
    """

    form: Form
    header: str = ""  # the message's first line ("Tensor-likes are not close!")
    item: str = ""
    mismatched: int | None = None
    total: int | None = None
    max_abs_diff: Real | None = None
    max_rel_diff: Real | None = None
    abs_index: tuple[int, ...] | None = None
    rel_index: tuple[int, ...] | None = None
    mismatch_indices: tuple[tuple[int, ...], ...] = ()
    over_violations: bool | None = None
    rtol: Real | None = None
    atol: Real | None = None
    allowed: Real | None = None
    decimal: int | None = None
    actual: Real | None = None  # a scalar comparison's values
    expected: Real | None = None
    pcc: Real | None = None
    pcc_threshold: Real | None = None
    note: str = ""

    @property
    def tensor(self) -> str:
        """The name metrics are filed under: the nested item, else unnamed."""
        from lnrepro.model.metrics import UNNAMED

        return self.item or UNNAMED

    def metrics(self) -> dict[str, float]:
        """The numbers as per-test metrics (keys of :mod:`lnrepro.model.metrics`): counts,
        greatest differences, tolerances, pcc."""
        pairs = (
            ("mismatched", self.mismatched),
            ("elements", self.total),
            ("max_abs_diff", self.max_abs_diff),
            ("max_rel_diff", self.max_rel_diff),
            ("rtol", self.rtol),
            ("atol", self.atol),
            ("pcc", self.pcc),
        )
        return {key: float(value) for key, value in pairs if value is not None}
