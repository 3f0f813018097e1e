"""Slash commands in issue comments: `/approve`, `/request-changes <reason>`, `/reject <reason>`,
`/retry [stage]`, `/status`, `/cancel [reason]`, `/adopt-branch` (build on commits a person added to the
promotion branch, after checking them).

A command is a line of its own that starts with the command; lines inside code
fences or block quotes are someone else's words, not a command. The first
command in a comment counts. The reason of `/request-changes` and `/reject` goes
on over the comment's following lines, so a change request can carry one
directive per line (``bot.directives``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NAMES = ("approve", "request-changes", "reject", "retry", "status", "cancel", "adopt-branch")
_LINE = re.compile(r"^/(?P<name>[a-z-]+)(?:[ \t]+(?P<arg>.*))?$")


@dataclass(frozen=True)
class Command:
    name: str
    argument: str = ""


class CommandError(ValueError):
    """A command was given but cannot be used as written; the message says how to write it."""


def parse(body: str) -> Command | None:
    """The first slash command in a comment, or None if it has none."""
    fenced = False
    lines = (body or "").replace("\r\n", "\n").split("\n")
    for i, raw in enumerate(lines):
        line = raw.strip()
        if line.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or line.startswith(">"):
            continue
        m = _LINE.match(line)
        if not m:
            continue
        name, arg = m.group("name"), (m.group("arg") or "").strip()
        if name in ("request-changes", "reject"):
            arg = "\n".join([arg, *lines[i + 1 :]]).strip()
        if name not in NAMES:
            raise CommandError(f"`/{name}` is not a command; use one of " + ", ".join(f"`/{n}`" for n in NAMES))
        if name in ("request-changes", "reject") and not arg:
            raise CommandError(f"`/{name}` needs a reason: `/{name} <why>`, so the author and the record know why")
        if name == "retry" and arg and not re.fullmatch(r"[1-7]", arg):
            raise CommandError("`/retry` takes an optional stage number 1-7, e.g. `/retry 5`")
        if name == "adopt-branch" and arg:
            raise CommandError("`/adopt-branch` takes no argument: it adopts every commit on top of the bot's")
        if name == "approve" and arg and not re.fullmatch(r"[123]", arg):
            raise CommandError("`/approve` takes an optional gate number 1-3, e.g. `/approve 2`")
        return Command(name, arg)
    return None
