"""Slash commands in issue comments: `/approve [gate] [remark]`, `/request-changes <reason>`, `/reject <reason>`,
`/retry [stage]`, `/status`, `/cancel [reason]`, `/adopt-branch` (build on commits a person added to the
promotion branch, after checking them).

A command is a line of its own that starts with the command, as GitHub shows it: text GitHub hides (HTML
comments) or shows as someone else's words or as code (block quotes, fenced code blocks of any fence, indented
code blocks) is not a command, so a maintainer who quotes a command as an example, or pastes someone's
instructions, decides nothing. The first command in a comment counts. The reason of `/request-changes` and
`/reject`, and the remark of `/approve`, go on over the comment's following lines, so a change request can
carry one directive per line (``bot.directives``).

Every command is a member of ``Name``, which says what authorization it needs (``authz.Action``) or that it is
read-only (needs no role); ``bot.events.comments.HANDLERS`` maps each member to its handler, and a test holds the
two to each other, so a command is added in those two places (and its arguments in ``parse``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from bot.github.authz import Action


class Name(StrEnum):
    """The slash commands, each with the authorization it needs: ``action`` (``authz.authorize`` judges the person
    against it), or None for a read-only command, which anyone may give and which needs no role looked up."""

    APPROVE = "approve", "decide"
    REQUEST_CHANGES = "request-changes", "decide"
    REJECT = "reject", "decide"
    RETRY = "retry", "retry"
    STATUS = "status", None
    CANCEL = "cancel", "cancel"
    ADOPT_BRANCH = "adopt-branch", "retry"  # like a retry, it lets the bot build again; on commits a person checked

    def __new__(cls, value: str, action: Action | None) -> Name:
        member = str.__new__(cls, value)
        member._value_ = value
        member.action = action
        return member

    @property
    def read_only(self) -> bool:
        """Changes nothing, so anyone may give it: the one place the rule "`/status` needs no role" lives."""
        return self.action is None


#: The longest reason (or `/approve` remark) a command may carry. It is kept in the promotion's state, which lives
#: in one GitHub comment of at most 65,536 characters, with the gate's other reasons and their copies; a
#: long log belongs in a gist or a file the reason links to.
REASON_CHARS = 2_000
#: Command names are matched case-insensitively: a phone keyboard writes `/Approve`, which was passed over in
#: silence while its author believed the gate decided.
_LINE = re.compile(r"^/(?P<name>[A-Za-z-]+)(?:[ \t]+(?P<arg>.*))?$")
#: An HTML comment, or one left open (GitHub hides the rest of the comment then).
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
#: A code fence (CommonMark): up to 3 spaces, then 3 or more backticks or tildes.
_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_QUOTE = re.compile(r"^ {0,3}>")


@dataclass(frozen=True)
class Command:
    name: Name
    argument: str = ""  # the gate of /approve, the stage of /retry, the reason of the others
    note: str = ""  # the remark an /approve puts on record with the decision


class CommandError(ValueError):
    """A command was given but cannot be used as written; the message says how to write it."""


def parse(body: str) -> Command | None:
    """The first slash command in a comment, or None if it has none."""
    lines = _unhidden(body)
    for i, shown in enumerate(own_lines(lines)):
        m = _LINE.match(lines[i].strip()) if shown else None
        if not m:
            continue
        written, arg = m.group("name"), (m.group("arg") or "").strip()
        rest = "\n".join([arg, *lines[i + 1 :]]).strip()
        try:
            name = Name(written.lower())
        except ValueError:
            raise CommandError(
                f"`/{written}` is not a command; use one of " + ", ".join(f"`/{n}`" for n in Name)
            ) from None
        if name in ("request-changes", "reject"):
            if not rest:
                raise CommandError(f"`/{name}` needs a reason: `/{name} <why>`, so the author and the record know why")
            return Command(name, _bounded(name, "reason", rest))
        if name == "approve":
            command = _approve(rest)
            _bounded(name, "remark", command.note)
            return command
        if name == "cancel":
            return Command(name, _bounded(name, "reason", arg))
        if name == "retry" and arg and not re.fullmatch(r"[1-7]", arg):
            raise CommandError("`/retry` takes an optional stage number 1-7, e.g. `/retry 5`")
        if name == "adopt-branch" and arg:
            raise CommandError("`/adopt-branch` takes no argument: it adopts every commit on top of the bot's")
        return Command(name, arg)
    return None


def _bounded(name: str, what: str, text: str) -> str:
    """``text`` when it fits ``REASON_CHARS``; else CommandError: the command is refused whole, not cut (a change
    request's directives are read line by line, and a cut one would apply a different value)."""
    if len(text) <= REASON_CHARS:
        return text
    raise CommandError(
        f"`/{name}` was not applied: its {what} is {len(text):,} characters long, and a {what} may be at most "
        f"{REASON_CHARS:,} (the promotion's state keeps it, in one GitHub comment). Shorten it (link to a gist or "
        "a file for a long log) and comment again"
    )


def _approve(rest: str) -> Command:
    """`/approve`, `/approve 2`, `/approve looks right`, `/approve 2 looks right`: a gate, then a remark."""
    gate = re.match(r"([0-9]+)(?=\s|$)", rest)
    if gate is None:
        return Command(Name.APPROVE, "", rest)
    if gate.group(1) not in ("1", "2", "3"):
        raise CommandError(
            "`/approve` takes an optional gate number 1-3, then an optional remark, e.g. `/approve 2 looks right`"
        )
    return Command(Name.APPROVE, gate.group(1), rest[gate.end() :].strip())


def _unhidden(body: str) -> list[str]:
    """The comment's lines without its HTML comments (GitHub shows none; an unclosed one hides the rest)."""
    text = (body or "").replace("\r\n", "\n").replace("\r", "\n")
    return _HTML_COMMENT.sub(lambda m: "\n" * m.group().count("\n"), text).split("\n")


def own_lines(lines: list[str]) -> list[bool]:
    """For each line, whether GitHub shows it as a line of the writer's own text (where a command may stand).

    Not the writer's words: block quotes, and a line right after a quoted one (a lazy continuation of the
    quote). Code: fenced blocks (closed only by a fence of the same character at least as long, so a
    four-backtick block may show a three-backtick fence; an unclosed fence runs to the end) and lines indented
    4 columns or more (an indented code block, or a continuation of the paragraph above: never a line of its own).
    """
    out: list[bool] = []
    fence = ""
    quoted = False
    for raw in lines:
        m = _FENCE.match(raw)
        if fence:
            if m and m.group("fence")[0] == fence[0] and len(m.group("fence")) >= len(fence) and not m["info"].strip():
                fence = ""
            out.append(False)
            continue
        if m and not (m.group("fence")[0] == "`" and "`" in m.group("info")):
            fence, quoted = m.group("fence"), False
            out.append(False)
            continue
        quoted = bool(_QUOTE.match(raw)) or (quoted and bool(raw.strip()))
        indent = len(raw.expandtabs(4)) - len(raw.expandtabs(4).lstrip(" "))
        out.append(not quoted and indent < 4 and bool(raw.strip()))
    return out
