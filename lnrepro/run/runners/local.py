"""The local runner: commands run on this host (or in the container lnrepro itself runs in)."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass

from lnrepro.doors import proc
from lnrepro.model.jsonio import JSON
from lnrepro.run.runners.base import HereFiles, Output, Place, TimeLimit


@dataclass(frozen=True)
class LocalRunner(HereFiles):
    """This host (or the container lnrepro itself runs in)."""

    name: str = "local"

    def run(
        self, argv: list[str], on_output: Output, place: Place, limit: TimeLimit
    ) -> proc.ProcResult:
        full = {**os.environ, **place.env}
        on_hang = limit.on_hang

        def before_kill() -> None:
            assert on_hang is not None
            on_hang.begin()
            res = proc.stream(
                list(on_hang.argv),
                on_hang.on_output,
                timeout=on_hang.timeout_s,
                cwd=place.cwd,
                env=full,
            )
            on_hang.done(None if res.timed_out else res.exit_code, res.timed_out)

        return proc.stream(
            argv,
            on_output,
            timeout=limit.seconds,
            cwd=place.cwd,
            env=full,
            before_kill=before_kill if on_hang is not None else None,
        )

    def shell_line(self, argv: list[str], place: Place) -> str:
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in place.env.items())
        return f"cd {shlex.quote(str(place.cwd))} && env {exports} {shlex.join(argv)}"

    def describe(self) -> dict[str, JSON]:
        return {"runner": self.name}

    def fingerprint(self) -> dict[str, JSON]:
        return {}
