"""What the gate-1 reviewer would not see: invisible characters and linter suppressions in the evolved program.

Gate 1 is a person reading the evolved code, and what they approve must be what runs and what upstream CI
checks. Two things break that without changing what the code computes, so the safety check refuses both.

``safety.invisible-character``: a Hangul filler is a letter to Go and renders as blank space, so
``limit<U+3164>`` is a second variable that reads as ``limit``; a bidirectional override displays a comment
as code or code as a comment ("Trojan Source", CVE-2021-42574); a zero-width character hides in a string. The compiler, the harness and the agreement figure all see the real code, so nothing downstream
notices: only the reader is deceived. The GitHub sanitizer refuses some of these in a pasted program, but a
program read from a file or a repository never passes through it, so the check lives here, next to the
other static refusals, and runs on every path.

Ordinary non-ASCII text (``µs`` in a comment, ``é`` in a name) is fine: only the invisible ones are refused.

``safety.lint-suppression``: llm-d-router's CI runs golangci-lint (govet, staticcheck, errcheck, gocritic,
revive...) with no ``nolintlint``, so a ``//nolint:all`` carried into the plugin switches every linter off
for the evolved function there, and nothing tells the reviewer. The carried code keeps the evolved comments
(a reviewer diffs it line by line), so such a comment is refused rather than silently dropped.
"""

from __future__ import annotations

import re
import unicodedata

from bot.golang.source import EvolvedSource
from bot.model import Finding, Severity

CHECK_INVISIBLE = "safety.invisible-character"
CHECK_LINT = "safety.lint-suppression"

#: Letters (category Lo, so Go accepts them in identifiers) that render as blank space: ``limit\u3164`` is a
#: second variable that reads as ``limit``. The Hangul fillers, and the braille blank for strings.
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
#: Line and paragraph separators: Go reads them as part of a comment or string, editors and browsers break the
#: line there, so code after one in a comment looks live.
_SEPARATORS = frozenset("\u2028\u2029")
#: Everything but tab, newline and printable ASCII (a lone carriage return is a control character: the loader
#: already turned CRLF into LF, and a lone one makes a terminal or editor draw the rest over the line).
_NOT_PLAIN = re.compile(r"[^\t\n\x20-\x7e]")
#: Findings for invisible characters stop after this many lines (a file full of them needs one fix, not 10,000).
_MAX_INVISIBLE_LINES = 20
#: Comments linters read as instructions: golangci-lint's ``nolint`` (it strips leading ``/`` and spaces, so
#: ``// nolint:x`` counts too), gosec's ``#nosec``, and Go's machine-readable directive form ``//tool:word``
#: (go/ast's isDirective) that staticcheck (``//lint:ignore``), revive (``//revive:disable``) and others use.
#: ``//go:`` directives match too, but the safety check refuses them first, as compiler directives.
_LINT_DIRECTIVE = re.compile(r"^//[/\s]*(?i:nolint)\b|^//[a-z0-9]+:[a-z0-9]|(?i:#nosec)\b")
#: Bidi classes of the controls that embed, override or isolate a run of text.
_BIDI_CONTROLS = frozenset({"LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"})


def _invisible(ch: str) -> str | None:
    """Why ``ch`` cannot be seen for what it is, or None for a character a reader sees."""
    if ch in _BLANK_LETTERS:
        return (
            "a letter that displays as blank space (Go accepts it in a name, so a name holding it looks like another)"
        )
    if ch in _SEPARATORS:
        return "a line break to editors and browsers but not to Go (code after it in a comment looks live)"
    category = unicodedata.category(ch)
    if category == "Cf":
        return (
            "a bidirectional control: it reorders how the line is displayed (Trojan Source)"
            if unicodedata.bidirectional(ch) in _BIDI_CONTROLS
            else "an invisible format character (zero-width or similar)"
        )
    if category == "Cc":
        return "a control character"
    return None


def invisible_characters(src: EvolvedSource) -> list[Finding]:
    """A CRITICAL finding for each line of the Go text holding a character a reader cannot see for what it is.

    Wherever they are (names, strings, comments): a string or comment is read at gate 1 like the code. Line
    and column are the researcher's; the column counts characters, as an editor does.
    """
    found: list[Finding] = []
    lines = src.go_text.split("\n")
    extra = 0
    for i, text in enumerate(lines, start=1):
        hits = [(m.start(), why) for m in _NOT_PLAIN.finditer(text) if (why := _invisible(m.group())) is not None]
        if not hits:
            continue
        if len(found) == _MAX_INVISIBLE_LINES:
            extra += 1
            continue
        col, why = hits[0]
        ch = text[col]
        name = unicodedata.name(ch, "")
        label = f"U+{ord(ch):04X} {name}" if name else f"U+{ord(ch):04X}"
        more = f" (and {len(hits) - 1} more on this line)" if len(hits) > 1 else ""
        found.append(
            Finding(
                severity=Severity.CRITICAL,
                check=CHECK_INVISIBLE,
                message=f"column {src.to_original_column(i, col + 1)} holds {label}, {why}: "
                f"the code a reviewer reads is not the code that runs{more}",
                fix=f"delete the character, or write it as the escape \\u{ord(ch):04x} if a string needs it; "
                "spell names in visible letters",
                source_line=max(1, src.to_original_line(i)),
            )
        )
    if extra:
        last = found[-1]
        found[-1] = last.model_copy(update={"message": f"{last.message}; {extra} more lines hold such characters"})
    return found


def lint_suppression(comment: str) -> tuple[str, str] | None:
    """(message, fix) when the comment is one a linter reads as an instruction, else None."""
    if _LINT_DIRECTIVE.search(comment) is None:
        return None
    shown = comment if len(comment) <= 80 else comment[:77] + "..."
    message = (
        f"carries the linter directive `{shown}`: llm-d-router's CI runs golangci-lint (govet, staticcheck, "
        "revive, gosec...) on the plugin, and this comment would switch linters off for the evolved code there, "
        "where no reviewer sees it"
    )
    fix = (
        "delete the comment (what a linter reports about the plugin belongs in front of its reviewers): a // "
        "comment must not start with `nolint` (after any spaces or slashes) or `word:` with no space "
        "(`lint:ignore`, `revive:disable`: Go's form for tool directives), nor hold `#nosec`; "
        "`// Note: ...` and other prose may stay"
    )
    return message, fix
