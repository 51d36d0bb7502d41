"""Bisect over the released versions of a dependency: which release of NAME made a test fail
(or, with ``find_fix``, fixed it).

The versions are the ones that install here: the index's files (a PEP 503 simple page, or a
find-links folder of wheels) are read with ``packaging`` — a wheel counts when one of its tags is
one this Python supports and its ``Requires-Python`` (the page's ``data-requires-python``, else
the wheel's METADATA) admits this Python's version. ``pip index versions`` is not enough: it
lists versions that have no wheel here. A version in the range that does not install here is
a skip, never good or bad.

Each step's version goes into a venv of its own, cached by Python and version, layered over the
user's Python (:func:`lnrepro.run.backends.python.layered_env`): pytest and the project's other
packages are the user's, the bisected package at the step's version on top, with what that
version needs that the user's environment lacks (pip installs it there). The user's environment
is never written. uv installs the package when it is installed, pip what uv cannot (see
:func:`step_env`; scripts/bench_versions.py measures both).
"""

from __future__ import annotations

import html.parser
import os
import re
import sys
import urllib.parse
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Literal

from lnrepro.bisect.validate import Flag
from lnrepro.errors import EnvironmentProblem, UsageError
from lnrepro.model.bisect import Mark as Mark  # a release judged as a commit is

SCHEMA: Literal["lnrepro.version-bisect/1"] = "lnrepro.version-bisect/1"


@dataclass(frozen=True, kw_only=True)
class Release:
    version: str
    files: tuple[str, ...] = ()
    installable: bool = True
    why_not: str = ""  # why no file of it installs here


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            a = dict(attrs)
            if a.get("href"):
                self.links.append((str(a["href"]), a.get("data-requires-python")))


def _files(source: str, name: str) -> list[tuple[str, str | None]]:
    """(path of a file, its page's requires-python) for package ``name`` in ``source``: a
    find-links folder, or a PEP 503 simple index (a folder or a file:// URL)."""
    from packaging.utils import canonicalize_name

    root = Path(urllib.parse.urlparse(source).path) if source.startswith("file:") else Path(source)
    page = root / canonicalize_name(name) / "index.html"
    if page.is_file():
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8", errors="replace"))
        return [
            (str((page.parent / urllib.parse.unquote(href.split("#", 1)[0])).resolve()), rp)
            for href, rp in parser.links
        ]
    if root.is_dir():
        return [(str(p), None) for p in sorted(root.iterdir()) if p.is_file()]
    raise UsageError(
        f"no package index at {source}",
        "pass --index-url DIR (a PEP 503 simple index) or --find-links DIR",
    )


def _wheel_requires_python(path: str) -> str | None:
    try:
        with zipfile.ZipFile(path) as z:
            meta = next((n for n in z.namelist() if n.endswith(".dist-info/METADATA")), None)
            text = z.read(meta).decode("utf-8", "replace") if meta else ""
    except (OSError, zipfile.BadZipFile):
        return None
    m = re.search(r"^Requires-Python:\s*(.+)$", text, re.MULTILINE)
    return m.group(1).strip() if m else None


