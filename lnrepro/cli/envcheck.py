"""``lnrepro env-check``: can this host (or container) run tt-metal's tests? Each failure says
how to fix it."""

from __future__ import annotations

from pathlib import Path

import click

from lnrepro.cli.commands import SUMMARY, cli
from lnrepro.cli.output import echo_json
from lnrepro.cli.params import PATHS, Command, json_flag, option, tt_metal_home
from lnrepro.errors import ExitCode
from lnrepro.model.kinds import MountSet


@cli.command("env-check", cls=Command, short_help=SUMMARY["env-check"])
@option(
    "--sysroot",
    type=PATHS,
    metavar="DIR",
    help="Judge DIR as if it were / (its proc/, sys/, dev/).",
)
@option(
    "--container",
    "in_container",
    is_flag=True,
    help="Also start lnrepro's container (same mounts, devices, user, env as run) and judge it "
    "from inside. Needs the image on this machine: tt-metal's dev image is several GB "
    "(docker pull it once), or pass --image with any local image that has /bin/sh.",
)
@option(
    "--image",
    metavar="IMAGE",
    help="Image for --container. [default: ghcr.io/tenstorrent/tt-metal/tt-metalium/ubuntu-22.04-dev-amd64:latest]",
)
@option(
    "--mount-set",
    type=click.Choice([m.value for m in MountSet]),
    help="With --container: the mount set to judge, as lnrepro run --mount-set has them. "
    "[default: full, what lnrepro run starts]",
)
@option(
    "--tt-metal", "tt_metal", type=PATHS, help="The tt-metal checkout. [default: $TT_METAL_HOME]"
)
@option("--min-driver", help="Oldest acceptable tt-kmd version. [default: 1.33]")
@json_flag("{schema, checks: [{id, status, detail, fix}], summary}")
def env_check(
    sysroot: Path | None,
    in_container: bool,
    image: str | None,
    mount_set: str | None,
    tt_metal: Path | None,
    min_driver: str | None,
    as_json: bool,
) -> int:
    """Check that this host (or container) can run tt-metal's tests; say how to fix what cannot.

    Checks (stable ids): docker, device, driver, hugepages-count, hugepages-mount, iommu,
    sysfs, arch, tt-metal-home, submodules, lfs, tests, disk, tt-smi. Exits 0 when nothing failed,
    1 when something did, 2 on usage errors.
    """
    from lnrepro import api
    from lnrepro.model.requests import EnvCheckRequest

    checkout = tt_metal if tt_metal is not None else tt_metal_home()
    request = EnvCheckRequest(
        sysroot=sysroot,
        container=in_container,
        image=image,
        mount_set=MountSet(mount_set) if mount_set is not None else None,
        tt_metal=checkout,
        min_driver=min_driver,
    )
    report = api.env_check(request)
    if as_json:
        echo_json(report.to_json())
    else:
        from lnrepro.present.console import make_console, render_env

        render_env(report, make_console())
    return ExitCode.FAILED if report.failed else ExitCode.OK
