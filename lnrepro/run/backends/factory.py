"""From a request's backend spec to a backend: the one place that knows how each is made.

Making a backend reads (the configuration file, the host's devices, Docker's context metadata)
but starts and writes nothing, so :func:`make_backend` is also how a request's backend is
validated before a run or bisect begins.
"""

from __future__ import annotations

from pathlib import Path

from lnrepro.errors import UsageError
from lnrepro.model.requests import BackendSpec, BinarySpec, EmulatorSpec, PythonSpec, TtMetalSpec
from lnrepro.run.backends import Backend


def make_backend(spec: BackendSpec, config_dir: Path | None = None) -> Backend:
    """The backend ``spec`` describes, or a one-line error that says what to change."""
    if isinstance(spec, EmulatorSpec):
        from lnrepro.run.backends.emulator import EmulatorBackend

        return EmulatorBackend(spec)
    if isinstance(spec, BinarySpec):
        from lnrepro.run.backends.binary import BinaryBackend

        return BinaryBackend(spec)
    if isinstance(spec, PythonSpec):
        from lnrepro.run.backends.python import PythonBackend

        return PythonBackend(spec)
    return _tt_metal(spec, config_dir or Path.cwd())


def _tt_metal(spec: TtMetalSpec, config_dir: Path) -> Backend:
    from lnrepro.run.backends.ttmetal import TtMetalBackend
    from lnrepro.run.config import load_config
    from lnrepro.run.runners.base import Runner
    from lnrepro.run.runners.local import LocalRunner

    cfg = load_config(config_dir)
    profile = cfg.get_profile(spec.profile)
    env = {**cfg.env, **dict(spec.env)}
    runner: Runner
    if spec.runner == "local":
        runner = LocalRunner()
    else:
        from lnrepro.doors.container import context_host, is_local_engine
        from lnrepro.run.runners.docker import DockerRunner
        from lnrepro.run.runners.remote import RemoteDockerRunner

        # an engine named by a context is another machine's: it sees none of this one's paths —
        # unless it is this machine's own engine by another name (the same engine ID); ``default``,
        # as in Docker, is this machine's
        ctx = spec.docker_context if spec.docker_context not in (None, "default") else None
        host = context_host(ctx) if ctx else None
        remote = host is not None and not is_local_engine(host)
        docker = DockerRunner.for_host(
            image=spec.image or cfg.image,
            base=cfg.base_image,
            mount_set=spec.mount_set,
            require_device=spec.require_device and not remote,
            docker_host=host,
            only_devices=spec.devices,
        )
        runner = RemoteDockerRunner(docker) if remote else docker
    if not spec.checkout.is_dir():
        raise UsageError(
            f"--tt-metal {spec.checkout} is not a directory", "pass the root of a tt-metal clone"
        )
    return TtMetalBackend(spec, profile, runner, tuple(env.items()))
