"""Tests lnrepro knows by name, and where they live when a checkout does not have them.

The BugRepro tests exist only on the bug report's branch, not on tt-metal's main (read from
``tt-train/tests/ops/layernorm_bw_fused_op_test.cpp``: main@642f4c0ad3 has the five
``MetalLayerNormBw_*`` tests, 16165972af adds the seven ``BugRepro_*``; the branch is seed 002's).
A run whose filter asks for them on a commit without them must say so, and how to get them,
instead of passing on the NIGHTLY test alone.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class KnownTests:
    pattern: str  # what their names match
    commit: str  # the commit that adds them
    branch: str  # where that commit is
    subject: str


BUGREPRO = KnownTests(
    pattern="LayerNormBackwardOpTest.BugRepro_*",
    commit="16165972af",
    branch="ivoitovych/layernorm-bw-nightly-test-failure-bug-report-3",
    subject="[tt-train] Add bug reproduction tests for LayerNorm backward accumulation bug",
)
KNOWN = (BUGREPRO,)


def positive_patterns(gtest_filter: str) -> list[str]:
    positive = gtest_filter.split("-", 1)[0] or "*"
    return [p for p in positive.split(":") if p]


def missing_patterns(gtest_filter: str, names: list[str]) -> list[str]:
    """The filter's positive patterns that match none of ``names`` (the tests that ran)."""
    return [
        p
        for p in positive_patterns(gtest_filter)
        if not any(fnmatch.fnmatchcase(n, p) for n in names)
    ]


def missing_nodeids(requested: tuple[str, ...], names: list[str]) -> list[str]:
    """The pytest node ids that no result is: a result is its node id, or one of its
    parametrized cases (``id[...]``) or members (``file.py::Class::test``)."""
    return [
        nid
        for nid in requested
        if not any(n == nid or n.startswith((nid + "[", nid + "::")) for n in names)
    ]


def where(pattern: str) -> KnownTests | None:
    """Known tests that ``pattern`` asks for (the pattern matches their names' pattern)."""
    for k in KNOWN:
        stem = k.pattern.rstrip("*")
        if (
            fnmatch.fnmatchcase(stem + "X", pattern)
            or pattern.startswith(stem)
            or pattern.rstrip("*") == stem
        ):
            return k
    return None


def missing_note(patterns: list[str]) -> str | None:
    """What a person must read first when requested tests are absent, with the fix."""
    if not patterns:
        return None
    text = f"no test matches {', '.join(patterns)} at this commit"
    known = {w for p in patterns if (w := where(p)) is not None}
    if not known:
        text += "; see which tests exist with `lnrepro run --list`, and fix --filter"
    for k in known:
        text += (
            f"; {k.pattern} live on branch {k.branch} (commit {k.commit}, {k.subject!r}): "
            f"`git fetch origin {k.branch}`, then cherry-pick {k.commit} onto the checkout "
            f"(`lnrepro bisect --pick {k.commit}` does it for every commit it tests)"
        )
    return text
