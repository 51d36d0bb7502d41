"""A tt-metal checkout: built by a profile, its ``ttml_tests`` run on this host or in a container.

The *runner* decides where commands run — ``local`` (this host, or already inside a container)
or ``docker`` (lnrepro's container, :mod:`lnrepro.doors.container`) — and nothing else differs: the
same build commands, the same test command, the same environment:

* ``TT_METAL_HOME`` is the checkout, ``ARCH_NAME`` is passed through, ``--env`` adds more;
* ``TT_METAL_CACHE`` is a directory inside the run's record: JIT-compiled kernels are built
  fresh for every run (a stale cache gives stale results), and the user's own cache is never
  touched;
* ``--watcher N`` sets ``TT_METAL_WATCHER`` and keeps the watcher log of a failed or hung
  attempt; ``--reset-cmd`` (e.g. ``tt-smi -r 0``) runs on the host before every attempt.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from lnrepro.doors import proc
from lnrepro.doors.fsio import write_error
from lnrepro.errors import GitError
from lnrepro.model.events import Events
from lnrepro.model.jsonio import JSON
from lnrepro.model.record import BuildResult, Inputs
from lnrepro.model.requests import TtMetalSpec
from lnrepro.run.backends.host import host_fingerprint
from lnrepro.run.config import BuildProfile
from lnrepro.run.runners import LocalRunner, Runner

BUILD_TIMEOUT_S = 4 * 3600.0
TAIL_LINES = 40


def _walk(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return [p for p in root.rglob("*") if p.is_file()] if root.is_dir() else []


def _sha256_files(files: list[Path], base: Path | None = None) -> str:
    h = hashlib.sha256()
    for f in files:
        if base is not None:
            h.update(str(f.relative_to(base)).encode() + b"\0")
        try:
            with f.open("rb") as fh:
                while chunk := fh.read(1 << 20):
                    h.update(chunk)
        except OSError:
            h.update(b"<unreadable>")
        h.update(b"\0")
    return h.hexdigest()


@dataclass(frozen=True)
class TtMetalBackend:
    spec: TtMetalSpec
    profile: BuildProfile
    runner: Runner = field(default_factory=LocalRunner)
    env: tuple[tuple[str, str], ...] = ()  # the configuration's, then the request's
    build_timeout_s: float = BUILD_TIMEOUT_S
    name: str = "tt-metal"

    @property
    def checkout(self) -> Path:
        return self.spec.checkout

    @property
    def binary(self) -> Path:
        return self.checkout / self.profile.binary

    def describe(self) -> dict[str, JSON]:
        return {"backend": self.name, "checkout": str(self.checkout),
                "profile": self.profile.to_json(), **self.runner.describe(), "env": dict(self.env),
                "reset_cmd": list(self.spec.reset_cmd) if self.spec.reset_cmd else None,
                "watcher_s": self.spec.watcher_s}  # fmt: skip

    # ------------------------------------------------------------------ environment
    def test_env(self, record_dir: Path) -> dict[str, str]:
        env = {"TT_METAL_HOME": str(self.checkout), "PYTHONPATH": str(self.checkout)}
        if os.environ.get("ARCH_NAME"):
            env["ARCH_NAME"] = os.environ["ARCH_NAME"]
        env["TT_METAL_CACHE"] = str(record_dir / "kernel-cache")  # fresh per run: never stale
        if self.spec.watcher_s:
            env["TT_METAL_WATCHER"] = str(self.spec.watcher_s)
        env.update(dict(self.env))
        return env

    def _mounts(self, record_dir: Path) -> tuple[Path, ...]:
        return (self.checkout, record_dir)

    def shell_line(self, argv: list[str], record_dir: Path) -> str:
        return self.runner.shell_line(argv, cwd=self.checkout, env=self.test_env(record_dir),
                                      mounts=self._mounts(record_dir))  # fmt: skip

    # ------------------------------------------------------------------ build
    def build_lines(self, record_dir: Path) -> list[str]:
        return [self.shell_line(list(c), record_dir) for c in self.profile.build]

    def build(self, record_dir: Path, events: Events) -> BuildResult | None:
        log_path = record_dir / "build.log"
        env = self.test_env(record_dir)
        start = time.monotonic()
        tail: list[bytes] = []
        failed: dict[str, object] = {}
        events.build_started(f"{self.profile.name} build of {self.checkout} ({self.runner.name})")
        try:
            with log_path.open("wb") as log:

                def sink(data: bytes) -> None:
                    log.write(data)
                    tail.append(data)
                    if len(tail) > 64:
                        del tail[:-64]
                    events.build_output(data)

                for cmd in self.profile.build:
                    log.write(f"$ {shlex.join(cmd)}\n".encode())
                    res = self.runner.run(
                        list(cmd), sink, cwd=self.checkout, env=env,
                        mounts=self._mounts(record_dir), timeout=self.build_timeout_s,
                    )  # fmt: skip
                    if res.exit_code != 0:
                        failed = {"command": tuple(cmd), "exit_code": res.exit_code,
                                  "timed_out": res.timed_out}  # fmt: skip
                        break
        except OSError as exc:
            raise write_error(log_path, exc) from None
        reason = None
        if not failed and not self.binary.is_file():
            reason = f"the build did not produce {self.profile.binary}"
        ok = not failed and reason is None
        lines = b"".join(tail).decode("utf-8", "replace").splitlines()
        result = BuildResult(
            ok, self.profile.name, log_path.name, time.monotonic() - start,
            tuple(lines[-TAIL_LINES:]) if not ok else (),
            failed.get("command"), failed.get("exit_code"), bool(failed.get("timed_out")),  # type: ignore[arg-type]
            reason, self.inputs() if ok else None,
        )  # fmt: skip
        events.build_finished(ok, result.seconds)
        return result

    def inputs(self) -> Inputs:
        """Hashes of what the tests run: the binary, the shared libraries beside it (the build
        tree's ``*.so``: tt-metal, ttnn, ttml) and the kernel sources it JIT-compiles.

        Two commits with the same ``key`` test the same thing (a docs-only commit, a CI change),
        so a bisect shares their observations instead of running both.
        """
        parts = Path(self.profile.binary).parts
        root = next((i for i, p in enumerate(parts) if p.startswith("build")), 0)
        build_root = self.checkout.joinpath(*parts[: root + 1])
        libs = (
            sorted(p for p in build_root.rglob("*.so*") if p.is_file())
            if build_root.is_dir()
            else []
        )
        binary = _sha256_files([self.binary, *libs], self.checkout)
        files = sorted(f for k in self.profile.kernels for f in _walk(self.checkout / k))
        kernels = _sha256_files(files, self.checkout)
        key = hashlib.sha256(f"{binary}:{kernels}".encode()).hexdigest()[:24]
        return Inputs(key, {"binary_sha256": binary, "kernels_sha256": kernels})

    # ------------------------------------------------------------------ tests
    def program(self, attempt: int) -> list[str]:
        return [str(self.binary)]

    def prepare_attempt(
        self, record_dir: Path, attempt: int, on_output: Callable[[bytes], None]
    ) -> str | None:
        """``--reset-cmd`` before the attempt; a reset that fails makes the attempt an
        environment error (its results would be suspect), so it is not run."""
        if not self.spec.reset_cmd:
            return None
        code, out = proc.capture(list(self.spec.reset_cmd), timeout=300)
        on_output(f"lnrepro: reset command exited {code}: {out.strip()[-200:]}\n".encode())
        if code != 0:
            return f"the reset command `{shlex.join(self.spec.reset_cmd)}` exited {code}"
        return None

    def execute(
        self,
        argv: list[str],
        record_dir: Path,
        attempt: int,
        on_output: Callable[[bytes], None],
        timeout: float | None,
    ) -> proc.ProcResult:
        res = self.runner.run(
            argv, on_output, cwd=self.checkout, env=self.test_env(record_dir),
            mounts=self._mounts(record_dir), timeout=timeout,
        )  # fmt: skip
        watcher = self.checkout / "generated" / "watcher" / "watcher.log"
        if self.spec.watcher_s and res.exit_code != 0 and watcher.is_file():
            shutil.copyfile(watcher, record_dir / f"attempt-{attempt}.watcher.log")
        return res

    def fingerprint(self) -> dict[str, JSON]:
        from lnrepro.doors import gitops

        fp = host_fingerprint()
        fp["runner"] = self.runner.name
        fp.update({k: v for k, v in self.runner.describe().items() if k != "runner"})
        fp.update(self.runner.fingerprint())
        fp["build_profile"] = self.profile.name
        try:
            fp.update(gitops.head(self.checkout))
        except GitError as exc:
            fp["commit_error"] = exc.message
        return fp
