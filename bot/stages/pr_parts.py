"""The pieces of the PR description a maintainer reads in five minutes, as plain data for pr_body.md.j2.

Pure: the request, the translation summary, hypotheses, verdicts and review rounds in; short lines
out. The body stays under 80 lines because each piece here is bounded (a title of 72 characters, a
finding in one line, a track in one line per outcome), and every link is absolute and pinned: a
relative link in a PR body does not resolve on GitHub, and an unpinned one moves with the branch.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.escape import line
from bot.model import Finding, Hypothesis, ReviewRound, Track, Verdict, VerdictStatus
from bot.model.better import DIFFERS_BETTER, better_than_margin
from bot.render.claims import indicated_cells, indicated_text, pct
from bot.stats.shedding import on_mix
from bot.stats.unjudged import unjudged_reason

TITLE_LIMIT = 72
#: Known issues listed one by one in the body; more are counted (each is a review comment on its line).
MAX_ISSUES = 10


def shorten(text: str, limit: int) -> str:
    """``text`` on one line, cut on a word boundary to at most ``limit`` characters (an ellipsis says so)."""
    text = " ".join(line(text).split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:(-") + "…"


def title(plugin_type: str, request_title: str) -> str:
    """``[promotion] <plugin_type>: <title>``, at most 72 characters (GitHub cuts longer titles in lists)."""
    head = f"[promotion] {line(plugin_type)}: "
    if len(head) >= TITLE_LIMIT - 8:  # a very long plugin name: the name alone, cut
        return shorten(head.rstrip(": "), TITLE_LIMIT)
    return head + shorten(request_title, TITLE_LIMIT - len(head))


@dataclass(frozen=True)
class Issue:
    """One open finding, for the Known issues list: severity, check, a short message, where."""

    severity: str
    check: str  # the finding's id (``finding_ids``): its check and a digest, as the gate's review showed it
    message: str  # someone else's text (a model's, the request's): the template escapes it
    where: str  # `file:line` (the bot's own)
    url: str  # absolute, pinned; "" when the finding names no file
    gate: int
    evolved_line: int | None = None  # the evolved program's line the plugin line maps back to
    count: int = 1  # how many findings it stands for (a bounded round's "and K more like this")


#: The closing clause a finding gets when a person re-calibrated its value at gate 1
#: (bot/golang/translate.py): it says what ships, so the short form keeps it.
_GATE1_VALUE = re.compile(r"re-calibrated at gate 1\b.*$")


def brief(text: str, limit: int = 150) -> str:
    """The first sentence (or clause) of a finding's message, cut to ``limit``; a closing "re-calibrated at
    gate 1: ..." clause is kept after it, since without it the line reads as if the BLIS value shipped."""
    text = " ".join(line(text).split())
    kept = _GATE1_VALUE.search(text)
    if kept and kept.start() > 0:
        tail = shorten(kept.group(0), limit // 2)
        head = brief(text[: kept.start()].rstrip(" ;,."), max(limit - len(tail) - 2, limit // 3))
        return f"{head}; {tail}"
    for stop in (". ", "; "):
        if stop in text[:limit]:
            text = text[: text.index(stop)]
            break
    return shorten(text, limit)


def open_findings(reviews: dict[int, list[ReviewRound]]) -> list[tuple[int, Finding, str]]:
    """The findings of each gate's last review round, each with its id in that round (``ReviewRound.ids``):
    what was open when the gate was decided."""
    out = []
    for gate in sorted(reviews):
        rounds = reviews[gate]
        if rounds:
            found = zip(rounds[-1].findings, rounds[-1].ids(), strict=True)
            out += [(gate, f, ref) for f, ref in sorted(found, key=lambda fr: fr[0].sort_key())]
    order = {"CRITICAL": 0, "IMPORTANT": 1, "SUGGESTION": 2}
    return sorted(out, key=lambda gf: (order.get(gf[1].severity.value, 3), gf[0]))


def issues_left(issues: list[Issue]) -> int:
    """How many open findings the body counts after listing ``MAX_ISSUES``: each as many as it stands for."""
    return sum(i.count for i in issues[MAX_ISSUES:])


def known_issues(
    reviews: dict[int, list[ReviewRound]],
    link: Callable[[str, int | None], str],
    read: Callable[[str], str | None] = lambda _path: None,
) -> list[Issue]:
    """Every open finding as one line; ``link(path, line)`` gives the pinned URL of a file (and line),
    ``read`` a branch file's text, for the line of a finding that names only its file (``anchor``)."""
    issues = []
    for gate, found, ref in open_findings(reviews):
        f = anchor(found, read)
        where = f"{f.file}:{f.line}" if f.file and f.line else (f.file or "")
        issues.append(
            Issue(
                severity=f.severity.value,
                check=ref,
                message=brief(f.message),
                where=where,
                url=link(f.file, f.line) if f.file else "",
                gate=gate,
                evolved_line=f.source_line,
                count=f.count,
            )
        )
    return issues


def _mean(v: Verdict) -> float | None:
    vals = [e.rel_change for e in v.effects if math.isfinite(e.rel_change)]
    return sum(vals) / len(vals) if vals else None


def _early(v: Verdict) -> str:
    """', early stop; all runs −0.4%' beside a mean holding an early-stop estimate: verdicts.md's caveat
    (``bot.stats.evidence``), over the same cells (a cell not stopped early counts its own change)."""
    cells = [e for e in v.effects if math.isfinite(e.rel_change)]
    if not any(e.all_runs_change is not None for e in cells):
        return ""
    from bot.stats.evidence import EARLY_STOP  # only here: evidence needs pandas, the PR draft's stages do not

    every = [e.rel_change if e.all_runs_change is None else e.all_runs_change for e in cells]
    return f", {EARLY_STOP}; all runs {pct(sum(every) / len(every))}"


def indicated_ids(hypotheses: Sequence[Hypothesis], verdicts: dict[str, Verdict], track: Track) -> list[str]:
    """The undecided hypotheses of ``track`` with a cell whose whole interval lies on the wrong side: the PR's
    "0 regressed" must not count them silently (``bot.render.claims.indicated``)."""
    return [h.id for h in hypotheses if h.track is track and indicated_cells(h, verdicts.get(h.id))]


def better_ids(hypotheses: Sequence[Hypothesis], verdicts: dict[str, Verdict], track: Track) -> list[str]:
    """The refuted equivalence guards of ``track`` whose cells lie beyond the margin on the better side: the PR's
    "regressed" count leaves them out (``bot.model.better``)."""
    return [h.id for h in hypotheses if h.track is track and better_than_margin(h, verdicts.get(h.id))]


def track_line(hypotheses: Sequence[Hypothesis], verdicts: dict[str, Verdict], track: Track) -> list[str]:
    """One line per outcome of a track: the hypotheses with it, each with its source and mean change."""
    by_status: dict[str, list[str]] = {}
    for h in hypotheses:
        if h.track is not track:
            continue
        v = verdicts.get(h.id)
        status = v.status.value if v is not None else "not judged"
        if better_than_margin(h, v):  # refuted by being better: no regression (bot.model.better)
            status = DIFFERS_BETTER
        mean = _mean(v) if v is not None else None
        metric = h.prediction.metric if h.prediction else ""
        number = f"{metric} {pct(mean)}".strip() if mean is not None else "not measured"
        if v is not None and mean is not None:
            number += _early(v) + (f"; {said}" if (said := indicated_text(h, v)) else "")
        if h.not_testable:
            number = "the plugin cannot exercise it"
        elif v is not None and on_mix(v):
            number = "judged on the priority mix" if v.admission else "planned on the priority mix, not judged yet"
        elif mean is None and (h.prediction is None or (v is not None and unjudged_reason(v))):
            # The verdict's own reason, as gate 3 and verdicts.md give it: "not runnable on this cluster" and "no
            # planned run varies it" call for different fixes (another cluster, another run).
            reason = unjudged_reason(v) if v is not None else None
            number = f"not judged: {reason}" if reason else "not judged"
        by_status.setdefault(status, []).append(f"{h.id} {h.source} ({number})")
    order = [s.value for s in VerdictStatus]
    order.insert(order.index(VerdictStatus.REFUTED.value) + 1, DIFFERS_BETTER)
    return [
        f"{status}: " + ", ".join(items)
        for status, items in sorted(by_status.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 99)
    ]


_TOKENS = re.compile(r"`([^`\n]{2,80})`|\b([ABC]\d{1,3})\b")


def anchor(f: Finding, read: Callable[[str], str | None]) -> Finding:
    """``f`` with the line it is about, when it names a file but no line (gate 2/3 checks name the document,
    not the line): the first line of that file holding a code span or hypothesis id the message quotes,
    else line 1. A directory becomes its README. ``read(path)`` gives a branch file's text (None: absent);
    a finding whose file the branch does not hold is returned as it is, never pointed somewhere wrong."""
    if not f.file or f.line:
        return f
    path, text = f.file, read(f.file)
    if text is None:
        path = f"{f.file.rstrip('/')}/README.md"
        text = read(path)
    if text is None:
        return f
    lines = text.splitlines()
    number = 1
    for m in _TOKENS.finditer(f.message):
        token = m.group(1) or m.group(2)
        hit = next(
            (i for i, ln in enumerate(lines, 1) if re.search(rf"(?<![\w-]){re.escape(token)}(?![\w-])", ln)), None
        )
        if hit is not None:
            number = hit
            break
    return f.model_copy(update={"file": path, "line": number})


def file_reader(read: Callable[[str], str | None], listing: Callable[[str], list[str]]) -> Callable[[str], str | None]:
    """``read`` for files only: git shows a directory as a listing, which is no file to point a line into."""
    return lambda path: read(path) if path in listing(path) else None
