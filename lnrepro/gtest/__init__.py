"""Reading googletest output: streaming console parser, JSON/XML reports, merging."""

from lnrepro.model.gtest import (
    CrashInfo,
    Failure,
    GtestRun,
    Iteration,
    Summary,
    TestResult,
    TestStatus,
)

__all__ = [
    "CrashInfo",
    "Failure",
    "GtestRun",
    "Iteration",
    "Summary",
    "TestResult",
    "TestStatus",
]
