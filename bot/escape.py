"""One escaping function per output format, for every string the bot did not write itself.

Titles, paths, actors, reasons, claim statements, workload profiles and the
identifiers and strings of an evolved program come from people the bot does not
know. Each is interpolated into markdown (comments, reports, the PR), Go
(comments and string literals), YAML (values and comments), shell commands the
bot suggests, or commit messages. A value that carries the syntax of its target
changes what the file means: a newline ends a Go ``//`` comment and what follows
compiles; an HTML comment holding a marker imitates the bot's own (``bot.forge.markers``); a
``|`` splits a table row; ``<script>`` is HTML. So every interpolation goes
through the function for its format, and the templates register these as their
only filters (``md``, ``gocomment``, ``goquote``, ``yamlquote``, ``yamlcomment``, ``sh``).

Invisible characters that reorder or hide text (bidirectional overrides,
zero-width characters: "Trojan Source") are written as visible ``\\uXXXX`` in
code and comments, and as U+FFFD in markdown.
"""

from __future__ import annotations

import re
import shlex
import unicodedata

#: Bidirectional controls and zero-width characters: they change what a reader sees, not what the text says.
INVISIBLE = frozenset(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u200b\u200c\u200d\u2060\ufeff\u180e"
)
#: Characters that end a line somewhere (Python's str.splitlines, YAML, some editors).
LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")


def _hidden(ch: str) -> bool:
    """A character a reader cannot see or that controls the display: control, format, surrogate, invisible."""
    return ch in INVISIBLE or unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn")


# ------------------------------------------------------------------ markdown
_CODE_RUN = re.compile(r"`+")
_BLOCK_START = re.compile(r"^(\s*)([#>~+=*-])")
#: An ordered-list marker: digits, then "." or ")" and a space. Only the punctuation can be escaped ("1\. x");
#: a backslash before a digit is not an escape and would show ("\98.4%").
_ORDERED_START = re.compile(r"^(\s*\d{1,9})([.)])(?=\s|$)")


def md(value: object, block: bool = False, sep: str | None = None) -> str:
    """Inline markdown text, safe in a paragraph, a list item or a table cell, on GitHub and in a terminal.

    ``block=True`` keeps the text's lines (each escaped on its own) for a paragraph of its own, such as
    a model's narrative; never in a table cell. ``sep`` joins the lines with it instead of a space (``"; "``
    for a person's reason in a table cell, where a directive on its own line would otherwise run into the note).

    Line breaks become spaces (a value never starts a block), invisible and control characters become
    U+FFFD. Outside code spans ``<`` becomes ``&lt;`` (no HTML, no hidden comments that imitate the
    bot's markers, no autolinks) and ``\\ [ ] |`` and a leading block marker are backslash-escaped (no
    links, no images, no table cells, no headings), and a mention (``@user``, ``@org/team``) becomes a code
    span: GitHub notifies nobody for a title, but would for the comment or PR that reposts it. Code spans
    the text already has (`` `x < 0.5` ``, as findings write code) stay code spans: inside them only ``|``
    is escaped (GitHub tables split on it even there) and ``<!--`` is defused. An unmatched backtick is
    escaped.
    """
    text = "" if value is None else str(value)
    if sep is not None:  # a person's lines (a reason, then a directive) kept apart in a table cell
        lines = "".join("\n" if ch in LINE_BREAKS else ch for ch in text).split("\n")
        text = sep.join(part.strip() for part in lines if part.strip())
    if block:
        lines = "".join("\n" if ch in LINE_BREAKS else ch for ch in text).split("\n")
        return "\n".join(md(line) for line in lines)
    text = "".join(" " if ch in LINE_BREAKS or ch == "\t" else ("\ufffd" if _hidden(ch) else ch) for ch in text)
    out: list[str] = []
    i = 0
    while i < len(text):
        run = _CODE_RUN.search(text, i)
        if run is None:
            out.append(_md_plain(text[i:]))
            break
        out.append(_md_plain(text[i : run.start()]))
        close = _closing_run(text, run)
        if close is None:
            out.append("\\`" * len(run.group()))
            i = run.end()
            continue
        code = text[run.end() : close.start()].replace("|", "\\|").replace("<!--", "&lt;!--")
        out.append(run.group() + code + close.group())
        i = close.end()
    result = "".join(out)
    result = _ORDERED_START.sub(lambda m: m.group(1) + "\\" + m.group(2), result, count=1)
    return _BLOCK_START.sub(lambda m: m.group(1) + "\\" + m.group(2), result, count=1)


