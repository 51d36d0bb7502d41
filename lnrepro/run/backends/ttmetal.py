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
from typing import Any, Protocol

from lnrepro.doors import proc
from lnrepro.doors.fsio import write_error
from lnrepro.errors import GitError
from lnrepro.model.events import Events
from lnrepro.run.backends.host import host_fingerprint
from lnrepro.run.config import BuildProfile

BUILD_TIMEOUT_S = 4 * 3600.0
TAIL_LINES = 40


class Runner(Protocol):
    """Where commands run. ``shell_line`` is what a person would type to do the same."""

    @property
    def name(self) -> str: ...

    def run(
        self,
        argv: list[str],
        on_output: Callable[[bytes], None],
        *,
        cwd: Path,
        env: dict[str, str],
        mounts: tuple[Path, ...],
        timeout: float | None,
    ) -> proc.ProcResult: ...

    def shell_line(
        self, argv: list[str], *, cwd: Path, env: dict[str, str], mounts: tuple[Path, ...]
    ) -> str: ...

    def describe(self) -> dict[str, Any]: ...

    def fingerprint(self) -> dict[str, Any]:
        """What the results depend on beyond describe() (e.g. the image's id)."""
        ...


@dataclass(frozen=True)
class LocalRunner:
    """This host (or the container lnrepro itself runs in)."""

    name: str = "local"

    def run(
        self,
        argv: list[str],
        on_output: Callable[[bytes], None],
        *,
        cwd: Path,
        env: dict[str, str],
        mounts: tuple[Path, ...],
        timeout: float | None,
    ) -> proc.ProcResult:
        return proc.stream(argv, on_output, timeout=timeout, cwd=cwd, env={**os.environ, **env})

    def shell_line(
        self, argv: list[str], *, cwd: Path, env: dict[str, str], mounts: tuple[Path, ...]
    ) -> str:
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        return f"cd {shlex.quote(str(cwd))} && env {exports} {shlex.join(argv)}"

    def describe(self) -> dict[str, Any]:
        return {"runner": self.name}

    def fingerprint(self) -> dict[str, Any]:
        return {}


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
    checkout: Path
    profile: BuildProfile
    runner: Runner = field(default_factory=LocalRunner)
    env: tuple[tuple[str, str], ...] = ()
    reset_cmd: tuple[str, ...] | None = None
    watcher_s: int | None = None
    build_timeout_s: float = BUILD_TIMEOUT_S
    name: str = "tt-metal"

    @property
    def binary(self) -> Path:
        return self.checkout / self.profile.binary

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "checkout": str(self.checkout),
            "profile": self.profile.to_json(),
            **self.runner.describe(),
            "env": dict(self.env),
            "reset_cmd": list(self.reset_cmd) if self.reset_cmd else None,
            "watcher_s": self.watcher_s,
        }

    def rerun_args(self) -> list[str]:
        args = ["--tt-metal", str(self.checkout), "--profile", self.profile.name,
                "--runner", self.runner.name]  # fmt: skip
        runner = self.runner.describe()
        if runner.get("image"):
            args += ["--image", str(runner["image"])]
        if runner.get("mount_set", "full") != "full":
            args += ["--mount-set", str(runner["mount_set"])]
        for k, v in self.env:
            args += ["--env", f"{k}={v}"]
        if self.reset_cmd:
            args += ["--reset-cmd", shlex.join(self.reset_cmd)]
        if self.watcher_s:
            args += ["--watcher", str(self.watcher_s)]
        return args

    # ------------------------------------------------------------------ environment
    def test_env(self, record_dir: Path) -> dict[str, str]:
        env = {"TT_METAL_HOME": str(self.checkout), "PYTHONPATH": str(self.checkout)}
        if os.environ.get("ARCH_NAME"):
            env["ARCH_NAME"] = os.environ["ARCH_NAME"]
        env["TT_METAL_CACHE"] = str(record_dir / "kernel-cache")  # fresh per run: never stale
        if self.watcher_s:
            env["TT_METAL_WATCHER"] = str(self.watcher_s)
        env.update(dict(self.env))
        return env

    def _mounts(self, record_dir: Path) -> tuple[Path, ...]:
        return (self.checkout, record_dir)

    # ------------------------------------------------------------------ build
    def plan(self, gtest_filter: str, record_dir: Path) -> dict[str, list[str] | str]:
        env = self.test_env(record_dir)
        mounts = self._mounts(record_dir)

        def line(argv: list[str]) -> str:
            return self.runner.shell_line(argv, cwd=self.checkout, env=env, mounts=mounts)

        return {
            "build": [line(list(c)) for c in self.profile.build],
            "test": line(self.command(gtest_filter, record_dir / "attempt-1.json", 1)),
        }

    def build(self, record_dir: Path, events: Events) -> dict[str, Any] | None:
        log_path = record_dir / "build.log"
        env = self.test_env(record_dir)
        start = time.monotonic()
        tail: list[bytes] = []
        result: dict[str, Any] = {"ok": True, "profile": self.profile.name, "log": log_path.name}
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
                        result.update(ok=False, command=list(cmd), exit_code=res.exit_code,
                                      timed_out=res.timed_out)  # fmt: skip
                        break
        except OSError as exc:
            raise write_error(log_path, exc) from None
        if result["ok"] and not self.binary.is_file():
            result.update(ok=False, reason=f"the build did not produce {self.profile.binary}")
        if result["ok"]:
            result["inputs"] = self.inputs()
        result["seconds"] = round(time.monotonic() - start, 3)
        lines = b"".join(tail).decode("utf-8", "replace").splitlines()
        result["tail"] = lines[-TAIL_LINES:] if not result["ok"] else []
        events.build_finished(bool(result["ok"]), result["seconds"])
        return result

    def inputs(self) -> dict[str, str]:
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
        return {"binary_sha256": binary, "kernels_sha256": kernels,
                "key": hashlib.sha256(f"{binary}:{kernels}".encode()).hexdigest()[:24]}  # fmt: skip

    # ------------------------------------------------------------------ tests
    def command(self, gtest_filter: str, report: Path, attempt: int) -> list[str]:
        return [str(self.binary), f"--gtest_filter={gtest_filter}",
                f"--gtest_output=json:{report}", "--gtest_color=no"]  # fmt: skip

    def execute(
        self,
        gtest_filter: str,
        report: Path,
        attempt: int,
        on_output: Callable[[bytes], None],
        timeout: float | None,
    ) -> proc.ProcResult:
        record_dir = report.parent
        if self.reset_cmd:
            code, out = proc.capture(list(self.reset_cmd), timeout=300)
            on_output(f"lnrepro: reset command exited {code}: {out.strip()[-200:]}\n".encode())
        res = self.runner.run(
            self.command(gtest_filter, report, attempt), on_output, cwd=self.checkout,
            env=self.test_env(record_dir), mounts=self._mounts(record_dir), timeout=timeout,
        )  # fmt: skip
        watcher = self.checkout / "generated" / "watcher" / "watcher.log"
        if self.watcher_s and res.exit_code != 0 and watcher.is_file():
            shutil.copyfile(watcher, record_dir / f"attempt-{attempt}.watcher.log")
        return res

    def fingerprint(self) -> dict[str, Any]:
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
