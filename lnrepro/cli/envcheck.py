"""``lnrepro env-check``: can this host (or container) run tt-metal's tests? Each failure says
how to fix it."""

from __future__ import annotations

import re
from pathlib import Path

import click

from lnrepro.cli import SUMMARY, cli, echo_json
from lnrepro.cli.options import PATHS, Command, exclusive, json_flag, option, tt_metal_home
from lnrepro.errors import ExitCode, UsageError

_VERSION = re.compile(r"^\d+(?:\.\d+){0,3}$")


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
    type=click.Choice(["full", "tt-metal", "seed-broken"]),
    help="With --container: the mount set to judge, as lnrepro run --mount-set has them. "
    "[default: full, what lnrepro run starts]",
)
@option(
    "--tt-metal",
    "tt_metal",
    type=PATHS,
    help="The tt-metal checkout. [default: $TT_METAL_HOME]",
)
@option("--min-driver", help="Oldest acceptable tt-kmd version. [default: 1.33]")
@json_flag("{schema, checks: [{id, status, detail, fix}], summary}")
def env_check(sysroot: Path | None, in_container: bool, image: str | None, mount_set: str | None,
              tt_metal: Path | None, min_driver: str | None, as_json: bool) -> int:  # fmt: skip
    """Check that this host (or container) can run tt-metal's tests; say how to fix what cannot.

    Checks (stable ids): docker, device, driver, hugepages-count, hugepages-mount, iommu,
    sysfs, arch, tt-metal-home, submodules, lfs, tests, disk, tt-smi. Exits 0 when nothing failed,
    1 when something did, 2 on usage errors.
    """
    from lnrepro import envcheck
    from lnrepro.run.validate import IMAGE_REF

    exclusive(sysroot=sysroot is not None, in_container=in_container)
    if not in_container and (image is not None or mount_set is not None):
        raise UsageError(("--image" if image is not None else "--mount-set") + " only applies with --container",
                         "add --container, or drop the option")  # fmt: skip
    if image is not None and not IMAGE_REF.match(image):
        raise UsageError(
            f"--image {image!r} is not a valid image name", "use a name like repo/name:tag"
        )
    if min_driver is not None and not _VERSION.match(min_driver):
        raise UsageError(
            f"--min-driver {min_driver!r} is not a version", "give a version like 1.33 or 2.0.0"
        )
    checkout = tt_metal if tt_metal is not None else tt_metal_home()
    home = checkout.absolute() if checkout is not None else None
    if sysroot is not None:
        report = envcheck.check_sysroot(sysroot, home, min_driver)
    elif in_container:
        from lnrepro.doors.container import DEFAULT_IMAGE

        report = envcheck.check_container(
            image or DEFAULT_IMAGE, home, min_driver, mount_set or "full"
        )
    else:
        report = envcheck.check_host(home, min_driver)
    if as_json:
        echo_json(report.to_json())
    else:
        from lnrepro.present.console import make_console, render_env

        render_env(report, make_console())
    return ExitCode.FAILED if report.failed else ExitCode.OK