def releases(source: str, name: str, python_version: str | None = None) -> list[Release]:
    """Every version of ``name`` the index holds, oldest first, each saying whether a file of it
    installs on this Python and platform (wheels only: building an sdist is not a step's job)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.tags import sys_tags
    from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
    from packaging.version import Version

    here = set(sys_tags())
    pyver = python_version or ".".join(str(x) for x in sys.version_info[:3])
    by_version: dict[Version, list[tuple[str, bool, str]]] = {}
    for path, page_rp in _files(source, name):
        base = Path(path).name
        if not base.endswith(".whl"):
            continue
        try:
            dist, version, _build, tags = parse_wheel_filename(base)
        except InvalidWheelFilename:
            continue
        if dist != canonicalize_name(name):
            continue
        why = "" if tags & here else "no wheel for this Python and platform"
        rp = page_rp or _wheel_requires_python(path)
        if not why and rp:
            try:
                if pyver not in SpecifierSet(rp):
                    why = f"requires Python {rp}"
            except InvalidSpecifier:
                pass
        by_version.setdefault(version, []).append((path, not why, why))
    return [
        Release(
            version=str(v),
            files=tuple(f[0] for f in files),
            installable=any(f[1] for f in files),
            why_not="" if any(f[1] for f in files) else files[0][2],
        )
        for v, files in sorted(by_version.items())
    ]


def in_range(all_releases: list[Release], good: str, bad: str, *, find_fix: bool) -> list[Release]:
    """The releases from the older end to the newer one, both included; bad input is one line."""
    from packaging.version import InvalidVersion, Version

    known = {Version(r.version): r for r in all_releases}
    try:
        g, b = Version(good), Version(bad)
    except InvalidVersion as exc:
        raise UsageError(
            f"{exc}", f"give {Flag.good} and {Flag.bad} as release versions, e.g. 1.26.4"
        ) from None
    for given, v in ((Flag.good, g), (Flag.bad, b)):
        if v not in known:
            raise UsageError(
                f"{given} {v}: no such release in the index",
                f"pick one of {', '.join(r.version for r in all_releases[-8:]) or 'none'}",
            )
    older, newer = (b, g) if find_fix else (g, b)
    if not older < newer:
        raise UsageError(
            f"{Flag.good} {good} is not older than {Flag.bad} {bad}"
            if not find_fix
            else f"{Flag.bad} {bad} is not older than {Flag.good} {good} ({Flag.find_fix}: the fix "
            "comes later)",
            f"the newer release goes last: swap {Flag.good}/{Flag.bad}, or add {Flag.find_fix} to "
            "find the fix",
        )
    span = [r for v, r in sorted(known.items()) if older <= v <= newer]
    if not any(r.installable for r in span):
        raise UsageError(
            f"no release from {older} to {newer} installs on this Python and platform",
            "pick another range (lnrepro lists the releases that install here)",
        )
    for given, v in ((Flag.good, g), (Flag.bad, b)):
        if not known[v].installable:
            raise UsageError(
                f"{given} {v} does not install here: {known[v].why_not}", "pick another release"
            )
    return span


@dataclass(frozen=True, kw_only=True)
class Step:
    """One release judged (or skipped without a try: it installs nowhere here)."""

    version: str
    mark: Mark  # skip: the version did not install here, or its test did not run to a verdict
    why: str = ""  # why a skip is one
    record: str = ""  # the step's run record directory ("": no run)
    seconds: float = 0.0


class ResultKind(str, Enum):
    FIRST_BAD = "first bad version"
    FIRST_FIXED = "first fixed version"  # --find-fix


@dataclass(frozen=True, kw_only=True)
class VersionResult:
    kind: ResultKind
    first_bad: str | None  # with --find-fix, the first fixed version; None: no answer
    last_good: str | None  # with --find-fix, the last version that is still bad
    reason: str  # why there is no answer ("" when there is one)


@dataclass(frozen=True, kw_only=True)
class VersionBisectDoc:
    """``bisect --package NAME --json`` (``lnrepro.version-bisect/1``): which release of NAME
    made the test fail, or fixed it, and every release judged, in the order judged
    (scripts/schemas.py derives docs/schemas/version-bisect.json from it)."""

    schema: Literal["lnrepro.version-bisect/1"] = SCHEMA
    package: str
    result: VersionResult
    steps: tuple[Step, ...]


@dataclass(kw_only=True)
class Outcome:
    first_bad: str | None = None
    last_good: str | None = None
    steps: list[Step] = field(default_factory=list)
    reason: str = ""

    def document(self, package: str, find_fix: bool) -> VersionBisectDoc:
        kind = ResultKind.FIRST_FIXED if find_fix else ResultKind.FIRST_BAD
        return VersionBisectDoc(
            package=package,
            result=VersionResult(
                kind=kind, first_bad=self.first_bad, last_good=self.last_good, reason=self.reason
            ),
            steps=tuple(self.steps),
        )

    def as_json(self, package: str, find_fix: bool) -> dict[str, object]:
        from lnrepro.model import codec

        return dict(codec.encode_obj(self.document(package, find_fix)))


def search(span: list[Release], judge: Callable[[Release], Step], *, find_fix: bool) -> Outcome:
    """Binary search between the two ends (``span[0]`` and ``span[-1]`` are the ends, judged
    first); a skipped release is replaced by its nearest untested neighbour, as git does."""
    out = Outcome()
    # "old" is the state of the older end: good when looking for a regression, bad for a fix
    old_mark, new_mark = (Mark.BAD, Mark.GOOD) if find_fix else (Mark.GOOD, Mark.BAD)
    for end, want in ((span[-1], new_mark), (span[0], old_mark)):
        s = judge(end)
        out.steps.append(s)
        if s.mark != want:
            out.reason = (
                f"{end.version} is {s.mark.value}, not {want.value}: the ends do not separate"
            )
            return out
    lo, hi = 0, len(span) - 1  # lo: old state, hi: new state
    skipped: set[int] = {i for i, r in enumerate(span) if not r.installable}
    for i in sorted(skipped):
        out.steps.append(Step(version=span[i].version, mark=Mark.SKIP, why=span[i].why_not))
    while hi - lo > 1:
        inner = [i for i in range(lo + 1, hi) if i not in skipped]
        if not inner:
            break
        mid = min(inner, key=lambda i: abs(i - (lo + hi) / 2))
        s = judge(span[mid])
        out.steps.append(s)
        if s.mark is Mark.SKIP:
            skipped.add(mid)
        elif s.mark == old_mark:
            lo = mid
        else:
            hi = mid
    hidden = [span[i].version for i in range(lo + 1, hi)]
    if hidden:
        out.reason = f"skipped releases hide which is first: {', '.join(hidden)}"
        out.last_good = span[lo].version
        return out
    out.first_bad, out.last_good = span[hi].version, span[lo].version
    return out


# Run by a step's Python after uv installed packages alone (``--no-deps``): the requirements of
# the packages named in argv that its environment does not meet (the user's packages count, which
# uv does not see: it reads the step venv's own site-packages only, not the user's under it), as a
# JSON list of [name, requirement]; null when it cannot tell (no ``packaging``, neither its own
# nor pip's copy) or a requirement names extras (whose own requirements it does not follow).
UNMET_SCRIPT = """import json, sys
from importlib import metadata


