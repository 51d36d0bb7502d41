"""Any Python project's pytest tests, in the project's own Python (no tt-metal anywhere).

The interpreter is ``--python``, else the project's ``.venv/bin/python`` or ``venv/bin/python``,
else ``python3`` on PATH; pytest runs with the project as its working directory (node ids are
relative to it, as ``pytest --collect-only -q`` prints them there). Nothing is built. The
fingerprint holds the project's commit and the environment that changes numbers: the Python's
packages and the numerics variables (:mod:`lnrepro.numerics.environment`).
"""

from __future__ import annotations

import os
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from lnrepro.doors import proc
from lnrepro.model.events import Events
from lnrepro.model.jsonio import JSON
from lnrepro.model.record import BuildResult
from lnrepro.model.requests import PythonSpec
from lnrepro.run.backends import Call
from lnrepro.run.backends.host import LocalProcess, host_fingerprint

FREEZE_TIMEOUT_S = 120.0
VENVS = (".venv", "venv")


def project_python(project: Path, given: str | None) -> str:
    """The interpreter that runs the project's tests (see the module)."""
    if given:
        return given
    for name in VENVS:
        candidate = project / name / "bin" / "python"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate.absolute())
    return shutil.which("python3") or "python3"


@dataclass(frozen=True)
class PythonBackend(LocalProcess):
    spec: PythonSpec
    name: str = "python"
    freeze: dict[str, JSON] = field(default_factory=dict, compare=False)

    @property
    def checkout(self) -> Path:
        """The project (pytest's root: the JUnit reader finds test files under it)."""
        return self.spec.project.expanduser().absolute()

    @property
    def interpreter(self) -> str:
        return project_python(self.checkout, self.spec.python)

    def describe(self) -> dict[str, JSON]:
        from lnrepro.model import codec

        return {**codec.encode_obj(self.spec), "interpreter": self.interpreter}

    def build(self, record_dir: Path, events: Events) -> BuildResult | None:
        return None  # nothing to build: a setup command is bisect's (--setup)

    def program(self, attempt: int) -> list[str]:
        return [self.interpreter, "-m", "pytest"]

    def python(self, attempt: int) -> str:
        return self.interpreter

    def environment(self) -> dict[str, str]:
        """The tests' environment: this one, with ``--env`` on top."""
        return {**os.environ, **dict(self.spec.env)}

    def execute(self, call: Call) -> proc.ProcResult:
        env = {**self.environment(), **(call.extra_env or {})}
        return proc.stream(
            call.argv, call.on_output, timeout=call.timeout, env=env, cwd=self.checkout
        )

    def shell_line(self, argv: list[str], record_dir: Path) -> str:
        env = [f"{k}={v}" for k, v in self.spec.env.items()]
        line = shlex.join(["env", *env, *argv] if env else argv)
        return f"cd {shlex.quote(str(self.checkout))} && {line}"

    def fingerprint(self) -> dict[str, JSON]:
        out = host_fingerprint()
        from lnrepro.doors import gitops
        from lnrepro.errors import LnreproError

        try:
            out["git"] = gitops.head(self.checkout)
        except LnreproError:
            out["git"] = None
        out["python_env"] = self.read_freeze()
        return out

    def read_freeze(self) -> dict[str, JSON] | None:
        """The Python's version, packages and numerics variables (None if it cannot say)."""
        from lnrepro.numerics.environment import FREEZE_SCRIPT, parse_freeze

        env = self.environment()
        try:
            code, out = proc.capture(
                [self.interpreter, "-c", FREEZE_SCRIPT],
                timeout=FREEZE_TIMEOUT_S,
                cwd=self.checkout,
                env=env,
            )
        except OSError:
            return None
        frozen = parse_freeze(out, env) if code == 0 else None
        if frozen is None:
            return None
        doc = frozen.as_json()
        return {k: v for k, v in doc.items()}  # type: ignore[misc]
