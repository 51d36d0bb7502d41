"""env-check: is this host (or a sysroot, or lnrepro's container) fit to run tt-metal?"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from lnrepro.envcheck.checks import CHECKS, Context, Result, Status, evaluate
from lnrepro.envcheck.facts import Facts, collect, parse_probe, probe_script
from lnrepro.model.jsonio import JSON

if TYPE_CHECKING:
    from lnrepro.envcheck.document import EnvCheckDoc

__all__ = [
    "CHECKS",
    "Context",
    "EnvReport",
    "Result",
    "Status",
    "check_container",
    "check_host",
    "check_sysroot",
]


@dataclass
class EnvReport:
    mode: Literal["host", "sysroot", "container"]
    results: list[Result]
    container: list[Result] | None = None  # --container: the inside view, by the same checks
    container_command: str | None = None

    @property
    def failed(self) -> bool:
        sides = [self.results, *([self.container] if self.container else [])]
        return any(r.status is Status.FAIL for side in sides for r in side)

    def differences(self) -> list[tuple[Result, Result]]:
        """Checks whose verdict inside the container differs from the host's."""
        if not self.container:
            return []
        inside = {r.id: r for r in self.container}
        judged_inside = {c.id for c in CHECKS if c.scope == "facts"}
        return [
            (h, inside[h.id])
            for h in self.results
            if h.id in judged_inside and inside[h.id].status != h.status
        ]

    def document(self) -> EnvCheckDoc:
        """The ``lnrepro.env-check/2`` document (lnrepro/envcheck/document.py)."""
        import msgspec

        from lnrepro.envcheck import document as d

        inside = self.container
        return d.EnvCheckDoc(
            schema=d.SCHEMA,
            mode=self.mode,
            ok=not self.failed,
            checks=tuple(self.results),
            summary=d.Summary.of(self.results),
            container=msgspec.UNSET
            if inside is None
            else d.ContainerView(
                command=self.container_command,
                checks=tuple(inside),
                summary=d.Summary.of(inside),
                differences=tuple(
                    d.Difference(
                        id=h.id, host=h.status, container=c.status, detail=c.detail, fix=c.fix
                    )
                    for h, c in self.differences()
                ),
            ),
        )

    def to_json(self) -> JSON:
        from lnrepro.model import codec

        return codec.encode(self.document())


def _env_for_probe(tt_metal: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "ARCH_NAME", "LANG", "LC_ALL")}
    env.setdefault("PATH", "/usr/bin:/bin")
    if tt_metal is not None:
        env["TT_METAL_HOME"] = str(tt_metal)
    return env


def _context(mode: str, tt_metal: Path | None, min_driver: str | None) -> Context:
    from lnrepro.doors.container import engine_status

    ctx = Context(mode=mode, tt_metal=tt_metal, arch_name=os.environ.get("ARCH_NAME") or None)
    if min_driver:
        ctx.min_driver = min_driver
    if mode != "sysroot":
        ctx.docker = engine_status
    return ctx


def _host(tt_metal: Path | None, min_driver: str | None) -> tuple[Facts, Context, list[Result]]:
    facts = collect(None, _env_for_probe(tt_metal))
    ctx = _context("host", tt_metal, min_driver)
    return facts, ctx, evaluate(facts, ctx)


def check_host(tt_metal: Path | None = None, min_driver: str | None = None) -> EnvReport:
    return EnvReport("host", _host(tt_metal, min_driver)[2])


def check_sysroot(
    root: Path, tt_metal: Path | None = None, min_driver: str | None = None
) -> EnvReport:
    from lnrepro.errors import InputError

    if not root.is_dir():
        raise InputError(
            f"--sysroot {root} is not a directory",
            "pass a directory laid out like / (proc/, sys/, dev/)",
        )
    facts = collect(root.resolve(), _env_for_probe(tt_metal))
    return EnvReport("sysroot", evaluate(facts, _context("sysroot", tt_metal, min_driver)))


def container_facts(spec: Any, timeout: float = 120.0) -> Facts:
    """Run the probe inside a container started from ``spec`` and parse what it saw."""
    from lnrepro.doors import container
    from lnrepro.errors import EnvironmentProblem

    code, out = container.run(spec, ["sh", "-c", probe_script(), "probe", ""], timeout=timeout)
    facts = parse_probe(out)
    if not facts.probed:
        raise EnvironmentProblem(
            f"the probe did not run in {spec.image} (exit {code}): {out.strip()[:160]}",
            "use an image with a POSIX /bin/sh",
        )
    return facts


def check_container(
    image: str,
    tt_metal: Path | None = None,
    min_driver: str | None = None,
    mount_set: str = "full",
) -> EnvReport:
    """The host, and the inside of the container lnrepro would start, judged by the same checks."""
    from lnrepro.doors import container

    host_facts, ctx, host_results = _host(tt_metal, min_driver)
    report = EnvReport("container", host_results)
    env = [("TT_METAL_HOME", str(tt_metal)), ("PYTHONPATH", str(tt_metal))] if tt_metal else []
    if ctx.arch_name:
        env.append(("ARCH_NAME", ctx.arch_name))
    spec = container.run_spec(
        image,
        device_nodes=[d.name for d in host_facts.devices if d.kind == "c"],
        hugepage_dirs=[d for d in container.HUGEPAGE_DIRS if Path(d).is_dir()],
        checkout=tt_metal,
        env=env,
        mount_set=mount_set,
    )
    report.container_command = spec.shell_line(["sh", "-c", "<probe>"])
    inside = container_facts(spec)
    cctx = Context(mode="container", tt_metal=tt_metal, min_driver=ctx.min_driver)
    in_results = {r.id: r for r in evaluate(inside, cctx, scope="facts")}  # host checks: not here
    report.container = [
        in_results.get(r.id) or Result(r.id, Status.SKIP, "judged on the host")
        for r in report.results
    ]
    return report
