"""The requests' defaults and closed sets, without msgspec: what the click layer needs at
``--help`` time (issue 45: no command's help imports msgspec). :mod:`lnrepro.model.requests`
holds the requests themselves and re-exports these names."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

DEFAULT_FILTER = "LayerNormBackwardOpTest.BugRepro_*:LayerNormBackwardOpTest.NIGHTLY_*"
DEFAULT_TIMEOUT_S = 1800.0  # tt-metal's own bisect script allows 30 minutes
DEFAULT_RECORD_DIR = Path(".lnrepro/runs")
CASE_ENV = "LNREPRO_CASE"  # a probe test's case, as compact JSON (lnrepro.model.shrink.Case)


class BackendKind(str, Enum):
    EMULATOR = "emulator"
    LOCAL = "local"
    TT_METAL = "tt-metal"
    PYTHON = "python"


class OnCrash(str, Enum):
    MATCH = "match"  # bad only when the buggy endpoint crashed too
    BAD = "bad"
    SKIP = "skip"


class Margin(str, Enum):
    """``--margin``: whether runs' margins (each quantity's share of its tolerance used) weigh
    in the Bayesian search (issue 47)."""

    AUTO = "auto"  # when the endpoints' margins separate the two sides
    ON = "on"  # the best-separating quantity, whatever its separation
    OFF = "off"  # verdicts only


class OnHang(str, Enum):
    BAD = "bad"
    SKIP = "skip"


class ReportFormat(str, Enum):
    """``lnrepro report --format``."""

    MD = "md"
    JSON = "json"
    JUNIT = "junit"


class MountSet(str, Enum):
    """Which mounts a container gets (``--mount-set``), as :data:`MOUNT_SETS` names them."""

    FULL = "full"
    TT_METAL = "tt-metal"
    SEED_BROKEN = "seed-broken"


class StudyEra(str, Enum):
    """The kernel eras a tolerance study samples (``tolerance --kernel-era``)."""

    NOV_2025 = "2025-11"
    DEC_2025 = "2025-12"
