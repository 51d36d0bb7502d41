"""``--command``: any repository's test of a case, as ``git bisect run`` runs a script.

The case is compact JSON in ``$LNREPRO_CASE``; the command exits 0 when the case passes, 125 when
it cannot be tested, any other code from 1 to 127 when it fails; 128 or more (or a signal) is an
error that stops the search. A run longer than the timeout is killed with its process group and
counts as a skip. A command may print ``lnrepro-probe: margin=<m>`` (as the checkout's probe does:
the largest needed atol over the case's atol); without it the search ranks failures by data kind
and size only.
"""

from __future__ import annotations

from dataclasses import dataclass

from lnrepro.errors import EnvironmentProblem
from lnrepro.model.case import CASE_ENV, Case, env_prefixed
from lnrepro.shrink.checkout import read_margin
from lnrepro.shrink.core import Outcome, RunVerdict

SKIP = 125


def verdict_of(code: int, timed_out: bool) -> RunVerdict:
    """git bisect run's protocol; None or >= 128 is not a verdict (raises)."""
    if timed_out:
        return RunVerdict.SKIP
    if code < 0 or code >= 128:
        raise EnvironmentProblem(
            f"the --command ended with {code} (128 or more, or a signal)",
            "make it exit 0 pass, 1 fail, 125 skip",
        )
    if code == 0:
        return RunVerdict.PASS
    if code == SKIP:
        return RunVerdict.SKIP
    return RunVerdict.FAIL


@dataclass
class CommandEvaluator:
    argv: tuple[str, ...]
    timeout_s: float = 600.0
    name: str = "command"
    deterministic: bool = False  # a card, a build: run every repeat

    def evaluate(self, case: Case, draw: int) -> Outcome:
        import os

        from lnrepro.doors import proc

        env = {**os.environ, CASE_ENV: case.env_value(), "LNREPRO_DRAW": str(draw)}
        out: list[bytes] = []
        res = proc.stream(list(self.argv), out.append, timeout=self.timeout_s, env=env)
        v = verdict_of(res.exit_code, res.timed_out)
        margin = read_margin(b"".join(out).decode("utf-8", "replace"))
        return Outcome(v, margin, f"exit {res.exit_code}" if not res.timed_out else "timed out")

    def rerun(self, case: Case) -> list[str]:
        return env_prefixed(case, list(self.argv))

    def why(self, smaller: Case, result: Case) -> str | None:
        return None