def unmet():
    try:
        from packaging.requirements import Requirement
    except ImportError:
        try:
            from pip._vendor.packaging.requirements import Requirement
        except ImportError:
            return None
    out = {}
    for name in sys.argv[1:]:
        for line in metadata.requires(name) or []:
            r = Requirement(line)
            if r.marker is not None and not r.marker.evaluate({"extra": ""}):
                continue
            if r.extras:
                return None
            try:
                have = metadata.version(r.name)
            except metadata.PackageNotFoundError:
                have = None
            if have is None or not r.specifier.contains(have, prereleases=True):
                out[r.name] = str(r.name) + str(r.specifier)
    return sorted(out.items())


print(json.dumps(unmet()))
"""
UV_ROUNDS = 8  # requirements of requirements, followed this deep before pip takes over


def find_uv() -> str | None:
    """uv, when installed: beside this Python (``pip install uv`` in lnrepro's venv), else on PATH."""
    import shutil

    beside = Path(sys.executable).parent / "uv"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("uv")


def step_env(
    cache: Path,
    python: str,
    package: str,
    release: Release,
    index: list[str],
    *,
    installer: str | None = None,
) -> str:
    """The step's Python: a cached venv over ``python`` with ``package==version`` installed (and
    what it needs that ``python``'s environment lacks). Raises EnvironmentProblem if pip fails.

    ``installer`` None: uv when it is installed, else pip. uv installs the package, and what it
    needs that the user's environment lacks (:func:`_uv_installed`); where uv cannot (an index
    only pip's configuration names, such as a machine's own wheels, or requirements uv's way
    does not settle), pip installs it with what it needs, as without uv
    (scripts/bench_versions.py measures both)."""
    from lnrepro.doors import proc
    from lnrepro.run.backends.python import LayerFailed, layered_env

    # the Python's path, not resolved: a venv is not its base
    tag = re.sub(r"[^\w.]+", "_", str(Path(python).absolute()))[-60:]
    venv = cache / f"{package}-{release.version}-{tag}"
    done = venv / ".lnrepro-installed"
    step_python = venv / "bin" / "python"
    if done.is_file() and step_python.exists():
        return str(step_python)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    try:
        layered_env(python, venv, env)
    except LayerFailed as exc:
        raise EnvironmentProblem(
            f"could not make a venv for {release.version}: {exc.what}", f"check {Flag.python}"
        ) from None
    uv = find_uv() if installer in (None, "uv") else None
    if installer == "uv" and uv is None:
        raise EnvironmentProblem("uv is not installed", "pip install uv, or install with pip")
    want = f"{package}=={release.version}"
    if uv is not None and _uv_installed(uv, str(step_python), package, want, index, env):
        done.write_text(release.version)
        return str(step_python)
    argv = [
        str(step_python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
        "--no-input", *index, want,
    ]  # fmt: skip
    code, out = proc.capture(argv, timeout=3600.0, env={**env, "VIRTUAL_ENV": str(venv)})
    if code != 0:
        raise EnvironmentProblem(
            f"pip could not install {want}: {out.strip()[-200:]}",
            "check the index (--index-url/--find-links)",
        )
    done.write_text(release.version)
    return str(step_python)


def _uv_installed(
    uv: str, step_python: str, package: str, want: str, index: list[str], env: dict[str, str]
) -> bool:
    """``want`` installed by uv into the step's venv, then what it needs that the step's
    environment lacks, one level at a time, each with ``--no-deps`` (uv cannot see the user's
    packages under the venv, so it may not resolve); True once every requirement of what it
    installed is met. False leaves the rest to pip: uv failed, a requirement names extras, the
    requirements conflict, or they go deeper than :data:`UV_ROUNDS`."""
    import json

    from lnrepro.doors import proc

    names, wants = [package], [want]
    for _ in range(UV_ROUNDS):
        argv = [uv, "pip", "install", "-q", "--python", step_python, "--no-deps", *index, *wants]
        code, _out = proc.capture(argv, timeout=3600.0, env=env)
        if code != 0:
            return False
        code, out = proc.capture([step_python, "-c", UNMET_SCRIPT, *names], timeout=120.0, env=env)
        try:
            unmet = json.loads(out.strip().splitlines()[-1]) if code == 0 else None
        except (ValueError, IndexError):
            return False
        if unmet is None:
            return False
        if not unmet:
            return True
        wants = [str(w) for _, w in unmet]
        names += [str(n) for n, _ in unmet if n not in names]  # all checked again: a conflict
    return False
