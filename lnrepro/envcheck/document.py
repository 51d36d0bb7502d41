"""``lnrepro env-check --json`` (``lnrepro.env-check/2``), defined once (issue 39): its JSON and
docs/schemas/env-check.json are derived from these types by :mod:`lnrepro.model.codec`.

The document is made of msgspec Structs because one part is present only sometimes:
``container`` (``--container``: the inside view, judged by the same checks) is left out of a
host's or a sysroot's document, as it always was. Every other field is always written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import msgspec

from lnrepro.envcheck.checks import Result, Status
from lnrepro.model.requests import Count

SCHEMA: Literal["lnrepro.env-check/2"] = "lnrepro.env-check/2"


class _Part(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A part of the document: every field written, no other read."""


class Summary(_Part, frozen=True, kw_only=True):
    """How many checks ended in each status."""

    ok: Count
    warn: Count
    fail: Count
    skip: Count

    @classmethod
    def of(cls, results: Sequence[Result]) -> Summary:
        n = {s: sum(r.status is s for r in results) for s in Status}
        return cls(ok=n[Status.OK], warn=n[Status.WARN], fail=n[Status.FAIL], skip=n[Status.SKIP])


class Difference(_Part, frozen=True, kw_only=True):
    """A check judged differently inside the container than on the host."""

    id: str
    host: Status
    container: Status
    detail: str  # the container's
    fix: str  # the container's


class ContainerView(_Part, frozen=True, kw_only=True):
    """The inside of the container lnrepro would start, judged by the same checks."""

    command: str | None  # the container's command line, the probe as <probe>
    checks: tuple[Result, ...]
    summary: Summary
    differences: tuple[Difference, ...]


class EnvCheckDoc(_Part, frozen=True, kw_only=True):
    """``lnrepro env-check --json``: every check of the host (or a sysroot), and with
    ``--container`` the container's view beside it."""

    schema: Literal["lnrepro.env-check/2"]  # no default: msgspec's schema then requires it
    mode: Literal["host", "sysroot", "container"]
    ok: bool  # no check failed, on either side
    checks: tuple[Result, ...]
    summary: Summary
    container: ContainerView | msgspec.UnsetType = msgspec.UNSET  # with --container only
