"""The failure messages of the numerics libraries' comparison helpers, read as typed metrics. Pure.

Each message gives a :class:`~lnrepro.model.numerics.Comparison`: the mismatched and total
elements (from the two counts, never the rounded percentage), the greatest absolute and relative
differences, where they are, and the tolerance allowed. Where each wording comes from (read in
the libraries' sources, and produced by the real libraries in tests/numerics):

* **torch** ``torch/testing/_comparison.py`` (pytorch/pytorch @539f6ce and @003029b; the CPU
  build of torch 2.13): ``_make_mismatch_msg`` writes ``<identifier> are not close!`` (``equal``
  when rtol and atol are both 0), a blank line, then for tensors ``Mismatched elements: n / t
  (p:.1%)`` and ``Greatest absolute difference: d at index i (up to atol allowed)`` and the same
  for ``relative`` (rtol); for scalars (``make_scalar_mismatch_msg``) ``Absolute difference: d
  (up to … allowed)``, newer copies with an ``Expected e but got a.`` line first. The ``(up to …
  allowed)`` suffix is absent for equality. ``ErrorMeta.to_error`` appends ``The failure
  occurred for item [0]['w']`` for nested inputs. Before assert_close, PyTorch's TestCase printed
  one sentence: ``With rtol=r and atol=a, found n element(s) (out of t) whose difference(s)
  exceeded the margin of error (including k nan comparisons). The greatest difference was d (a
  vs. b), which occurred at index (i, j).`` (a flat index prints as a bare number).
* **numpy** ``assert_array_compare`` in ``numpy/testing/_private/utils.py`` (read at v1.26.4,
  v2.0 and v2.4; produced with numpy 1.26.4, 2.0.2 and 2.4.6): a header (``Not equal to
  tolerance rtol=r, atol=a`` for assert_allclose, ``Arrays are not almost equal to d decimals``
  for assert_array_almost_equal, whose test is ``abs(desired-actual) < 1.5 * 10**-d``, ``Arrays
  are not equal``), the user's ``err_msg`` on its own line, ``Mismatched elements: n / t
  (p:.3g%)``, then in 1.x ``Max absolute difference: d`` / ``Max relative difference: d`` over
  every element, and from 2.0 ``… among violations: d`` over the violating elements only (the
  same data can give a smaller number). From 2.4 (numpy PR #29112) a block ``Mismatch at
  index:`` / ``Mismatch at indices:`` / ``First 5 mismatches are at indices:`` with lines
  `` [i, j]: a (ACTUAL), d (DESIRED)`` follows the counts. ``x and y nan location mismatch``
  (2.x: ``nan location mismatch``) has no numbers. JAX's ``public_test_util`` calls numpy's
  ``assert_allclose`` (the same message), and TensorFlow's ``assertAllClose`` ends in it too.
* **pytest.approx** ``src/_pytest/python_api.py`` (pytest 8.x; ``approx.py`` in 9.x, produced
  with pytest 9.0): scalars ``comparison failed`` / ``Obtained: a`` / ``Expected: e ± t``;
  sequences and arrays ``comparison failed. Mismatched elements: n / t:``, ``Max absolute
  difference: d``, ``Max relative difference: d`` and a table ``Index | Obtained | Expected``
  whose rows are ``(1, 1) | 4.0 | 4.01 ± 4.0e-06``.
* **tt-metal's PCC helpers**: :mod:`lnrepro.pytests.pcc` reads them; each reading becomes a
  comparison of form ``pcc``.

Input is a message, or a pytest failure report (only its ``E`` lines are read: source lines and
frame arguments hold code, not results).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace

from lnrepro.model.numerics import Comparison, Form

_NUM = r"[-+]?(?:\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|(?i:inf(?:inity)?|nan))"
# torch.bfloat16 scalars and numpy 2's reprs: "tensor(0.5)", "np.float64(0.5)"
_WRAPPED = r"(?:(?:tensor|(?:np|numpy)\.\w+)\()?(?P<{g}>" + _NUM + r")(?:,\s*dtype=[\w.]+)?\)?"
_INDEX = r"(?P<{g}>\((?:\s*-?\d+\s*,?)*\)|-?\d+|\[(?:\s*-?\d+\s*,?)*\])"


def _v(group: str) -> str:
    return _WRAPPED.replace("{g}", group)


def _i(group: str) -> str:
    return _INDEX.replace("{g}", group)


# torch's and numpy's count line (the rounded percentage is not read)
_COUNT = re.compile(r"^Mismatched elements: (?P<n>\d+) / (?P<t>\d+) \((?P<p>[^)]*)\)$")

# ---- torch -------------------------------------------------------------------------------------
_TORCH_HEAD = re.compile(r"^(?P<ident>\S.*?) are not (?P<kind>close|equal)!$")
_TORCH_GREATEST = re.compile(
    rf"^Greatest (?P<kind>absolute|relative) difference: {_v('d')} at index {_i('idx')}"
    rf"(?: \(up to {_v('tol')} allowed\))?$"
)
_TORCH_SCALAR_DIFF = re.compile(
    rf"^(?P<kind>Absolute|Relative) difference: {_v('d')}(?: \(up to {_v('tol')} allowed\))?$"
)
_TORCH_EXPECTED = re.compile(r"^Expected " + _v("e") + r" but got " + _v("a") + r"\.$")
_TORCH_ITEM = re.compile(r"^The failure occurred for item (?P<item>\[.*\])$")
_TORCH_TESTCASE = re.compile(
    rf"With rtol={_v('rtol')} and atol={_v('atol')}, found (?P<n>\d+) element\(s\) "
    r"\(out of (?P<t>\d+)\) whose difference\(s\) exceeded the margin of error \(including "
    rf"(?P<nans>\d+) nan comparisons\)\.(?: The greatest difference was {_v('d')} "
    rf"\({_v('a')} vs\. {_v('b')}\), which occurred at index {_i('idx')}\.)?"
)

# ---- numpy -------------------------------------------------------------------------------------
_NP_TOL = re.compile(r"^Not equal to tolerance rtol=" + _v("rtol") + r", atol=" + _v("atol") + r"$")
_NP_DECIMAL = re.compile(r"^Arrays are not almost equal to (?P<dec>-?\d+) decimals$")
_NP_EQUAL = re.compile(r"^Arrays are not equal$")
_NP_MAX = re.compile(
    r"^Max (?P<kind>absolute|relative) difference(?P<viol> among violations)?: " + _v("d") + r"$"
)
_NP_WHERE_HEAD = re.compile(
    r"^(?:Mismatch at index:|Mismatch at indices:|First \d+ mismatches are at indices:)$"
)
_NP_WHERE_ROW = re.compile(r"^\[(?P<idx>[-\d,\s]*)\]: .* \(ACTUAL\), .* \(DESIRED\)$")
_NP_NAN = re.compile(r"^(?:x and y )?(?P<what>[+-]?(?:nan|inf)) location mismatch:?$")
_NP_ARRAYS = re.compile(r"^(?:x|y|ACTUAL|DESIRED): ")

# ---- pytest.approx -----------------------------------------------------------------------------
_AP_SCALAR_HEAD = re.compile(r"^comparison failed$")
_AP_ARRAY_HEAD = re.compile(r"^comparison failed\. Mismatched elements: (?P<n>\d+) / (?P<t>\d+):$")
_AP_OBTAINED = re.compile(r"^Obtained: " + _v("a") + r"$")
_AP_EXPECTED = re.compile(r"^Expected: " + _v("e") + r" ± " + _v("tol") + r"$")
_AP_MAX = re.compile(r"^Max (?P<kind>absolute|relative) difference: " + _v("d") + r"$")
_AP_TABLE_HEAD = re.compile(r"^Index\s*\|\s*Obtained\s*\|\s*Expected\s*$")
_AP_ROW = re.compile(
    rf"^(?P<idx>\([-\d,\s]*\)|-?\d+|\S+)\s*\|\s*{_v('a')}\s*\|\s*{_v('e')} ± {_v('tol')}\s*$"
)

_HEADS = (_TORCH_HEAD, _NP_TOL, _NP_DECIMAL, _NP_EQUAL, _NP_NAN, _AP_SCALAR_HEAD, _AP_ARRAY_HEAD)
_E_LINE = re.compile(r"^E(?:\s|$)")
_EXC_PREFIX = re.compile(r"^(?:[\w.]*(?:AssertionError|Error|Exception)):\s*")


def _num(m: re.Match[str], group: str) -> float | None:
    text = m.group(group)
    return None if text is None else float(text)


def _index(text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    return tuple(int(x) for x in re.findall(r"-?\d+", text))


def _with_diff(c: Comparison, m: re.Match[str], group: str) -> Comparison:
    """``c`` with the greatest absolute or relative difference (by ``m``'s ``kind``) read."""
    if m.group("kind").lower() == "absolute":
        return replace(c, max_abs_diff=_num(m, group))
    return replace(c, max_rel_diff=_num(m, group))


def message_lines(text: str) -> list[str]:
    """The lines of the message(s) in ``text``, stripped: a pytest report's ``E`` lines with the
    ``E`` column and an exception's name removed, else every line."""
    raw = text.splitlines()
    if any(_E_LINE.match(ln) for ln in raw):
        raw = [ln[1:] for ln in raw if _E_LINE.match(ln)]
    return [_EXC_PREFIX.sub("", ln.strip(), count=1) for ln in raw]


@dataclass
class _Block:
    head: re.Match[str]
    kind: re.Pattern[str]
    lines: list[str] = field(default_factory=list)


def _blocks(lines: list[str]) -> list[_Block]:
    blocks: list[_Block] = []
    for ln in lines:
        for rx in _HEADS:
            m = rx.match(ln)
            if m:
                blocks.append(_Block(m, rx))
                break
        else:
            if blocks:
                blocks[-1].lines.append(ln)
    return blocks


def read_message(text: str) -> list[Comparison]:
    """Every comparison a message (or a pytest failure report) states, in order.

    A message of no known library gives an empty list; so does a torch or numpy message whose
    numbers are missing (a user's ``msg=`` replaced it): nothing is guessed.
    """
    lines = message_lines(text)
    found = [c for b in _blocks(lines) if (c := _read_block(b)) is not None]
    return found + [_testcase(m) for m in _TORCH_TESTCASE.finditer(" ".join(lines))]


def _read_block(b: _Block) -> Comparison | None:
    if b.kind is _TORCH_HEAD:
        return _torch(b)
    if b.kind in (_NP_TOL, _NP_DECIMAL, _NP_EQUAL):
        return _numpy(b)
    if b.kind is _NP_NAN:
        return Comparison(
            form=Form.NUMPY_2 if not b.head.group(0).startswith("x and y") else Form.NUMPY_1,
            header=b.head.group(0),
            note=f"{b.head.group('what')} location mismatch",
        )
    return _approx(b)


def _torch(b: _Block) -> Comparison | None:
    equal = b.head.group("kind") == "equal"
    tensors = b.head.group("ident") != "Scalars"
    c = Comparison(
        form=Form.TORCH_TENSORS,
        header=b.head.group(0),
        rtol=0.0 if equal else None,
        atol=0.0 if equal else None,
        over_violations=True,
    )
    saw = False
    for ln in b.lines:
        if m := _COUNT.match(ln):
            c = replace(c, mismatched=int(m.group("n")), total=int(m.group("t")))
            saw = True
        elif m := (_TORCH_GREATEST.match(ln) or _TORCH_SCALAR_DIFF.match(ln)):
            d, tol, idx = _num(m, "d"), _num(m, "tol"), _index(m.groupdict().get("idx"))
            if m.group("kind").lower() == "absolute":
                c = replace(c, max_abs_diff=d, abs_index=idx, atol=c.atol if tol is None else tol)
            else:
                c = replace(c, max_rel_diff=d, rel_index=idx, rtol=c.rtol if tol is None else tol)
            tensors = tensors and m.re is _TORCH_GREATEST  # a scalar's difference has no index
            saw = True
        elif m := _TORCH_EXPECTED.match(ln):
            c = replace(c, expected=_num(m, "e"), actual=_num(m, "a"))
        elif m := _TORCH_ITEM.match(ln):
            c = replace(c, item=m.group("item"))
    if not saw:
        return None
    if not tensors:
        c = replace(c, form=Form.TORCH_SCALARS, mismatched=1, total=1)
    return c


def _testcase(m: re.Match[str]) -> Comparison:
    # one difference is printed (absolute), with its two values and where; no relative one
    return Comparison(
        form=Form.TORCH_TESTCASE,
        header=m.group(0)[: m.group(0).find(",")],
        mismatched=int(m.group("n")),
        total=int(m.group("t")),
        max_abs_diff=_num(m, "d"),
        abs_index=_index(m.group("idx")),
        over_violations=False,
        rtol=_num(m, "rtol"),
        atol=_num(m, "atol"),
        actual=_num(m, "a"),
        expected=_num(m, "b"),
        note=f"{m.group('nans')} nan comparison(s)" if m.group("nans") != "0" else "",
    )


def _numpy(b: _Block) -> Comparison | None:
    head = b.head
    c = Comparison(form=Form.NUMPY_1, header=head.group(0))
    if b.kind is _NP_TOL:
        c = replace(c, rtol=_num(head, "rtol"), atol=_num(head, "atol"))
    elif b.kind is _NP_DECIMAL:
        dec = int(head.group("dec"))
        c = replace(c, decimal=dec, rtol=0.0, allowed=1.5 * 10.0**-dec)
    else:
        c = replace(c, rtol=0.0, atol=0.0)
    where: list[tuple[int, ...]] = []
    listing = False
    saw = False
    for ln in b.lines:
        if m := _COUNT.match(ln):
            c = replace(c, mismatched=int(m.group("n")), total=int(m.group("t")))
            saw = True
        elif _NP_WHERE_HEAD.match(ln):
            listing = True
        elif listing and (m := _NP_WHERE_ROW.match(ln)):
            where.append(tuple(int(x) for x in re.findall(r"-?\d+", m.group("idx"))))
        elif m := _NP_MAX.match(ln):
            listing = False
            c = _with_diff(replace(c, over_violations=bool(m.group("viol"))), m, "d")
            if m.group("viol"):
                c = replace(c, form=Form.NUMPY_2)
            saw = True
        elif _NP_ARRAYS.match(ln):
            break
    if not saw:
        return None
    if where:
        c = replace(c, form=Form.NUMPY_2_4, mismatch_indices=tuple(where))
    return c


def _approx(b: _Block) -> Comparison | None:
    head = b.head
    if b.kind is _AP_ARRAY_HEAD:
        c = Comparison(
            form=Form.PYTEST_APPROX,
            header="comparison failed",
            mismatched=int(head.group("n")),
            total=int(head.group("t")),
            over_violations=True,
        )
        rows: list[tuple[float, tuple[int, ...] | None, float]] = []
        table = False
        for ln in b.lines:
            if m := _AP_MAX.match(ln):
                c = _with_diff(c, m, "d")
            elif _AP_TABLE_HEAD.match(ln):
                table = True
            elif table and (m := _AP_ROW.match(ln)):
                a, e, tol = _num(m, "a"), _num(m, "e"), _num(m, "tol")
                if a is not None and e is not None and tol is not None:
                    rows.append((abs(a - e), _index(m.group("idx")), tol))
        if rows:
            worst = max(rows, key=lambda r: (math.isnan(r[0]), r[0]))
            c = replace(c, abs_index=worst[1], allowed=worst[2])
        return c
    a = e = tol = None
    for ln in b.lines:
        if m := _AP_OBTAINED.match(ln):
            a = _num(m, "a")
        elif m := _AP_EXPECTED.match(ln):
            e, tol = _num(m, "e"), _num(m, "tol")
    if a is None or e is None:
        return None
    diff = abs(a - e)
    return Comparison(
        form=Form.PYTEST_APPROX,
        header="comparison failed",
        mismatched=1,
        total=1,
        max_abs_diff=diff,
        max_rel_diff=diff / abs(e) if e != 0 else math.inf,
        allowed=tol,
        actual=a,
        expected=e,
        over_violations=True,
    )


def read_report(text: str) -> list[Comparison]:
    """The comparisons of a pytest failure report: the libraries' messages, else tt-metal's PCC
    lines (:func:`lnrepro.pytests.pcc.parse_traceback`)."""
    found = read_message(text)
    if found:
        return found
    from lnrepro.pytests.pcc import PCC, parse_traceback

    return [
        Comparison(
            form=Form.PCC,
            item="" if r.tensor == "(unnamed)" else r.tensor,
            pcc=r.value,
            pcc_threshold=r.threshold,
        )
        for r in parse_traceback(text)
        if r.metric == PCC
    ]
