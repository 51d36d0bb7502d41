"""A tt-metal checkout: built by a profile, its ``ttml_tests`` run on this host or in a container.

The *runner* decides where commands run — ``local`` (this host, or already inside a container)
or ``docker`` (lnrepro's container, :mod:`lnrepro.doors.container`) — and nothing else differs: the
same build commands, the same test command, the same environment:

* the runtime's root is the checkout: ``TT_METAL_RUNTIME_ROOT`` (what tt-metal reads since PR
  #30502) and ``TT_METAL_HOME`` (what it read before, and what its scripts and tt-train's CMake
  still read); logs (watcher, DPRINT) go to the run's record (``TT_METAL_LOGS_PATH``);
  ``ARCH_NAME`` is passed through, ``--env`` adds more;
* ``TT_METAL_CACHE`` is a directory inside the run's record: JIT-compiled kernels are built
  fresh for every run (a stale cache gives stale results), and the user's own cache is never
  touched;
* ``--watcher N`` sets ``TT_METAL_WATCHER`` and keeps the watcher log of a failed or hung
  attempt; ``--reset-cmd`` (e.g. ``tt-smi -r 0``) runs on the host before every attempt;
* a checkout with ``tools/tt-triage.py`` has it run against the still-hung device when an
  attempt times out, before the kill (``--no-triage``: not), and ``--dispatch-timeout S`` lets
  tt-metal detect the hang itself and run it (:mod:`lnrepro.hang.dispatch`).

The built-in profiles decide the build per commit from the commit's own files
(:mod:`lnrepro.run.buildplan`); a worktree's git directories outside it are mounted read-only, since
tt-metal's CMake asks git for the version while configuring.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import lnrepro.hang.door as hang
from lnrepro.doors import proc
from lnrepro.doors.fsio import log_writer, read_tree, write_text
from lnrepro.errors import GitError
from lnrepro.model import checkout as co
from lnrepro.model import codec
from lnrepro.model.checkout import CacheFacts
from lnrepro.model.events import Events
from lnrepro.model.jsonio import JSON
from lnrepro.model.record import BuildResult, Inputs
from lnrepro.model.requests import TtMetalSpec
from lnrepro.run import buildplan
from lnrepro.run import inputs as inp
from lnrepro.run.backends import Call
from lnrepro.run.backends.host import host_fingerprint
from lnrepro.run.config import BuildProfile
from lnrepro.run.runners.base import OnHang, Place, Runner, TimeLimit
from lnrepro.run.runners.local import LocalRunner

BUILD_TIMEOUT_S = 4 * 3600.0
TRIAGE_SUFFIX = "triage.txt"  # attempt-N.triage.txt: tt-triage's output on a hung attempt
TAIL_LINES = 40
# tt-metal's cmake/version.cmake warns so when git could not describe the checkout: the build
# goes on with an empty version, so lnrepro says why
VERSION_WARNING = b"Cannot parse tag"


def _in_build_tree(binary: str) -> Path:
    """Where the profile's binary lies inside its build tree: ``build_Debug/tt-train/tests/x``
    -> ``tt-train/tests/x`` (a prebuilt tree is what build_metal.sh leaves in ``build_<type>``)."""
    parts = Path(binary).parts
    top = next((i for i, p in enumerate(parts) if p.startswith("build")), -1)
    return Path(*parts[top + 1 :])


@dataclass(frozen=True)
class TtMetalBackend:
    spec: TtMetalSpec
    profile: BuildProfile
    runner: Runner = field(default_factory=LocalRunner)
    env: tuple[tuple[str, str], ...] = ()  # the configuration's, then the request's
    build_timeout_s: float = BUILD_TIMEOUT_S
    name: str = "tt-metal"
    triage_timeout_s: float = hang.TRIAGE_TIMEOUT_S  # tt-triage's own limit on a hung attempt

    @property
    def checkout(self) -> Path:
        return self.spec.checkout

    @property
    def binary(self) -> Path:
        if self.spec.prebuilt is not None:
            return self.spec.prebuilt / _in_build_tree(self.profile.binary)
        return self.checkout / self.profile.binary

    def describe(self) -> dict[str, JSON]:
        d: dict[str, JSON] = {
            "backend": self.name,
            "checkout": str(self.checkout),
            "profile": codec.encode(self.profile),
            **self.runner.describe(),
            "env": dict(self.env),
            "reset_cmd": list(self.spec.reset_cmd) if self.spec.reset_cmd else None,
            "watcher_s": self.spec.watcher_s,
        }
        if self.profile.planned is not None:  # what this commit's files said, and the plan
            d["tree"] = codec.encode(read_tree(self.checkout))
            d["build_plan"] = codec.encode(self.plan())
        return d

    # ------------------------------------------------------------------ environment
    def test_env(self, record_dir: Path) -> dict[str, str]:
        home = str(self.checkout)
        env = {
            "TT_METAL_HOME": home,
            "TT_METAL_RUNTIME_ROOT": home,
            "PYTHONPATH": home,
            "TT_METAL_LOGS_PATH": str(record_dir),
        }
        if os.environ.get("ARCH_NAME"):
            env["ARCH_NAME"] = os.environ["ARCH_NAME"]
        env["TT_METAL_CACHE"] = str(record_dir / "kernel-cache")  # fresh per run: never stale
        if self.spec.watcher_s:
            env["TT_METAL_WATCHER"] = str(self.spec.watcher_s)
        if self.spec.dispatch_timeout_s is not None:  # tt-metal detects the hang, runs triage
            seconds = self.spec.dispatch_timeout_s  # 0: off, so no command to run either
            env.update(hang.dispatch_env(seconds, self._triage_argv(1) if seconds else None))
        if self.spec.prebuilt is not None:
            # its libraries, not the path they were built at (CMake's RUNPATH; LD_LIBRARY_PATH
            # comes first for a RUNPATH)
            env["LD_LIBRARY_PATH"] = str(self.spec.prebuilt / "lib")
        env.update(dict(self.env))
        return env

    def _place(self, record_dir: Path, extra_env: dict[str, str] | None = None) -> Place:
        """The checkout, the record directory written to, the git directories and a prebuilt
        tree read only."""
        from lnrepro.doors import gitops

        extra = (self.spec.prebuilt,) if self.spec.prebuilt is not None else ()
        return Place(
            self.checkout,
            {**self.test_env(record_dir), **(extra_env or {})},
            (self.checkout, record_dir),
            (*gitops.git_dirs(self.checkout), *extra),
        )

    def _run(
        self,
        argv: list[str],
        on_output: Callable[[bytes], None],
        record_dir: Path,
        timeout: float | None,
        extra_env: dict[str, str] | None = None,
        on_hang: OnHang | None = None,
    ) -> proc.ProcResult:
        place = self._place(record_dir, extra_env)
        return self.runner.run(argv, on_output, place, TimeLimit(timeout, on_hang))

    def shell_line(self, argv: list[str], record_dir: Path) -> str:
        return self.runner.shell_line(argv, self._place(record_dir))

    # ------------------------------------------------------------------ build
    def plan(self) -> buildplan.BuildPlan:
        """This commit's build, from its files and the build directories' caches as they are."""
        if self.profile.planned is None:
            return buildplan.BuildPlan(self.profile.build, self.profile.binary)
        facts = read_tree(self.checkout)
        metal = self._cache(co.BUILD_DIR)
        if self.profile.planned == "standalone":
            train = self._cache(co.TRAIN_BUILD_DIR)
            return buildplan.plan_standalone(facts, metal, train, self.checkout, self.where)
        return buildplan.plan_in_tree(facts, metal, self.where)

    def _cache(self, build_dir: str) -> CacheFacts:
        """A build directory's CMake cache and stamp, where the builds run (the build tree of
        a remote engine is there, not here)."""
        return CacheFacts.parse(
            self.runner.read_text(self.checkout, f"{build_dir}/CMakeCache.txt"),
            self.runner.read_text(self.checkout, f"{build_dir}/{co.STAMP}"),
        )

    @property
    def where(self) -> str:
        """Where builds run, as a build directory's stamp names it (compiler paths in a CMake
        cache hold only there)."""
        d = self.runner.describe()
        if d.get("image"):
            return f"docker:{d['image']}@{d.get('docker_host') or 'default'}"
        return str(d.get("runner") or "local")

    def build_lines(self, record_dir: Path) -> list[str]:
        return [self.shell_line(list(c), record_dir) for c in self.plan().commands]

    def build(self, record_dir: Path, events: Events) -> BuildResult | None:
        if self.spec.prebuilt is not None:
            return self._use_prebuilt(record_dir, events)
        log_path = record_dir / "build.log"
        plan = self.plan()
        start = time.monotonic()
        tail: list[bytes] = []
        failed: tuple[tuple[str, ...], proc.ProcResult] | None = None  # the command, its end
        version_lost = False
        done: list[str] = []
        events.build_started(f"{self.profile.name} build of {self.checkout} ({self.runner.name})")
        with log_writer(log_path) as put:
            for note in plan.notes:
                put(f"lnrepro: {note}\n".encode())

            def sink(data: bytes) -> None:
                nonlocal version_lost
                put(data)
                tail.append(data)
                if len(tail) > 64:
                    del tail[:-64]
                version_lost = version_lost or VERSION_WARNING in data
                events.build_output(data)

            for i, cmd in enumerate(plan.commands):
                done.append(shlex.join(cmd))
                put(f"$ {shlex.join(cmd)}\n".encode())
                res = self._run(list(cmd), sink, record_dir, self.build_timeout_s)
                if res.exit_code != 0:
                    failed = (tuple(cmd), res)
                    break
                for _, build_dir in (st for st in plan.stamps if st[0] == i):
                    if self.runner.exists(self.checkout, build_dir):  # else: configured again
                        self.runner.write_text(
                            self.checkout, f"{build_dir}/{co.STAMP}", self.where + "\n"
                        )
        reason = None
        if not failed and not self.runner.exists(self.checkout, self.profile.binary):
            reason = f"the build did not produce {self.profile.binary}"
        ok = not failed and reason is None
        lines = b"".join(tail).decode("utf-8", "replace").splitlines()
        warnings = list(plan.notes)
        if version_lost:
            warnings.append(
                "tt-metal's CMake could not read the checkout's git metadata (\"Cannot parse tag\"):"
                " the build has no version; check that git works where the build runs"
            )
        result = BuildResult(
            ok=ok,
            profile=self.profile.name,
            log=log_path.name,
            seconds=time.monotonic() - start,
            tail=tuple(lines[-TAIL_LINES:]) if not ok else (),
            command=failed[0] if failed else None,
            exit_code=failed[1].exit_code if failed else None,
            timed_out=failed is not None and failed[1].timed_out,
            reason=reason,
            inputs=self.inputs() if ok else None,
            steps=tuple(done),
            warnings=tuple(warnings),
        )
        events.build_finished(ok, result.seconds)
        return result

    def _use_prebuilt(self, record_dir: Path, events: Events) -> BuildResult:
        """A ready build tree in place of a build: usable when it holds the test binary."""
        tree = self.spec.prebuilt
        assert tree is not None
        start = time.monotonic()
        events.build_started(f"prebuilt build tree {tree} (no build)")
        reason = None
        if not tree.is_dir():
            reason = f"the prebuilt build tree {tree} is not there"
        elif not self.binary.is_file():
            reason = f"the prebuilt build tree {tree} has no {_in_build_tree(self.profile.binary)}"
        log_path = record_dir / "build.log"
        said = f"lnrepro: {reason}\n" if reason else ""
        write_text(log_path, f"lnrepro: testing the prebuilt build tree {tree}\n{said}")
        ok = reason is None
        result = BuildResult(
            ok=ok,
            profile="prebuilt",
            log=log_path.name,
            seconds=time.monotonic() - start,
            reason=reason,
            inputs=self.inputs() if ok else None,
            prebuilt=str(tree),
        )
        events.build_finished(ok, result.seconds)
        return result

    def _output_roots(self) -> list[str]:
        """The build trees, relative to the checkout."""
        if self.profile.planned == "standalone":
            return [co.BUILD_DIR, co.TRAIN_BUILD_DIR]
        if self.profile.planned == "in-tree":
            return [co.BUILD_DIR]
        parts = Path(self.profile.binary).parts
        top = next((i for i, p in enumerate(parts) if "build" in p), len(parts) - 2)
        return [str(Path(*parts[: top + 1]))]

    def inputs(self) -> Inputs:
        """What the tests can read, hashed (:mod:`lnrepro.run.inputs`): the build's outputs, the
        tracked tree with submodule commits, and every change not committed.

        Two commits with the same ``key`` test the same thing (a docs-only commit, a CI change),
        so a bisect shares their observations instead of running both. When git cannot say what
        the tree holds, the key is unique: nothing is shared.
        """
        from lnrepro.doors import gitops

        if self.spec.prebuilt is not None:  # a tree on this machine
            outputs, count = inp.outputs_digest([self.spec.prebuilt], self.spec.prebuilt)
        else:
            outputs, count = self.runner.outputs_digest(self.checkout, self._output_roots())
        try:
            listing = gitops.tree_listing(self.checkout)
            tracked = inp.tracked_digest(listing)
            changed = inp.changed_paths(gitops.status_z(self.checkout))
            modules = gitops.submodule_status(self.checkout, listing)
        except GitError as exc:
            tracked, changed, modules = f"unknown:{time.time_ns()}:{exc.message}", [], ""
        local = inp.contents_digest(changed, self.checkout)
        sources = hashlib.sha256(f"{tracked}:{modules}:{local}".encode()).hexdigest()
        key = hashlib.sha256(f"{outputs}:{sources}".encode()).hexdigest()[:24]
        return Inputs(
            key=key,
            outputs_sha256=outputs,
            sources_sha256=sources,
            output_files=str(count),
            uncommitted_files=str(len(changed)),
        )

    # ------------------------------------------------------------------ tests
    def program(self, attempt: int) -> list[str]:
        return [str(self.binary)]

    def python(self, attempt: int) -> str:
        """``--python``; else, on this host, the checkout's venv (create_venv.sh makes
        ``python_env``) when there is one; else ``python3`` where the tests run (tt-metal's dev
        image puts its venv, /opt/venv, first on PATH)."""
        if self.spec.python:
            return self.spec.python
        venv = self.checkout / "python_env" / "bin" / "python"
        if self.runner.name == "local" and venv.exists():
            return str(venv)
        return "python3"

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

    def execute(self, call: Call) -> proc.ProcResult:
        started = time.time()
        on_hang = (
            self._on_hang(call.record_dir, call.attempt, call.on_output)
            if call.timeout is not None
            else None
        )
        res = self._run(
            call.argv, call.on_output, call.record_dir, call.timeout, call.extra_env, on_hang
        )
        if self.spec.watcher_s:
            self._keep_watcher_log(call.record_dir, call.attempt, started, keep=res.exit_code != 0)
        return res

    # ------------------------------------------------------------------ tt-triage
    def _triage_argv(self, attempt: int) -> list[str] | None:
        """The checkout's tt-triage with the flags its own usage line knows; None without
        ``tools/tt-triage.py`` or with ``--no-triage``."""
        if not self.spec.triage or not self.runner.exists(self.checkout, hang.TRIAGE_SCRIPT):
            return None
        flags = hang.triage_flags(self.runner.read_text(self.checkout, hang.FRAMEWORK))
        return hang.triage_argv(self.python(attempt), flags)

    def _on_hang(
        self, record_dir: Path, attempt: int, on_output: Callable[[bytes], None]
    ) -> OnHang | None:
        """tt-triage against the still-hung device at lnrepro's timeout, its output into
        ``attempt-N.triage.txt`` beside the attempt's log."""
        argv = self._triage_argv(attempt)
        if argv is None:
            return None
        out = record_dir / f"attempt-{attempt}.{TRIAGE_SUFFIX}"
        chunks: list[bytes] = []

        def done(code: int | None, timed_out: bool) -> None:
            with contextlib.suppress(OSError):
                out.write_bytes(b"".join(chunks))
            how = (
                f"ran past its {self.triage_timeout_s:g} s limit" if timed_out else f"exited {code}"
            )
            on_output(f"lnrepro: tt-triage {how}; its output is in {out.name}\n".encode())

        def begin() -> None:
            on_output(
                f"\nlnrepro: the attempt timed out; running tt-triage against the hung "
                f"device before the kill: {shlex.join(argv)}\n".encode()
            )

        return OnHang(tuple(argv), self.triage_timeout_s, chunks.append, begin, done)

    def _keep_watcher_log(self, record_dir: Path, attempt: int, started: float, keep: bool) -> None:
        """The attempt's watcher log as ``attempt-N.watcher.log``: from ``TT_METAL_LOGS_PATH``
        (the record; since PR #30502), moved so the next attempt's is its own; else from the
        checkout's ``generated/watcher`` (before), copied only if this attempt wrote it (a log
        of the user's own is left alone)."""
        ours = record_dir / "generated" / "watcher" / "watcher.log"
        theirs = self.checkout / "generated" / "watcher" / "watcher.log"
        target = record_dir / f"attempt-{attempt}.watcher.log"
        with contextlib.suppress(OSError):
            if ours.is_file():
                if keep:
                    shutil.copyfile(ours, target)
                ours.unlink()
            elif keep and theirs.is_file() and theirs.stat().st_mtime >= started - 1:
                shutil.copyfile(theirs, target)

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
