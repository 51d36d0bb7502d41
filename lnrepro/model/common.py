"""docs/schemas/common.json, derived: the pieces the schemas still written by hand ``$ref`` as
``common.json#/$defs/<name>`` (scripts/schemas.py writes each field of :class:`Common` as a
definition). Not a document: it goes away when no hand-written schema is left (issue 39)."""

from __future__ import annotations

from dataclasses import dataclass

from lnrepro.model.codec import Real
from lnrepro.model.gtest import CrashInfo, Failure, Metrics, TestResult, TestStatus
from lnrepro.model.jsonio import JSON
from lnrepro.model.record import Verdict


@dataclass(frozen=True, kw_only=True)
class Common:
    number: Real
    metrics: Metrics
    failure: Failure
    crash: CrashInfo | None
    status: TestStatus
    test_result: TestResult
    verdict: Verdict
    facts: dict[str, JSON]  # open-ended facts (a fingerprint, a backend's resolved setup)
    string_list: list[str]
