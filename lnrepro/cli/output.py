"""What every command writes besides its view: a JSON document on stdout (:func:`echo_json`) and
``-o FILE`` (:func:`write_output`), with the errors a path can give."""

from __future__ import annotations

import errno
from pathlib import Path

import click

from lnrepro.errors import EnvironmentProblem, UsageError


def echo_json(doc: object) -> None:
    """A document on stdout as strict JSON (and, for the test suite, captured: see fsio)."""
    from lnrepro.doors.fsio import capture_json
    from lnrepro.model.jsonio import dumps

    text = dumps(doc)
    click.echo(text)
    capture_json(text)


def write_output(path: Path, text: str, flag: str = "-o") -> None:
    """``-o FILE``: written atomically, through the one write door. A path that cannot be a file
    is the user's to change (exit 2); a directory that refuses the write is the environment's."""
    from lnrepro.doors.fsio import atomic_write_text, write_error

    if path.is_dir():
        raise UsageError(
            f"{flag} {path} is a directory", f"name a file, e.g. {flag} {path / 'report.md'}"
        )
    if not path.parent.is_dir():
        raise UsageError(
            f"{flag} {path}: the directory {path.parent} does not exist",
            f"create it (mkdir -p {path.parent}), or write elsewhere",
        )
    try:
        atomic_write_text(path, text)
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise write_error(path, exc) from None
        raise EnvironmentProblem(
            f"cannot write {flag} {path}: {exc.strerror}",
            f"pass {flag} a path in a directory you can write",
        ) from None
    click.echo(f"lnrepro: wrote {path}", err=True)
