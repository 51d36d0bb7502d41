"""Numbers tt-metal's Python comparison helpers print, read into per-tensor metrics. Pure.

Where each format comes from (stored copies of tenstorrent/tt-metal, read by file and commit):

* ``tests/ttnn/utils_for_testing.py`` @cf646dc and @019b681: ``assert_with_pcc(expected,
  actual, pcc=0.9999)`` asserts ``pcc_passed`` with ``construct_pcc_assert_message``, whose
  tensor dumps are commented out, so the message is ``str()`` of ``comp_pcc``'s value: a bare
  number (``AssertionError: 0.61``), no word "PCC", no threshold. ``check_with_pcc`` returns the
  same string; ``check_with_pcc_list`` (@cf646dc) joins several with ``", "``.
* ``models/utility_functions.py`` @c6ab5b0 and ``models/common/utility_functions.py`` @a19b16a
  / @022e2c5: ``comp_pcc(golden, calculated, pcc=0.99)`` returns ``(passed, value)`` with a
  number, not a string (1.0 / 0.0 in its NaN and all-zero special cases); ``comp_allclose``
  and ``comp_equal`` say ``Max ATOL Delta: a, Max RTOL Delta: r``; ``comp_allclose_and_pcc``
  appends ``, <pcc>`` (@c6ab5b0) or ``, pcc=<pcc>`` (@022e2c5).
* ``ttnn/tt_lib/_internal/comparison_funcs.py`` @073e2a7 (the sweep tests' functions):
  ``Max ATOL Delta: a, Max RTOL Delta: r, PCC: p`` with ``, PCC check failed`` or
  ``, PCC check failed (target: t)`` appended on failure; ``comp_pcc_list`` prefixes each
  tensor's part with ``Tensor i: ``; ``PCC: True``/``False`` when both tensors are constant.
* Older ``comp_pcc`` variants return the string ``PCC: p``; tests' own lines look like
  ``dx PCC: 0.9`` or ``decoder-output min PCC 0.87 < 0.88``.

Metric names: ``pcc`` (higher is better, see :data:`lnrepro.model.gtest.HIGHER_IS_BETTER`), and
for ``Max ATOL Delta``/``Max RTOL Delta`` the existing gtest keys ``max_abs_diff`` and
``max_rel_diff`` (:data:`lnrepro.model.metrics.DEFAULT_KEYS`): the helpers compute exactly
``max|g - c|`` and ``max(|g - c| / |c|)``. The names ``atol``/``rtol`` are taken: in
:mod:`lnrepro.model.metrics` they are an allclose call's *tolerances*, not measured deltas.

A threshold is reported only where the text states it (``< 0.99``, ``(target: 0.99)``,
``expected pcc 0.99``, or, in a pytest traceback, the ``pcc = 0.99`` argument line of the
failing frame or the literal in the failing ``assert_with_pcc(…, 0.99)`` call); never a
helper's default. NaN fails any threshold. Never read as PCC: ``Max ULP Delta``, cosine
similarity, torch's ``Tensor-likes are not close!``, a shape-mismatch message.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from lnrepro.model.gtest import Metrics, add_metric, worse
from lnrepro.model.metrics import UNNAMED

PCC = "pcc"
MAX_ABS_DIFF = "max_abs_diff"  # "Max ATOL Delta" / "Max Absolute Delta"
MAX_REL_DIFF = "max_rel_diff"  # "Max RTOL Delta"

# A number as Python's str()/repr() writes a float (and a bool, for "PCC: True"), optionally
# wrapped as torch or numpy print a scalar: tensor(0.5), tensor(nan, dtype=torch.bfloat16),
# np.float64(0.5) (numpy >= 2 repr).
_NUM = (
    r"[-+]?(?:\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?"
    r"|(?i:inf(?:inity)?|nan)(?![\w.])|True(?!\w)|False(?!\w))"
)
_WRAP = r"(?:(?:tensor|(?:np|numpy)\.float(?:16|32|64))\(\s*)"


def _val(group: str) -> str:
    return rf"(?:{_WRAP}(?P<{group}>{_NUM})(?:\s*,\s*dtype=[\w.]+)?\s*\)|(?P<{group}_b>{_NUM}))"


# A tensor name as tests print it: dx, dgamma, decoder-output, layer.0.attn, out/1
_NAME = r"(?<![\w.\-/:])(?P<tensor>[A-Za-z_](?:[\w.\-/]*\w)?)"
# Words before "PCC" that are not a tensor's name
_NOT_NAMES = frozenset(
    """e a an the min minimum max maximum mean avg average got is was of for and with actual
    expected required target threshold calculated computed measured final overall low bad
    lowest worst info warning warn error debug critical assertionerror failed passed pass
    fail failure check tensor value cal comp pearson pcc result status message msg note
    summary""".split()  # noqa: SIM905
)


# --- line prefixes that are not the message -------------------------------------------------
_PREFIXES = (
    # GitHub Actions' timestamp, then an MPI rank: "2026-01-01T06:09:12.43Z [1,0]<stderr>: "
    re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z\s+"),
    re.compile(r"^\[\d+,\d+\]<std(?:out|err)>:\s?"),
    # loguru's default: "2026-01-01 06:08:53.672 | INFO     | mod:func:12 - message"
    re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \| *[A-Z]+ *\| .*? - "),
    # pytest's captured-log format: "WARNING  name:file.py:12 message"
    re.compile(r"^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\s+\S+:\d+ "),
    # pytest's exception lines in a long traceback: "E       AssertionError: 0.78"
    re.compile(r"^E(?:\s{2,}|$)"),
)


def strip_prefixes(line: str) -> str:
    """The message part of a log or traceback line (timestamps, log levels, ``E`` removed)."""
    line = line.rstrip("\r\n")
    for rx in _PREFIXES:
        m = rx.match(line)
        if m:
            line = line[m.end() :]
    return line.strip()


@dataclass(frozen=True, slots=True)
class PccReading:
    """One number read from a line.

    ``threshold`` is the required PCC when the text states it, else None (unknown: tests pass
    their own, and the helpers' messages do not repeat it). ``form`` names the printed shape
    the number came from (for tests and messages): ``assertion``, ``label``, ``allclose``,
    ``tuple``, ``compare``.
    """

    tensor: str
    metric: str
    value: float
    threshold: float | None = None
    form: str = "label"


def _num(m: re.Match[str], group: str) -> float:
    text = m.group(group) or m.group(group + "_b")
    if text == "True":
        return 1.0
    if text == "False":
        return 0.0
    return float(text)


def _tensor_name(word: str | None) -> str:
    if not word:
        return UNNAMED
    low = word.lower()
    if low in _NOT_NAMES or "pcc" in low or low.endswith(("error", "exception")):
        return UNNAMED
    return word


def _is_correlation(v: float) -> bool:
    """A Pearson correlation is in [-1, 1]; corrcoef may overshoot by a rounding error."""
    return math.isnan(v) or -1.000001 <= v <= 1.000001


# --- thresholds stated on the line ------------------------------------------------------------
_THRESHOLDS = (
    # comparison_funcs.comp_and_get_pcc @073e2a7: ", PCC check failed (target: 0.99)"
    re.compile(r"\(target:\s*" + _val("t") + r"\s*\)"),
    # tests' own words: "expected pcc 0.99", "required PCC: 0.99", "pcc_threshold=0.99"
    re.compile(
        r"(?i:\b(?:expected|required|target|threshold|min_pcc|pcc_threshold|pcc_required)"
        r"(?:[\s_]*pcc)?\s*(?:of|is|was|[:=])?\s*)" + _val("t")
    ),
)
# a reading followed by a comparison with its threshold: "0.87 < 0.99", "0.87 < required 0.99"
_COMPARE_TAIL = re.compile(
    r"\s*(?:<=?|>=?|(?i:below|under))\s*(?i:(?:the\s+)?(?:required|threshold|expected|target)"
    r"(?:\s+pcc)?\s*[:=]?\s*)?" + _val("t")
)

# --- readings -------------------------------------------------------------------------------
_LIST_TENSOR = re.compile(r"\bTensor (?P<i>\d+):\s")  # comparison_funcs.comp_pcc_list
_ATOL = re.compile(r"\bMax (?:ATOL|Absolute) Delta:\s*" + _val("v"))
_RTOL = re.compile(r"\bMax RTOL Delta:\s*" + _val("v"))
# comp_allclose_and_pcc @c6ab5b0/@a19b16a: "Max ATOL Delta: a, Max RTOL Delta: r, 0.998"
_ALLCLOSE_BARE_PCC = re.compile(
    r"\bMax RTOL Delta:\s*" + _val("r") + r",\s*" + _val("v") + r"(?![\w.(])"
)
_NAMED = (
    # "PCC of dx: 0.97", "pcc for dgamma = 0.5"
    re.compile(r"(?i:\bpcc\s+(?:of|for)\s+)" + _NAME + r"\s*(?:[:=]|(?i:is))?\s*" + _val("v")),
    # "dx_pcc=0.98", "output_pcc: 0.9"
    re.compile(r"(?<![\w.\-/:])(?P<tensor>[A-Za-z]\w*?)_(?i:pcc)\s*[:=]\s*" + _val("v")),
    # "dx PCC: 0.98", "decoder-output min PCC 0.87", "dx: PCC = 0.9"
    re.compile(
        rf"{_NAME}:?\s+(?i:(?:min(?:imum)?|lowest|worst)\s+)?(?i:pcc)\b\s*(?:[:=]|(?i:is))?\s*"
        + _val("v")
    ),
)
# "PCC: 0.98", "pcc=0.98", "PCC 0.98", "PCC is 0.98"
_LABEL = re.compile(r"(?<![\w])(?i:pcc)\b\s*(?:[:=]|(?i:is))?\s*" + _val("v"))
# comp_pcc's return value, logged: "(False, 0.78)", "(True, np.float64(0.99))"
_TUPLE = re.compile(r"\(\s*(?:np\.)?(?:True|False)_?\s*,\s*" + _val("v") + r"\s*\)")
# assert_with_pcc's message: "AssertionError: 0.78", "AssertionError: tensor(nan)";
# check_with_pcc_list's "0.99, 0.87"; a wrapper's "AssertionError: 0.0 >= 0.999"
_ASSERT = re.compile(
    rf"^AssertionError:\s*(?P<vals>{_val('v')}(?:\s*,\s*{_NUM})*)"
    rf"(?:\s*(?:<=?|>=?)\s*{_val('t')})?\s*$"
)
_NUM_RX = re.compile(_NUM)


def _blank(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


def parse_line(line: str, *, bare_assertion: bool = True) -> list[PccReading]:
    """Every PCC/ATOL/RTOL number on one line (prefixes such as loguru's are skipped).

    ``bare_assertion``: read ``AssertionError: <number>`` (``assert_with_pcc``'s whole message)
    as a PCC. Callers that know the assertion came from elsewhere turn it off; even on, the
    number must lie in [-1, 1] or be NaN.
    """
    text = strip_prefixes(line)
    if not text:
        return []
    low = text.lower()
    if not ("pcc" in low or "delta:" in low or "assertionerror" in low):
        return []  # most lines: no regex at all
    # "Tensor 0: … Tensor 1: …" (comp_pcc_list): one segment per tensor
    marks = list(_LIST_TENSOR.finditer(text))
    if marks:
        out: list[PccReading] = []
        tail_threshold = _line_thresholds(text)
        for i, m in enumerate(marks):
            end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
            for r in _parse_segment(text[m.end() : end], bare_assertion=False):
                name = f"tensor{m.group('i')}" if r.tensor == UNNAMED else r.tensor
                out.append(replace(r, tensor=name))
        return _with_threshold(out, tail_threshold)
    return _parse_segment(text, bare_assertion=bare_assertion)


def _line_thresholds(text: str) -> float | None:
    found = None
    for rx in _THRESHOLDS:
        for m in rx.finditer(text):
            found = _num(m, "t")
    return found


def _with_threshold(readings: list[PccReading], threshold: float | None) -> list[PccReading]:
    if threshold is None:
        return readings
    return [
        replace(r, threshold=threshold) if r.metric == PCC and r.threshold is None else r
        for r in readings
    ]


def _parse_segment(text: str, *, bare_assertion: bool) -> list[PccReading]:
    found: list[tuple[int, PccReading]] = []
    work = text
    threshold = None
    for rx in _THRESHOLDS:
        for m in rx.finditer(work):
            threshold = _num(m, "t")
            work = _blank(work, m.start(), m.end())

    def take(m: re.Match[str], reading: PccReading) -> None:
        nonlocal work
        end = m.end()
        if reading.metric == PCC:
            tail = _COMPARE_TAIL.match(work, end)
            if tail:
                reading = replace(reading, threshold=_num(tail, "t"))
                end = tail.end()
        found.append((m.start(), reading))
        work = _blank(work, m.start(), end)

    for m in _ATOL.finditer(work):
        found.append((m.start(), PccReading(UNNAMED, MAX_ABS_DIFF, _num(m, "v"), form="allclose")))
    for m in _RTOL.finditer(work):
        found.append((m.start(), PccReading(UNNAMED, MAX_REL_DIFF, _num(m, "v"), form="allclose")))
    for m in _ALLCLOSE_BARE_PCC.finditer(work):
        v = _num(m, "v")
        if _is_correlation(v):
            span = m.span("v") if m.group("v") else m.span("v_b")
            found.append((span[0], PccReading(UNNAMED, PCC, v, form="allclose")))
            work = _blank(work, *span)
    # the deltas are read; blank them so "…Delta: 0.5" is never a PCC
    for rx in (_ATOL, _RTOL):
        for m in rx.finditer(work):
            work = _blank(work, m.start(), m.end())
    for rx in _NAMED:
        for m in list(rx.finditer(work)):
            if work[m.start() : m.end()] != text[m.start() : m.end()]:
                continue  # overlaps something already read
            name = _tensor_name(m.group("tensor"))
            take(m, PccReading(name, PCC, _num(m, "v"), form="label"))
    for m in list(_LABEL.finditer(work)):
        if work[m.start() : m.end()] != text[m.start() : m.end()]:
            continue
        take(m, PccReading(UNNAMED, PCC, _num(m, "v"), form="label"))
    if "pcc" in text.lower():
        for m in list(_TUPLE.finditer(work)):
            v = _num(m, "v")
            if _is_correlation(v):
                take(m, PccReading(UNNAMED, PCC, v, form="tuple"))
    if bare_assertion:
        am = _ASSERT.match(work.strip())
        if am:
            if am.group("v"):  # a wrapped scalar: tensor(0.5, dtype=…) holds one number
                values = [_num(am, "v")]
            else:
                values = [float(x) for x in _NUM_RX.findall(am.group("vals"))]
            if values and all(_is_correlation(v) for v in values):
                t = _num(am, "t") if am.group("t") or am.group("t_b") else None
                names = (
                    [UNNAMED] if len(values) == 1 else [f"tensor{i}" for i in range(len(values))]
                )
                for name, v in zip(names, values, strict=True):
                    found.append((0, PccReading(name, PCC, v, t, form="assertion")))
    # a leading "dx: " names every unnamed reading on the line
    lead = re.match(_NAME + r":\s", text)
    name = _tensor_name(lead.group("tensor")) if lead else UNNAMED
    out = [r for _, r in sorted(found, key=lambda x: x[0])]
    if name != UNNAMED:
        out = [replace(r, tensor=name) if r.tensor == UNNAMED else r for r in out]
    return _with_threshold(out, threshold)


def parse_output(text: str) -> list[PccReading]:
    """Readings from printed or logged output (a console log, JUnit ``system-out``)."""
    return [r for line in text.splitlines() for r in parse_line(line)]


# --- pytest tracebacks --------------------------------------------------------------------------
# the failing frame's arguments, as pytest's long traceback prints them:
# "expected = tensor([…]), actual = tensor([…]), pcc = 0.999"
_FUNCARG_PCC = re.compile(
    r"(?:^|,\s)(?:pcc|pcc_threshold|expected_pcc|required_pcc) = " + _val("t") + r"(?:,\s|$)"
)
_PCC_CALL = re.compile(
    r"(?<![\w.])(?:\w+\.)*(?P<fn>assert_with_pcc|check_with_pcc(?:_without_tensor_printout|_list)?"
    r"|comp_pcc|comp_and_get_pcc|comp_allclose_and_pcc)\s*\("
)
# where the threshold stands among a helper's positional arguments
_PCC_POSITION = {"comp_allclose_and_pcc": 4}
_REWRITTEN_COMPARE = re.compile(
    rf"^assert (?:{_WRAP})?(?P<v>{_NUM})\)? (?P<op><=?|>=?) (?:{_WRAP})?(?P<t>{_NUM})\)?$"
)


def _call_args(text: str, start: int) -> list[str] | None:
    """Top-level arguments of the call whose "(" is at ``start - 1``; None if it never closes."""
    depth, args, cur = 0, [], []
    quote: str | None = None
    for ch in text[start:]:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                args.append("".join(cur).strip())
                return [a for a in args if a]
            depth -= 1
        elif ch == "," and depth == 0:
            args.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    return None


def _literal(arg: str) -> float | None:
    m = re.fullmatch(r"\s*(" + _NUM + r")\s*", arg)
    if not m or m.group(1) in ("True", "False"):
        return None
    return float(m.group(1))


def call_threshold(source: str) -> float | None:
    """The ``pcc`` literal of the last PCC-helper call in ``source`` (a keyword ``pcc=0.99`` or
    the positional slot: third for ``assert_with_pcc``/``check_with_pcc``/``comp_pcc``, fifth
    for ``comp_allclose_and_pcc``); None for a name, an expression or a ``def`` line."""
    found = None
    for m in _PCC_CALL.finditer(source):
        if re.search(r"\bdef\s+$", source[: m.start()]):
            continue
        args = _call_args(source, m.end())
        if args is None:
            continue
        value = None
        positional = [a for a in args if not re.match(r"^\w+\s*=(?!=)", a)]
        for a in args:
            kw = re.match(r"^pcc\s*=(?!=)\s*(.*)$", a, re.DOTALL)
            if kw:
                value = _literal(kw.group(1))
                break
        else:
            pos = _PCC_POSITION.get(m.group("fn"), 2)
            if len(positional) > pos:
                value = _literal(positional[pos])
        if value is not None:
            found = value
    return found


def parse_traceback(text: str) -> list[PccReading]:
    """Readings from a pytest failure report (the text of a JUnit ``failure``/``error``).

    Numbers are read from the exception lines (``E   …``) only: the source lines and argument
    lines around them hold thresholds and defaults, not results. A bare ``AssertionError: x``
    counts when the traceback mentions PCC at all (``assert_with_pcc``'s frame does), so an
    unrelated assertion with a small number is not taken for a correlation. The threshold comes
    from the text itself, else from the innermost ``pcc = …`` argument line of the traceback,
    else from the literal in the failing (``>``) call, else from pytest's rewritten comparison
    ``assert 0.78 >= 0.999`` following the number; a text without ``E`` lines (another
    ``--tb`` style) is read like output.
    """
    lines = text.splitlines()
    e_lines = [ln for ln in lines if re.match(r"^E(?:\s{2,}|$)", ln)]
    if not e_lines:
        return parse_output(text)
    mentions_pcc = "pcc" in text.lower()
    readings: list[PccReading] = []
    compares: list[tuple[float, float]] = []
    for ln in e_lines:
        msg = strip_prefixes(ln)
        cm = _REWRITTEN_COMPARE.match(msg)
        if cm:
            compares.append((float(cm.group("v")), float(cm.group("t"))))
            continue
        readings.extend(parse_line(ln, bare_assertion=mentions_pcc))
    frame_threshold = None
    for ln in lines:
        if ln.startswith(("E ", ">", " ", "\t")) or ln == "E":
            continue
        m = _FUNCARG_PCC.search(ln)
        if m:
            frame_threshold = _num(m, "t")
    if frame_threshold is None:
        for stmt in reversed(_statements(lines)):  # innermost frame first
            frame_threshold = call_threshold(stmt)
            if frame_threshold is not None:
                break
    out: list[PccReading] = []
    for r in readings:
        if r.metric == PCC and r.threshold is None:
            same = [
                t for v, t in compares if v == r.value or (math.isnan(v) and math.isnan(r.value))
            ]
            t = same[-1] if same else frame_threshold
            r = replace(r, threshold=t)
        out.append(r)
    if not any(r.metric == PCC for r in out) and compares and mentions_pcc:
        # "assert pcc >= 0.99" in the test: pytest's explanation is the only place with numbers
        stmts = _statements(lines)
        if stmts and "pcc" in stmts[-1].lower():
            v, t = compares[-1]
            if _is_correlation(v):
                out.append(PccReading(UNNAMED, PCC, v, t, form="compare"))
    return out


def _statements(lines: list[str]) -> list[str]:
    """The ``>`` statements of a traceback (one per long frame), with continuation lines."""
    out: list[str] = []
    for i, ln in enumerate(lines):
        if ln.startswith(">"):
            stmt = [ln[1:]]
            for nxt in lines[i + 1 : i + 12]:
                if not nxt.startswith((" ", "\t")) or not nxt.strip():
                    break
                stmt.append(nxt)
            out.append("\n".join(stmt))
    return out


# --- summaries ------------------------------------------------------------------------------------
def add_readings(
    metrics: Metrics, thresholds: dict[str, float], readings: Iterable[PccReading]
) -> None:
    """Fold readings into ``metrics`` (worst value per tensor and metric) and ``thresholds``
    (per tensor: the threshold stated with its worst PCC, else the strictest one stated)."""
    for r in readings:
        before = metrics.get(r.tensor, {}).get(r.metric)
        add_metric(metrics, r.tensor, r.metric, r.value)
        if r.metric != PCC or r.threshold is None:
            continue
        if before is None or worse(r.metric, r.value, before) or r.tensor not in thresholds:
            thresholds[r.tensor] = r.threshold


def summarize(readings: Iterable[PccReading]) -> tuple[Metrics, dict[str, float]]:
    """``(metrics, thresholds)`` of some readings; see :func:`add_readings`."""
    metrics: Metrics = {}
    thresholds: dict[str, float] = {}
    add_readings(metrics, thresholds, readings)
    return metrics, thresholds


def passes(value: float, required: float | None) -> bool | None:
    """Whether a PCC meets its threshold (inclusive, as every helper compares); None if unknown.
    NaN never passes."""
    if math.isnan(value):
        return False
    if required is None:
        return None
    return value >= required


def _show(value: float, other: float) -> str:
    """``value`` short, yet never equal to or on the wrong side of ``other`` when it is not."""
    text = repr(value)
    if len(text) <= 10:
        return text
    for digits in range(6, 18):
        text = f"{value:.{digits}g}"
        shown = float(text)
        if (shown < other) == (value < other) and (shown == other) == (value == other):
            return text
    return repr(value)


def verdict(value: float, required: float | None) -> str:
    """``pcc 0.87 < required 0.99``; ``pcc 0.99995 >= required 0.9999``; ``pcc nan (not a
    number: fails any threshold)``; ``pcc 0.87 (required value not stated)``."""
    if math.isnan(value):
        tail = f", required {required:.6g}" if required is not None else ""
        return f"pcc nan (not a number: fails any threshold{tail})"
    if required is None:
        return f"pcc {value:.6g} (required value not stated)"
    sign = ">=" if value >= required else "<"
    return f"pcc {_show(value, required)} {sign} required {_show(required, value)}"
