"""Untrusted text from issues and comments, made safe to read as data before anything else looks at it.

Anyone with an account can open an issue, so its text is hostile until shown
otherwise. What hides meaning from a reviewer is refused outright, with the
line: bidirectional-override characters (Trojan Source), a hidden HTML comment
that imitates the bot's own markers, Actions expressions (``${{ }}``) and
shell command substitution (``$( )``). What is merely invisible noise is
removed: other HTML comments and zero-width characters in prose. Code is never
silently changed: a zero-width character inside a fenced code block is refused,
because removing it would change what a person reviewed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.forge import markers

#: GitHub's own cap on an issue or comment body is 65,536 characters.
MAX_BODY_CHARS = 65_536

#: Bidirectional controls that reorder how text is displayed (CVE-2021-42574, "Trojan Source").
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
#: Characters that take no space: they make two different strings look identical.
ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff\u180e"

_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
_BOT_MARKER = re.compile(rf"<!--\s*{re.escape(markers.BRAND)}\b", re.I)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.M)
_EXPRESSION = re.compile(r"\$\{\{")
_SUBSTITUTION = re.compile(r"\$\(")


class UnsafeText(ValueError):
    """The text cannot be used as given; ``problems`` say what to change and where."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass
class Cleaned:
    text: str
    removed: list[str] = field(default_factory=list)  # what was stripped, for the record


def line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _code_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of fenced code blocks, so code and prose can be told apart."""
    spans, opened = [], None
    for m in _FENCE.finditer(text):
        if opened is None:
            opened = m
        elif m.group(1)[0] == opened.group(1)[0] and len(m.group(1)) >= len(opened.group(1)):
            spans.append((opened.start(), m.end()))
            opened = None
    if opened is not None:
        spans.append((opened.start(), len(text)))
    return spans


def _in(spans: list[tuple[int, int]], i: int) -> bool:
    return any(a <= i < b for a, b in spans)


def clean(text: str | None, *, what: str = "the issue", limit: int = MAX_BODY_CHARS) -> Cleaned:
    """Check and clean one body of untrusted text; raises UnsafeText naming every problem found."""
    text = (text or "").replace("\r\n", "\n").replace("\r", "\n")
    problems: list[str] = []
    if len(text) > limit:
        problems.append(
            f"{what} is {len(text):,} characters long; the limit is {limit:,}: reference the evolved program as "
            "owner/repo@sha:path instead of pasting a large file"
        )
        return _refuse(problems)
    for m in re.finditer(f"[{BIDI}]", text):
        problems.append(
            f"{what} line {line_of(text, m.start())} holds a hidden bidirectional control character "
            f"(U+{ord(m.group()):04X}) that can make code read differently from how it runs; remove it"
        )
        break
    marker = _BOT_MARKER.search(text)
    if marker:
        problems.append(
            f"{what} line {line_of(text, marker.start())} contains a `<!-- promotion-bot ... -->` marker, which "
            "only the bot writes; remove it"
        )
    for pattern, name in ((_EXPRESSION, "a GitHub Actions expression `${{`"), (_SUBSTITUTION, "shell syntax `$(`")):
        m = pattern.search(text)
        if m:
            problems.append(f"{what} line {line_of(text, m.start())} contains {name}; remove it (it is never needed)")
    code = _code_spans(text)
    for m in re.finditer(f"[{ZERO_WIDTH}]", text):
        if _in(code, m.start()):
            problems.append(
                f"{what} line {line_of(text, m.start())}: the code holds an invisible zero-width character "
                f"(U+{ord(m.group()):04X}); remove it"
            )
            break
    if problems:
        return _refuse(problems)
    removed = []
    if _HTML_COMMENT.search(text):
        removed.append("HTML comments")
        text = _HTML_COMMENT.sub("", text)
    if re.search(f"[{ZERO_WIDTH}]", text):
        removed.append("zero-width characters")
        text = re.sub(f"[{ZERO_WIDTH}]", "", text)
    return Cleaned(text=text, removed=removed)


def _refuse(problems: list[str]) -> Cleaned:
    raise UnsafeText(problems)


def quote_for_comment(text: str, limit: int = 200) -> str:
    """A short piece of untrusted text shown back in a bot comment: one line, no mentions, no markup."""
    one = " ".join(text.split())[:limit]
    one = one.replace("@", "@\u200b").replace("`", "'").replace("<", "&lt;").replace(">", "&gt;")
    return f"`{one}`"
