"""``lnrepro env-check``: a row per check, then each fix's command to paste."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lnrepro.present.console.layout import Col, Row, say, say_command, show_table
from lnrepro.present.console.style import ENV_STYLE, styled
from lnrepro.present.escape import terminal as esc

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text


def render_env(report: Any, console: Console) -> None:
    """``lnrepro env-check``: a row per check (with ``--container``, the host's and the
    container's verdicts, each labelled, and both reasons when they differ), then each fix's
    command on a line of its own (one line of valid shell, to paste), apart from the advice."""
    container = report.container is not None
    cols = [
        Col("check"),
        Col("host", label=True) if container else Col("status"),
        *([Col("container", label=True)] if container else []),
        Col("detail", text=True),
        Col("fix", text=True),
    ]
    inside = {r.id: r for r in (report.container or [])}
    rows: list[Row] = []
    commands: list[tuple[str, str]] = []  # (where, command)
    for r in report.results:
        s = r.status.value
        row: list[Text | str] = [esc(r.id), styled((s.upper(), ENV_STYLE[s]))]
        detail, fix = r.detail, r.fix
        if r.command and r.status.value in ("fail", "warn"):
            commands.append((r.id, r.command))
        if container:
            c = inside[r.id]
            row.append(styled((c.status.value.upper(), ENV_STYLE[c.status.value])))
            if c.detail != r.detail:
                detail = f"host: {r.detail}\ncontainer: {c.detail}"
            if c.status != r.status and c.status.value != "skip":
                fix = c.fix or r.fix
                if c.command and c.command != r.command:
                    commands.append((f"{r.id} (container)", c.command))
        rows.append([*row, esc(detail), esc(fix)])
    show_table(
        console,
        f"lnrepro env-check ({report.mode})",
        cols,
        rows,
        head=2 + container,
        lead=(1, 2, 0) if container else (1, 0),
    )
    for where, command in commands:
        say_command(console, f"fix {where}: ", command)
    if container:
        say_command(console, "container: ", report.container_command)
        for h, c in report.differences():
            if c.status.value == "skip":
                continue
            say(
                console,
                styled(
                    ("differs", "bold"),
                    f" {h.id}: host {h.status.value}, container {c.status.value} — {c.detail}"
                    + (f" — fix: {c.fix}" if c.fix else ""),
                ),
            )
    say(
        console,
        styled("verdict: ", ("not ready", "bold red") if report.failed else ("ready", "green")),
    )
