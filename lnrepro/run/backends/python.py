"""Any Python project's pytest tests, in the project's own Python (no tt-metal anywhere).

The interpreter is ``--python``, else the project's ``.venv/bin/python`` or ``venv/bin/python``,
else ``python3`` on PATH; pytest runs with the project as its working directory (node ids are
relative to it, as ``pytest --collect-only -q`` prints them there). With ``--image`` the project
is mounted at its own path into a fresh container of that local image, by the docker runner
(:class:`~lnrepro.run.runners.docker.DockerRunner`: the invoking user, never privileged, removed
on a timeout or Ctrl-C), and ``python3`` there runs pytest. Nothing is built. The
fingerprint holds the project's commit and the environment that changes numbers: the Python's
packages and the numerics variables (:mod:`lnrepro.model.pyenv`).
"""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from lnrepro.doors import proc
from lnrepro.model.events import Events
from lnrepro.model.jsonio import JSON
from lnrepro.model.record import BuildResult
from lnrepro.model.requests import PythonSpec
from lnrepro.run.backends import Call
from lnrepro.run.backends.host import LocalProcess, host_fingerprint
from lnrepro.run.runners.base import Place, TimeLimit

if TYPE_CHECKING:
    from lnrepro.run.runners.docker import DockerRunner

FREEZE_TIMEOUT_S = 120.0
SETUP_TIMEOUT_S = 3600.0
VENVS = (".venv", "venv")
# Run by the user's Python: the directories its packages are in (its venv's, and the system's
# where that venv sees them), each to be added with site.addsitedir (so their .pth files count)
SITE_DIRS_SCRIPT = (
    "import json, site, sys\n"
    "dirs = [p for p in sys.path if p.endswith(('site-packages', 'dist-packages'))]\n"
    "print(json.dumps(dirs))\n"
)
# Run before the freeze script in an --image container: its environment as the tests see it
# (the image's ENV lines and --env), on a line of its own
ENVIRON_TAG = "lnrepro-environ: "
ENVIRON_SCRIPT = f"import json, os\nprint({ENVIRON_TAG!r} + json.dumps(dict(os.environ)))\n"
LAYER_PTH = "zz-lnrepro-base.pth"  # after the step's own .pth files (an editable install's)


class LayerFailed(Exception):
    def __init__(self, what: str, output: str) -> None:
        super().__init__(what)
        self.what, self.output = what, output


def layered_env(base: str, venv: Path, env: dict[str, str]) -> str:
    """A venv at ``venv`` whose own site-packages come first and ``base``'s packages after (a
    ``.pth`` of ``site.addsitedir`` lines): what a step installs lands in it, never in the
    user's environment, and the rest (pytest, the project's other packages) is the user's as it
    is. A ``pip`` script in it runs the user's pip, installing here. Returns its python."""
    import json

    code, out = proc.capture([base, "-c", SITE_DIRS_SCRIPT], timeout=FREEZE_TIMEOUT_S, env=env)
    if code != 0:
        raise LayerFailed(f"{base} could not list its site-packages", out)
    try:
        dirs = [str(d) for d in json.loads(out.strip().splitlines()[-1])]
    except (ValueError, IndexError):
        raise LayerFailed(f"{base} printed no list of site-packages", out) from None
    code, out = proc.capture(
        [base, "-m", "venv", "--without-pip", str(venv)], timeout=FREEZE_TIMEOUT_S, env=env
    )
    if code != 0:
        raise LayerFailed(f"{base} -m venv failed", out)
    python = venv / "bin" / "python"
    code, out = proc.capture(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        timeout=FREEZE_TIMEOUT_S,
    )
    if code != 0:
        raise LayerFailed("the step's venv does not run", out)
    purelib = Path(out.strip().splitlines()[-1])
    purelib.mkdir(parents=True, exist_ok=True)
    (purelib / LAYER_PTH).write_text(
        "".join(f"import site; site.addsitedir({d!r})\n" for d in dirs)
    )
    for tool in ("pip", "pip3"):
        script = venv / "bin" / tool
        script.write_text(
            f"#!{python}\nimport sys\nfrom pip._internal.cli.main import main\nsys.exit(main())\n"
        )
        script.chmod(0o755)
    return str(python)