def _closing_run(text: str, opening: re.Match) -> re.Match | None:
    """The backtick run of the same length that closes a code span (CommonMark), if any."""
    for m in _CODE_RUN.finditer(text, opening.end()):
        if len(m.group()) == len(opening.group()):
            return m
    return None


#: A mention GitHub would notify: ``@user`` or ``@org/team`` not preceded by a word character (an e-mail is none).
_MENTION = re.compile(r"(?<![\w`])@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:/[A-Za-z0-9][\w.-]*)?")


def _md_plain(text: str) -> str:
    for ch, esc in (("\\", "\\\\"), ("[", "\\["), ("]", "\\]"), ("|", "\\|"), ("<", "&lt;")):
        text = text.replace(ch, esc)
    return _MENTION.sub(lambda m: f"`{m.group()}`", text)


# ------------------------------------------------------------------------ Go
def go_comment(value: object) -> str:
    """Text inside a Go ``//`` comment: one line, nothing hidden, no ``*/``."""
    text = "" if value is None else str(value)
    out = []
    for ch in text:
        if ch in LINE_BREAKS or ch == "\t":
            out.append(" ")
        elif _hidden(ch):
            out.append(_u(ch))
        else:
            out.append(ch)
    return "".join(out).replace("*/", "*\\/")


