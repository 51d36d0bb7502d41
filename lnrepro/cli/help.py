"""How lnrepro's help is laid out: click's formatter, wrapping so that no flag, path or test name
is ever cut across lines (:func:`wrap_whole`). Owns nothing else; the commands' texts live with
the commands, the list of commands in :mod:`.commands`."""

from __future__ import annotations

import re
from collections.abc import Iterable

import click


def wrap_whole(text: str, width: int, indent: str = "", paragraphs: bool = False) -> str:
    """click's ``wrap_text`` that never splits a token: lines break at spaces only (click's
    TextWrapper breaks after hyphens and inside words longer than the line, so ``--hang-in``,
    paths and test names came out cut). A token longer than the line stands on a line of its own
    (the terminal folds it; a reader or a copy gets it whole). ``paragraphs``: click's rules
    (blank lines part paragraphs; a paragraph that starts with ``\\b`` is kept as written)."""
    import textwrap

    def fill(body: str, pad: str) -> str:
        return textwrap.fill(
            body,
            max(width, 1),
            initial_indent=pad,
            subsequent_indent=pad,
            replace_whitespace=False,
            break_on_hyphens=False,
            break_long_words=False,
        )

    text = text.expandtabs()
    if not paragraphs:
        return fill(text, indent)
    out: list[str] = []
    for block in re.split(r"\n[ \t]*\n", text.strip("\n")):
        lines = block.splitlines()
        if not lines:
            continue
        extra = " " * (len(lines[0]) - len(lines[0].lstrip()))
        if lines[0].strip() == "\b":  # as written, indented
            out.append(
                "\n".join(
                    indent + extra + line.lstrip() if line.strip() else "" for line in lines[1:]
                )
            )
            continue
        out.append(fill(" ".join(line.strip() for line in lines), indent + extra))
    return "\n\n".join(out)


def fit_tokens(text: str, width: int) -> str:
    """Each line that is one token alone on a line too narrow for it (a long default, an
    image name, a test id) moved left until it fits ``width`` (to the margin at most): whole,
    and no wider than the terminal, so the terminal does not fold it."""
    out = []
    for line in text.split("\n"):
        token = line.strip()
        if len(line) > width and token and " " not in token:
            line = " " * max(0, min(len(line) - len(line.lstrip()), width - len(token))) + token
        out.append(line)
    return "\n".join(out)


class HelpFormatter(click.HelpFormatter):
    """click's help formatter, wrapping with :func:`wrap_whole` so no flag, path or test name is
    ever split across lines (click's formatter is documented to be subclassed for this), and a
    token too long for its column moved left to fit the width (:func:`fit_tokens`)."""

    def getvalue(self) -> str:
        return fit_tokens(super().getvalue(), self.width)

    def write_usage(self, prog: str, args: str = "", prefix: str | None = None) -> None:
        prefix = "Usage: " if prefix is None else prefix
        head = f"{prefix:>{self.current_indent}}{prog} "
        if not args:
            self.write(head.rstrip(" ") + "\n")
            return
        width = self.width - self.current_indent
        body = wrap_whole(args, width - len(head), paragraphs=False)
        self.write(head + body.replace("\n", "\n" + " " * len(head)) + "\n")

    def write_text(self, text: str) -> None:
        self.write(wrap_whole(text, self.width, " " * self.current_indent, paragraphs=True) + "\n")

    def write_dl(
        self, rows: Iterable[tuple[str, str]], col_max: int = 30, col_spacing: int = 2
    ) -> None:
        rows = list(rows)
        first_col = min(max((len(a) for a, _ in rows), default=0), col_max) + col_spacing
        pad = " " * (first_col + self.current_indent)
        for first, second in rows:
            self.write(f"{'':>{self.current_indent}}{first}")
            if not second:
                self.write("\n")
                continue
            if len(first) <= first_col - col_spacing:
                self.write(" " * (first_col - len(first)))
            else:
                self.write("\n" + pad)
            lines = wrap_whole(second, max(self.width - first_col - 2, 10), paragraphs=True)
            self.write(lines.replace("\n", "\n" + pad) + "\n")


class Context(click.Context):
    formatter_class = HelpFormatter