def container_environ(out: str) -> dict[str, str]:
    """The environment :data:`ENVIRON_SCRIPT` printed (empty if it printed none)."""
    import json

    for line in out.splitlines():
        if line.startswith(ENVIRON_TAG):
            try:
                doc = json.loads(line[len(ENVIRON_TAG) :])
            except ValueError:
                return {}
            return {str(k): str(v) for k, v in doc.items()} if isinstance(doc, dict) else {}
    return {}


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
    freeze: dict[str, str] = field(default_factory=dict, compare=False)  # the step's python

    @property
    def checkout(self) -> Path:
        """The project (pytest's root: the JUnit reader finds test files under it)."""
        return self.spec.project.expanduser().absolute()

    @property
    def interpreter(self) -> str:
        if self.spec.image is not None:  # the image's own Python (its PATH's)
            return self.spec.python or "python3"
        return project_python(self.checkout, self.spec.python)

    def runner(self) -> DockerRunner | None:
        """The docker runner of ``--image`` (None: the tests run here). tt-metal's mount set
        with no device: the checkout and the record directory, /etc/passwd and /etc/group."""
        if self.spec.image is None:
            return None
        from lnrepro.run.runners.docker import DockerRunner

        return DockerRunner(self.spec.image, mount_set="tt-metal")

    def describe(self) -> dict[str, JSON]:
        from lnrepro.model import codec

        out: dict[str, JSON] = {**codec.encode_obj(self.spec), "interpreter": self.interpreter}
        runner = self.runner()
        if runner is not None:
            out["runner"] = runner.describe()
        return out

    def build(self, record_dir: Path, events: Events) -> BuildResult | None:
        """``--setup``, in an environment of this run's own (see :func:`layered_env`); nothing
        to do without one. A failed setup is a failed build: the commit cannot be tested."""
        if not self.spec.setup:
            return None
        start = time.monotonic()
        log = record_dir / "build.log"
        venv = record_dir / "env"
        argv = list(self.spec.setup)
        lines: list[str] = []
        try:
            step_python = layered_env(self.interpreter, venv, self.environment())
        except LayerFailed as exc:
            log.write_text(exc.output)
            return BuildResult(
                ok=False,
                seconds=time.monotonic() - start,
                reason=f"could not make the step's environment: {exc.what}",
                tail=tuple(exc.output.splitlines()[-20:]),
            )
        env = {
            **self.environment(),
            "VIRTUAL_ENV": str(venv),
            "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        }
        env.pop("PYTHONHOME", None)
        with log.open("wb") as fh:

            def put(data: bytes) -> None:
                fh.write(data)
                lines.extend(data.decode("utf-8", "replace").splitlines()[-20:])
                del lines[:-20]

            try:
                res = proc.stream(argv, put, timeout=SETUP_TIMEOUT_S, env=env, cwd=self.checkout)
            except OSError as exc:
                return BuildResult(
                    ok=False,
                    seconds=time.monotonic() - start,
                    command=tuple(argv),
                    reason=f"--setup {shlex.join(argv)} could not start: {exc.strerror}",
                )
        self.freeze["step_python"] = step_python
        ok = res.exit_code == 0 and not res.timed_out
        return BuildResult(
            ok=ok,
            seconds=time.monotonic() - start,
            command=tuple(argv),
            exit_code=res.exit_code,
            timed_out=res.timed_out,
            tail=() if ok else tuple(lines),
            reason=None if ok else f"--setup {shlex.join(argv)} exited {res.exit_code}",
            steps=("setup",),
        )

    def program(self, attempt: int) -> list[str]:
        return [self.python(attempt), "-m", "pytest"]

    def python(self, attempt: int) -> str:
        step = self.freeze.get("step_python")
        return step if isinstance(step, str) else self.interpreter

    def environment(self) -> dict[str, str]:
        """The tests' environment: this one, with ``--env`` on top."""
        return {**os.environ, **dict(self.spec.env)}

    def execute(self, call: Call) -> proc.ProcResult:
        runner = self.runner()
        if runner is not None:
            return runner.run(
                call.argv,
                call.on_output,
                self.place(call.record_dir, call.extra_env),
                TimeLimit(call.timeout),
            )
        env = {**self.environment(), **(call.extra_env or {})}
        return proc.stream(
            call.argv, call.on_output, timeout=call.timeout, env=env, cwd=self.checkout
        )

    def place(self, record_dir: Path, extra_env: dict[str, str] | None = None) -> Place:
        """What the container sees: the project (its working directory) and the record
        directory (pytest's JUnit report lands there), at their own paths; ``--env`` only."""
        return Place(
            cwd=self.checkout,
            env={**self.spec.env, **(extra_env or {})},
            mounts=(self.checkout, record_dir.absolute()),
        )

    def shell_line(self, argv: list[str], record_dir: Path) -> str:
        runner = self.runner()
        if runner is not None:
            return runner.shell_line(argv, self.place(record_dir))
        env = [f"{k}={v}" for k, v in self.spec.env.items()]
        line = shlex.join(["env", *env, *argv] if env else argv)
        return f"cd {shlex.quote(str(self.checkout))} && {line}"

    def fingerprint(self) -> dict[str, JSON]:
        out = host_fingerprint()
        runner = self.runner()
        if runner is not None:
            out.update(runner.fingerprint())
        from lnrepro.doors import gitops
        from lnrepro.errors import LnreproError

        try:
            head = gitops.head(self.checkout)
            out["git"], out["commit"] = head, head["commit"]
        except LnreproError:
            out["git"] = None
        out["python_env"] = self.read_freeze()
        return out

    def read_freeze(self) -> dict[str, JSON] | None:
        """The Python's version, packages and numerics variables (None if it cannot say)."""
        from lnrepro.errors import LnreproError
        from lnrepro.model.pyenv import FREEZE_SCRIPT, parse_freeze

        env = self.environment()
        runner = self.runner()
        try:
            if runner is None:
                code, out = proc.capture(
                    [self.python(1), "-c", FREEZE_SCRIPT],
                    timeout=FREEZE_TIMEOUT_S,
                    cwd=self.checkout,
                    env=env,
                )
            else:  # the container's Python, and the variables as it sees them (the image's too)
                chunks: list[bytes] = []
                with tempfile.TemporaryDirectory(prefix="lnrepro-freeze-") as tmp:
                    res = runner.run(
                        [self.python(1), "-c", ENVIRON_SCRIPT + FREEZE_SCRIPT],
                        chunks.append,
                        self.place(Path(tmp)),
                        TimeLimit(FREEZE_TIMEOUT_S),
                    )
                code = -1 if res.timed_out else res.exit_code
                out = b"".join(chunks).decode("utf-8", "replace")
                env = container_environ(out)
        except (OSError, LnreproError):
            return None
        from lnrepro.model import codec

        frozen = parse_freeze(out, env) if code == 0 else None
        return None if frozen is None else codec.encode_obj(frozen)
