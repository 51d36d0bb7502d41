"""Numbers a numerical test prints about how wrong it was, per tensor.

Defaults follow tt-train's LayerNorm backward tests across versions:

* ``dx FAILED: max_diff=1000, mean_diff=1004.21`` (the bug-report branch),
* ``max_abs_diff=1.06631`` (after tt-metal PR #53215),
* the tolerance of a failed ``xt::allclose(metal_dx_flat, dx_ref, 1.0e-3F, 5e-1F)``
  (tensor ``dx``, ``rtol`` 1e-3, ``atol`` 0.5).

The shapes of these lines change between versions, so every pattern is a field of
:class:`MetricRules`; ``extra_patterns`` take any regex with named groups (``tensor``
plus one group per metric).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

# a number as C++ streams and printf write it, non-finite values included (inf, -inf, nan, in any case)
NUMBER = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|(?i:inf(?:inity)?|nan)\b)"


def share(used: float, digits: int = 0) -> str:
    """A share of a tolerance as a person reads it: ``23%`` up to 999%, then a multiple
    (``100,000×``), never ``10000000%``; ``NaN`` and ``∞×`` as they are."""
    if used != used:
        return "NaN"
    if used in (float("inf"), float("-inf")):
        return "∞×" if used > 0 else "-∞×"
    if abs(used) < 10:
        return f"{100 * used:.{digits}f}%"
    return f"{used:,.0f}×"


UNNAMED = "(unnamed)"  # the tensor of a metric line that names none
DEFAULT_KEYS = (
    "max_diff",
    "mean_diff",
    "max_abs_diff",
    "mean_abs_diff",
    "max_rel_diff",
    "mean_rel_diff",
)


@dataclass(frozen=True, kw_only=True)
class MetricRules:
    keys: tuple[str, ...] = DEFAULT_KEYS
    # where the tensor's name stands on a line of key=value pairs: "dx FAILED: " or "dx: "
    tensor_pattern: str = r"(?:^|\s)(?P<tensor>[A-Za-z_]\w*)(?:\s+FAILED)?:\s"
    allclose_pattern: str = (
        r"allclose\(\s*(?P<actual>[\w.:\[\]]+)\s*,\s*(?P<expected>[\w.:\[\]]+)\s*,\s*"
        r"(?P<rtol>" + NUMBER + r")[fF]?\s*,\s*(?P<atol>" + NUMBER + r")[fF]?\s*\)"
    )
    # how a variable name in an allclose call maps to a tensor name: metal_dx_flat -> dx
    strip_prefixes: tuple[str, ...] = ("metal_", "tt_", "device_")
    strip_suffixes: tuple[str, ...] = ("_flat", "_ref", "_expected", "_actual")
    extra_patterns: tuple[str, ...] = field(default_factory=tuple)

    # --- compiled forms -------------------------------------------------
    @cached_property
    def _pairs(self) -> re.Pattern[str]:
        keys = "|".join(re.escape(k) for k in sorted(self.keys, key=len, reverse=True))
        return re.compile(r"\b(?P<key>" + keys + r")\s*[=:]\s*(?P<value>" + NUMBER + r")")

    @cached_property
    def _tensor(self) -> re.Pattern[str]:
        return re.compile(self.tensor_pattern)

    @cached_property
    def _allclose(self) -> re.Pattern[str]:
        return re.compile(self.allclose_pattern)

    @cached_property
    def _extra(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(p) for p in self.extra_patterns)

    def trigger_patterns(self) -> list[bytes]:
        """Regexes (bytes) that find every candidate metric line in a big buffer.

        Each starts with a literal, so the regex engine's literal search runs at GB/s;
        all of ``max_diff``, ``mean_abs_diff``, ... share one search for ``_diff``.
        ``allclose(`` needs none: it stands in a failure block, which is read line by line.
        """
        pats = [re.escape(c.encode()) for c in self._cores if c != "allclose("]
        pats.extend(_unname(p).encode() for p in self.extra_patterns)
        return pats

    # --- extraction -----------------------------------------------------
    def tensor_name(self, variable: str) -> str:
        name = variable.rsplit(".", 1)[-1].rsplit("::", 1)[-1]
        for p in self.strip_prefixes:
            if name.startswith(p) and len(name) > len(p):
                name = name[len(p) :]
        for s in self.strip_suffixes:
            if name.endswith(s) and len(name) > len(s):
                name = name[: -len(s)]
        return name

    @cached_property
    def _cores(self) -> tuple[str, ...]:
        """Shortest literals every metric line contains: the keys' tails from their first "_"."""
        tails = sorted({k[k.find("_") :] if "_" in k else k for k in self.keys}, key=len)
        cores: list[str] = []
        for t in tails:
            if not any(c in t for c in cores):
                cores.append(t)
        return (*cores, "allclose(")

    def extract(self, line: str) -> list[tuple[str, str, float]]:
        """Every (tensor, metric, value) on one line; tensor "" when the line names none."""
        if not self.extra_patterns and not any(c in line for c in self._cores):
            return []  # most lines: no regex at all
        found: list[tuple[str, str, float]] = []
        pairs = list(self._pairs.finditer(line))
        if pairs:
            m = self._tensor.search(line, 0, pairs[0].start())
            lead = line[: pairs[0].start()].split()
            # "dx FAILED: max_diff=…" or "dx: …" name the tensor; "dx max_abs_diff=…" too (one
            # word before the numbers); a line that names none: UNNAMED, never an empty name
            tensor = (
                m.group("tensor")
                if m
                else (lead[0] if len(lead) == 1 and lead[0].isidentifier() else UNNAMED)
            )
            found.extend((tensor, p.group("key"), _num(p.group("value"))) for p in pairs)
        for m in self._allclose.finditer(line):
            tensor = self.tensor_name(m.group("actual")) or self.tensor_name(m.group("expected"))
            found.append((tensor, "rtol", _num(m.group("rtol"))))
            found.append((tensor, "atol", _num(m.group("atol"))))
        for rx in self._extra:
            for m in rx.finditer(line):
                groups = m.groupdict()
                tensor = groups.pop("tensor", None) or UNNAMED
                for key, value in groups.items():
                    if value is None:
                        continue
                    try:
                        found.append((tensor, key, _num(value)))
                    except ValueError:
                        continue
        return found


def _num(text: str) -> float:
    """A printed number as a float: ``1000f`` (a C++ literal's suffix), ``-inf``, ``NaN``."""
    if text[-1:] in "fF" and (text[-2:-1].isdigit() or text[-2:-1] == "."):
        text = text[:-1]
    return float(text)


def _unname(pattern: str) -> str:
    """Drop group names so several user patterns can share one alternation."""
    return re.sub(r"\(\?P<\w+>", "(?:", pattern)


def validate_pattern(pattern: str) -> str | None:
    """Return an error text for a user pattern that cannot be used, else None."""
    try:
        rx = re.compile(pattern)
    except re.error as exc:
        return f"not a regular expression: {exc}"
    if "(?P=" in pattern:
        return "back-references to named groups are not supported"
    if not [g for g in rx.groupindex if g != "tensor"]:
        return "needs at least one named group for a metric, e.g. (?P<max_diff>[0-9.]+)"
    return None
