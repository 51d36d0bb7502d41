"""``bisect --prebuilt dir:TEMPLATE``: ready build trees, per commit, tested before any build.

A template names the build tree of a commit (what ``build_metal.sh`` leaves in ``build_<type>``)
with ``{sha}`` (full), ``{short}`` (its first 10 characters) or ``{describe}`` (``git describe
--tags --always``, as tt-metal's versions are made). The commits whose tree exists are the search's
first choices (:class:`lnrepro.bisect.core.Search` ``prefer``): it bisects over them with no build,
then builds only inside the last interval. A tree that is missing its test binary, or whose
binary does not run, decides nothing: that commit is built like any other.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from lnrepro.errors import UsageError

KINDS = ("dir",)
FIELDS = ("{sha}", "{short}", "{describe}")


def template(spec: str) -> str:
    """The template of a ``--prebuilt`` value, or a usage error saying what is accepted."""
    kind, sep, rest = spec.partition(":")
    if not sep or kind not in KINDS:
        raise UsageError(
            f"--prebuilt {spec!r}: only dir:TEMPLATE is taken (tt-metal's wheels and release "
            "images hold no ttml_tests; docs/prebuilt.md)",
            "give a build tree per commit, e.g. an extracted CI tarball's: "
            "--prebuilt 'dir:/artifacts/{sha}/build'",
        )
    if not any(f in rest for f in FIELDS):
        raise UsageError(
            f"--prebuilt {spec!r} names no commit",
            "put {sha}, {short} or {describe} in the path, e.g. dir:/artifacts/{short}",
        )
    return rest


def expand(tmpl: str, sha: str, describe: str | None = None) -> str:
    out = tmpl.replace("{sha}", sha).replace("{short}", sha[:10])
    return out.replace("{describe}", describe or sha[:10])


def find(repo: Path, specs: Iterable[str], commits: Iterable[str]) -> dict[str, Path]:
    """Each commit's build tree: the first template whose directory exists."""
    from lnrepro.doors import gitops

    templates = [template(s) for s in specs]
    out: dict[str, Path] = {}
    for sha in commits:
        for t in templates:
            describe = None
            if "{describe}" in t:
                describe = gitops.git(repo, "describe", "--tags", "--always", sha).strip()
            p = Path(expand(t, sha, describe)).expanduser()
            if p.is_dir():
                out[sha] = p.absolute()
                break
    return out
