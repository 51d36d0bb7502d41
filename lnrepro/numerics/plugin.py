"""A pytest plugin that records how much of its tolerance every comparison in a test used.

Loaded into the test process (``pytest -p lnrepro.numerics.plugin``, or, in a ``--command``
bisect, a copy of this file put on ``PYTHONPATH`` and named by ``PYTEST_ADDOPTS``), it writes
one JSON line per test phase to the file ``$LNREPRO_MARGINS_FILE`` names::

    {"test": NODEID, "when": "call", "outcome": "passed",
     "margins": {"test_x.py:12": 0.23, ...}}

each key an assert call site (the test file's line that called the comparison), each value the
largest share of its tolerance a comparison there used (``max |actual - expected| / (atol +
rtol·|expected|)``: 1 at the edge of failing, above 1 a failure), passes included. Nothing else
changes: every wrapped function is called as it was, with the same arguments, and returns or
raises exactly what it did (the margin is computed on the side and its own errors are dropped).

Standard library only (numpy and torch when the test uses them), so the file works copied into
any Python project. Comparisons covered, from their sources:

* numpy 2.4 ``numpy/testing/_private/utils.py``: ``assert_allclose(actual, desired, rtol=1e-7,
  atol=0, equal_nan=True, ...)`` fails where ``|actual - desired| > atol + rtol·|desired|``;
  ``numpy/_core/numeric.py``: ``allclose``/``isclose(a, b, rtol=1e-05, atol=1e-08)``, the same
  rule (a test's ``assert np.allclose(...)``).
* torch 2.x ``torch/testing/_comparison.py``: ``assert_close(actual, expected, *, rtol=None,
  atol=None, ...)``, the same rule, defaults per dtype when both are None (``_DTYPE_PRECISIONS``:
  float16 1e-3/1e-5, bfloat16 1.6e-2/1e-5, float32 1.3e-6/1e-5, float64 1e-7/1e-7; other dtypes 0).
* pytest 9 ``_pytest/approx.py``: ``ApproxScalar.__eq__`` against ``ApproxScalar.tolerance``
  (``max(rel·|expected|, abs)``); every ``approx`` of a sequence or mapping compares through it.
* tt-metal ``tests/ttnn/utils_for_testing.py`` ``assert_with_pcc(expected, actual,
  pcc=0.9999)`` and ``models/common/utility_functions.py`` ``comp_pcc(golden, calculated,
  pcc=0.99)`` (returns ``(passed, value)``): margin ``(1 - got) / (1 - wanted)``, wrapped in
  every module that has them once the tests are collected.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ENV = "LNREPRO_MARGINS_FILE"
MODULE = "lnrepro_margins_plugin"  # the name this file is copied under, loaded by ``-p``
_SKIP = (os.sep + "numpy" + os.sep, os.sep + "torch" + os.sep, os.sep + "_pytest" + os.sep)
_TORCH_TOL = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex32": (1e-3, 1e-5),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}

_current: dict[str, float] | None = None  # the running test's margins, by call site
_depth = 0  # wrapped comparisons running now (one inside another is not counted again)
_installed: list[tuple[Any, str, Any]] = []  # (owner, name, original): undone at the end


def _site() -> str:
    """The call site of the comparison: the first frame outside numpy, torch, pytest, here."""
    f = sys._getframe(2)
    here = Path(__file__).resolve()
    while f is not None:
        name = f.f_code.co_filename
        if not any(s in name for s in _SKIP) and Path(name).resolve() != here:
            return f"{Path(name).name}:{f.f_lineno}"
        f = f.f_back  # type: ignore[assignment]
    return "?"


def _note(used: float) -> None:
    if _current is None:
        return
    key = _site()
    old = _current.get(key)
    if old is None or used != used or (old == old and used > old):
        _current[key] = used


def _used_numpy(actual: Any, desired: Any, rtol: float, atol: float, equal_nan: bool) -> float:
    import numpy as np

    a = np.asarray(actual, dtype=np.complex128 if np.iscomplexobj(actual) else np.float64)
    d = np.asarray(desired, dtype=a.dtype)
    a, d = np.broadcast_arrays(a, d)
    if a.size == 0:
        return 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        diff = np.abs(a - d)
        tol = atol + rtol * np.abs(d)
        r = np.where(diff == 0, 0.0, diff / tol)
        both_nan = np.isnan(a) & np.isnan(d)
        r = np.where(both_nan, 0.0 if equal_nan else math.inf, r)
        r = np.where(np.isnan(r), math.inf, r)  # one side NaN: as far off as it gets
        same_inf = np.isinf(a) & np.isinf(d) & (a == d)
        r = np.where(same_inf, 0.0, r)
    return float(np.max(r))


def _wrap(owner: Any, name: str, margin: Callable[..., float | None]) -> None:
    """Replace ``owner.name`` by a function that computes ``margin(*args, **kwargs)`` on the side
    (never raising), then calls the original with the same arguments and returns or raises
    exactly what it does."""
    original = getattr(owner, name, None)
    if original is None or getattr(original, "__lnrepro_margin__", False):
        return

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        global _depth
        __tracebackhide__ = True  # pytest shows the test's frames as it would without us
        if _depth:  # a comparison inside another (assert_with_pcc calls comp_pcc): counted once
            return original(*args, **kwargs)
        try:
            used = margin(*args, **kwargs)
        except Exception:  # noqa: BLE001 -- a margin that cannot be computed: the comparison still runs
            used = None
        if used is not None:
            _note(used)
        _depth += 1
        try:
            return original(*args, **kwargs)
        finally:
            _depth -= 1

    wrapper.__lnrepro_margin__ = True  # type: ignore[attr-defined]
    setattr(owner, name, wrapper)
    _installed.append((owner, name, original))


def _numpy_margin(defaults: tuple[float, float]) -> Callable[..., float | None]:
    def margin(actual: Any, desired: Any, *rest: Any, **kw: Any) -> float | None:
        rtol = kw.get("rtol", rest[0] if len(rest) > 0 else defaults[0])
        atol = kw.get("atol", rest[1] if len(rest) > 1 else defaults[1])
        equal_nan = kw.get("equal_nan", rest[2] if len(rest) > 2 else defaults is _ASSERT)
        return _used_numpy(actual, desired, float(rtol), float(atol), bool(equal_nan))

    return margin


_ASSERT = (1e-7, 0.0)  # assert_allclose's defaults (equal_nan=True)
_CLOSE = (1e-5, 1e-8)  # allclose's and isclose's (equal_nan=False)


def _torch_margin(actual: Any, expected: Any, *rest: Any, **kw: Any) -> float | None:
    import torch

    if not (isinstance(actual, torch.Tensor) and isinstance(expected, torch.Tensor)):
        return None
    rtol, atol = kw.get("rtol"), kw.get("atol")
    if rtol is None and atol is None:
        rtol, atol = _TORCH_TOL.get(str(actual.dtype).removeprefix("torch."), (0.0, 0.0))
    a = actual.detach().to("cpu", torch.float64).numpy()
    e = expected.detach().to("cpu", torch.float64).numpy()
    return _used_numpy(a, e, float(rtol or 0.0), float(atol or 0.0), bool(kw.get("equal_nan")))


def _approx_margin(self: Any, actual: Any) -> float | None:
    expected = self.expected
    if any(isinstance(x, bool) or not isinstance(x, int | float) for x in (actual, expected)):
        return None
    diff = abs(float(actual) - float(expected))
    if diff == 0:
        return 0.0
    tol = float(self.tolerance)
    return diff / tol if tol > 0 else math.inf


def _pcc_margin(wanted_default: float, where: int) -> Callable[..., float | None]:
    def margin(*args: Any, **kw: Any) -> float | None:
        import numpy as np

        a, b = (np.asarray(_plain(x), dtype=np.float64).ravel() for x in args[:2])
        wanted = float(kw.get("pcc", args[where] if len(args) > where else wanted_default))
        if a.size != b.size or a.size < 2 or wanted >= 1:
            return None
        with np.errstate(divide="ignore", invalid="ignore"):
            got = float(np.corrcoef(a, b)[0, 1])
        if got != got:
            return None  # constant tensors: the helpers' own special cases decide
        return max(0.0, 1.0 - got) / (1.0 - wanted)

    return margin


def _plain(x: Any) -> Any:
    """A torch tensor (or ttnn's, converted by the helper before) as numpy."""
    return x.detach().to("cpu").float().numpy() if hasattr(x, "detach") else x


def install() -> None:
    """Wrap every comparison that is importable now (numpy, torch, pytest.approx)."""
    with contextlib.suppress(ImportError):
        import numpy as np
        import numpy.testing as npt

        _wrap(npt, "assert_allclose", _numpy_margin(_ASSERT))
        _wrap(np, "allclose", _numpy_margin(_CLOSE))
    with contextlib.suppress(ImportError):
        import torch.testing

        _wrap(torch.testing, "assert_close", _torch_margin)
    with contextlib.suppress(ImportError):
        from _pytest.approx import ApproxScalar

        _wrap(ApproxScalar, "__eq__", _approx_margin)


def install_pcc() -> None:
    """tt-metal's PCC helpers, in every loaded module that has them (a test module imports them
    by name: the name it holds is wrapped too)."""
    for mod in list(sys.modules.values()):
        for name, where, default in (("assert_with_pcc", 2, 0.9999), ("comp_pcc", 2, 0.99)):
            fn = getattr(mod, name, None)
            if callable(fn) and getattr(fn, "__module__", "").split(".")[0] in ("tests", "models"):
                _wrap(mod, name, _pcc_margin(default, where))


def uninstall() -> None:
    while _installed:
        owner, name, original = _installed.pop()
        setattr(owner, name, original)


# ---------------------------------------------------------------------- pytest hooks
def pytest_configure(config: Any) -> None:
    if os.environ.get(ENV):
        install()


def pytest_collection_finish(session: Any) -> None:
    if os.environ.get(ENV):
        install_pcc()


def pytest_unconfigure(config: Any) -> None:
    uninstall()


def pytest_runtest_logreport(report: Any) -> None:
    """A test's comparisons are those between the end of its set-up and its call's report (the
    set-up's report is logged when its fixtures are ready, the call's before its teardown): no
    hook wrapper, so this module imports no pytest, and lnrepro's own process, which reads the
    file (:func:`read`) with no pytest installed, can import it."""
    global _current
    if report.when == "setup":
        _current = {} if report.outcome == "passed" else None
        return
    if report.when != "call":
        return
    margins, _current = _current or {}, None
    path = os.environ.get(ENV)
    if not path:
        return
    line = {
        "test": report.nodeid,
        "when": report.when,
        "outcome": report.outcome,
        "margins": margins,
    }
    with Path(path).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(line) + "\n")


# ---------------------------------------------------------------------- lnrepro's side
def read(path: Path) -> dict[str, float]:
    """``<nodeid>/<file:line>`` -> the share of tolerance used, from the plugin's file (the
    worst when a test ran more than once); a line that cannot be read is skipped."""
    return {
        f"{test}/{site}": v for test, sites in read_tests(path).items() for site, v in sites.items()
    }


def read_tests(path: Path) -> dict[str, dict[str, float]]:
    """Node id -> call site -> the share of tolerance used (the worst when a test ran more than
    once); a line that cannot be read is skipped."""
    out: dict[str, dict[str, float]] = {}
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return out
    for raw in text.splitlines():
        try:
            doc = json.loads(raw)
            margins = doc["margins"]
            test = str(doc["test"])
        except (ValueError, KeyError, TypeError):
            continue
        if not isinstance(margins, dict):
            continue
        sites = out.setdefault(test, {})
        for site, value in margins.items():
            if not isinstance(value, int | float):
                continue
            v = float(value)
            if site not in sites or not v <= sites[site]:
                sites[site] = v
    return out