def go_string(value: object) -> str:
    """A Go interpreted string literal (quotes included), escaped as strconv.Quote would, invisibles visible."""
    text = "" if value is None else str(value)
    out = ['"']
    for ch in text:
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ord(ch) < 0x20 or ch == "\x7f":
            out.append(f"\\x{ord(ch):02x}")
        elif unicodedata.category(ch) == "Cs":
            out.append("\\ufffd")  # a lone surrogate is not UTF-8; Go refuses \\ud800
        elif _hidden(ch) or ch in LINE_BREAKS:
            out.append(_u(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


_GO_ESCAPES = {
    "\\": "\\\\",
    '"': '\\"',
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
}


def _u(ch: str) -> str:
    return f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}"


# ---------------------------------------------------------------------- YAML
def yaml_string(value: object) -> str:
    """A YAML double-quoted scalar (quotes included): any text reads back as exactly that string."""
    text = "" if value is None else str(value)
    out = ['"']
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif unicodedata.category(ch) == "Cs":
            out.append("\\ufffd")
        elif _hidden(ch) or ch in LINE_BREAKS:
            out.append(_u(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def yaml_comment(value: object) -> str:
    """Text after ``#`` in a YAML comment: one line, nothing hidden."""
    return line(value)


# --------------------------------------------------------------------- shell
def sh(value: object) -> str:
    """One shell word, for the commands the bot prints for people to copy (``--work`` paths with spaces)."""
    return shlex.quote("" if value is None else str(value))


# ------------------------------------------------- plain lines: terminals, titles, git commits
def line(value: object, sep: str | None = None) -> str:
    """One line of plain text (a terminal line, a PR title): line breaks become spaces, control and
    invisible characters (ANSI escapes, bidi overrides) are written as visible ``\\uXXXX``. ``sep`` joins
    the lines with it instead (``"; "`` for a person's reason: a note, then a directive, as ``md`` does)."""
    text = "" if value is None else str(value)
    if sep is not None:
        lines = "".join("\n" if ch in LINE_BREAKS else ch for ch in text).split("\n")
        text = sep.join(part.strip() for part in lines if part.strip())
    return "".join(" " if ch in LINE_BREAKS or ch == "\t" else (_u(ch) if _hidden(ch) else ch) for ch in text)


def commit_subject(value: object, limit: int = 120) -> str:
    """A commit subject: one line, nothing hidden, at most ``limit`` characters. A longer one is cut at its last
    clause ("; ") near the end or, failing that, after its last whole word that fits (a count loses its number
    too: "0 refuted...", not "9..."), and ends in "...": `git log --oneline` is the view a maintainer scans, and
    "9 inconclusiv" drops the word that says what the count is."""
    text = line(value).rstrip()
    if len(text) <= limit:
        return text
    head = text[: limit - 3]
    if head.rfind("; ") >= limit * 3 // 4:
        head = head[: head.rfind("; ")]
    elif text[limit - 3] != " " and " " in head:  # mid-word: back to the last whole word
        head = head[: head.rfind(" ")]
    words = head.rstrip(" ,;:").split(" ")
    if len(words) > 1 and words[-1].isdigit():
        words.pop()
    return " ".join(words).rstrip(" ,;:") + "..."


def commit_block(value: object, indent: str = "  ") -> str:
    """Someone's text quoted in a commit body: every line indented, so none can pass for a trailer."""
    text = "" if value is None else str(value)
    lines = "".join("\n" if ch in LINE_BREAKS else ch for ch in text).split("\n")
    return "\n".join(indent + line(part) for part in lines)


#: Line starts `git mailinfo` (the parser `git am` runs) takes as the end of the commit message and the start of
#: the patch: a ``---`` separator or ``--- <file>`` header, a ``diff -`` header, a CVS ``Index: `` line. It looks
#: at the first column only, so one space in front keeps such a line in the message.
_PATCH_BREAK = re.compile(r"(?:---|diff -|Index: )")
#: Where one space breaks every scissors mark (``>8``, ``8<``, ``>%``, ``%<``) of a line: "> 8", "8 <", "> %", "% <".
_MARK_JOINT = re.compile(r"(?<=>)(?=[8%])|(?<=[8%])(?=<)")
_GIT_SPACE = frozenset(b" \t\n\r")  # git's own isspace (sane_ctype), not C's: no \v, no \f


def _is_scissors_line(text: str) -> bool:
    """Whether `git mailinfo --scissors` takes the line for a "cut here" line: git's ``is_scissors_line``
    (mailinfo.c), on the line's bytes with its newline, as git reads it. A mark (``>8``, ``8<``, ``>%``, ``%<``)
    among dashes, at least 8 bytes from first to last non-blank, the dashes, marks and the blanks between them
    more than a third of that, and blanks less than half of the perforation. Leading blanks are skipped."""
    data = (text + "\n").encode("utf-8", "surrogatepass")
    scissors = gap = perforation = 0
    in_perforation = False
    first = last = -1
    i = 0
    while i < len(data):
        byte = data[i]
        if byte in _GIT_SPACE:
            if in_perforation:
                perforation += 1
                gap += 1
            i += 1
            continue
        last = i
        first = i if first < 0 else first
        if byte == ord("-"):
            in_perforation = True
            perforation += 1
        elif data[i : i + 2] in (b">8", b"8<", b">%", b"%<"):
            in_perforation = True
            perforation += 2
            scissors += 2
            i += 1
        else:
            in_perforation = False
        i += 1
    visible = last - first + 1 if first >= 0 else 0
    return bool(scissors) and 8 <= visible < perforation * 3 and gap * 2 < perforation


def _commit_line(text: str) -> str:
    if _is_scissors_line(text):
        text = _MARK_JOINT.sub(" ", text)
    return " " + text if _PATCH_BREAK.match(text) else text


def commit_body(value: object) -> str:
    """Commit message text that `git am` keeps whole: a line that would start the patch (``_PATCH_BREAK``, e.g. a
    title's " --- " that wrapping put first on a line) is indented by one space; the rest is as given. Without
    this, everything after that line (the caution that the patch is not ready, the evidence pointer) is dropped
    from the commit `git am` creates, though `git am` still applies the patch.

    A maintainer who runs `git am --scissors` (or sets ``mailinfo.scissors``) has git drop everything ABOVE a
    scissors line (``-- >8 --``, ``8<----``) instead, the top of the message included, and git finds one after
    any indent. On such a line (``_is_scissors_line``, git's rule) each mark gets a space inside ("> 8"), so git
    sees no scissors and a reader still sees the text; a ">8 ms" in a sentence is no scissors line and is left."""
    text = "" if value is None else str(value)
    return "\n".join(_commit_line(ln) for ln in text.split("\n"))
