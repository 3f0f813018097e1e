"""Before or after BLIS 9a603bca: the program's era read from its own names *and* from its metadata.

``counter_era`` raises ``hazard.counter-meaning-changed`` when the evolved file names ``PendingRequests``: the
counter 9a603bca (2026-02-27) renamed ``InFlightRequests`` and redefined (routed and not yet queued, then routed
until completed), so ``EffectiveLoad()``, which adds it, changed scale too. A program that reads the load only
through ``EffectiveLoad()`` names neither field (a function-form copy declares no ``RoutingSnapshot``), so its
file cannot say which count its numbers were tuned on. Its metadata can: OpenEvolve's ``best_program_info.json``
records when the program was evolved (``timestamp``, Unix seconds), and ``origin.blis_version`` says, in free
text, which copy it ran on. ``read_era`` weighs the three, offline:

- the file names ``PendingRequests``: before; it names ``InFlightRequests`` (and not the old name): after;
- a timestamp before 2026-02-27 (UTC): before, the field did not exist yet. A later one says nothing: a run in
  March may have used a February checkout;
- ``blis_version`` saying before/after 9a603bca (or naming that commit alone: a copy at it has the new count), or
  naming a date or month (``2026-03-18``, ``2026-03``, ``March 2026``, ``18 March 2026``) wholly before or after
  2026-02-27: that. The day of the change, February 2026 as a month, dates that disagree, and a commit hash alone
  say nothing: commits cannot be ordered offline and no commit dates are invented.

The file's names are the strongest evidence (they are what the copy compiled against), so when they speak the
era is theirs; otherwise the metadata's, or "unknown" when it says nothing or contradicts itself.

``check`` turns the reading into findings:

- evidence that contradicts itself (the file names ``InFlightRequests`` but the timestamp predates the field;
  ``blis_version`` says after but the file names ``PendingRequests``; the timestamp says before and
  ``blis_version`` after): one ``source.era-conflict`` finding naming both pieces and the fix. **IMPORTANT**:
  the PR cites ``blis_version`` and the metadata file as the program's provenance, so one of them is wrong on a
  record reviewers will trust, and when the file is silent the conflict decides whether the load thresholds were
  tuned on the old count (``hazard.counter-meaning-changed``) or not; nothing in the translation can settle it
  (a timestamp cannot be corrected, only explained), so a person must look before the gate opens, as for any
  finding whose answer is outside the program. It blocks no less when the file settles the era: the program is
  then translated right, but the provenance the PR states is not;
- an era "before" from the metadata alone: ``Analysis.dated_before`` holds the evidence, and ``counter_era``
  treats the copy as pre-rename (its finding, parameter comments and harness note), naming that evidence, for
  the numbers the program compares with or combines with ``EffectiveLoad()``.

Pure: the caller reads the metadata (``PromotionRequest.evolved_on``) and passes it in.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime

from bot.golang.analysis_types import Analysis
from bot.model import EvolvedOn, Finding, Severity

CHECK_CONFLICT = "source.era-conflict"
COMMIT = "9a603bca"
CHANGE_DAY = date(2026, 2, 27)
OLD, NEW = "PendingRequests", "InFlightRequests"

BEFORE, AFTER, UNKNOWN = "before", "after", "unknown"


@dataclass(frozen=True)
class Evidence:
    """One piece of evidence for an era: which source says it (``file``, ``timestamp``, ``blis_version``),
    the era it says, and the words a finding quotes."""

    source: str
    era: str
    words: str
    line: int | None = None  # the file's line that names the field (source evidence only)


@dataclass(frozen=True)
class EraReading:
    """The era (before, after, unknown), every piece of evidence that said one, and the first contradiction."""

    era: str
    evidence: tuple[Evidence, ...] = ()
    conflict: tuple[Evidence, Evidence] | None = None  # (the one saying after, the one saying before)

    def said(self, era: str) -> list[Evidence]:
        return [e for e in self.evidence if e.era == era]


_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_MONTHS = {
    m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)
}
_ISO_DAY = re.compile(r"\b(20\d\d)-(\d\d)-(\d\d)\b")
_ISO_MONTH = re.compile(r"\b(20\d\d)-(\d\d)\b(?!-\d)")
_NAMED = re.compile(
    r"\b(?:(\d{1,2})(?:st|nd|rd|th)?\s+)?(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+"
    r"(?:(\d{1,2})(?:st|nd|rd|th)?,?\s+)?(20\d\d)\b",
    re.I,
)
_HASH = rf"{COMMIT}[0-9a-f]*"
_BEFORE_COMMIT = re.compile(rf"\b(?:before|prior\s+to|pre-?|older\s+than)\s*(?:BLIS\s+|commit\s+)?{_HASH}", re.I)
_AFTER_COMMIT = re.compile(
    rf"\b(?:after|since|post-?|newer\s+than|from|including|includes|at)\s*(?:BLIS\s+|commit\s+)?{_HASH}", re.I
)
_ANY_COMMIT = re.compile(rf"\b{_HASH}\b(?![\^~])", re.I)


def read_era(
    go_text: str,
    timestamp: float | None = None,
    blis_version: str | None = None,
    metadata_file: str | None = None,
    to_line: Callable[[int], int] = lambda n: n,
) -> EraReading:
    """The era of a copy from its Go text, its metadata's timestamp and ``origin.blis_version`` (``to_line`` maps
    a Go line to the original file's)."""
    named = _from_file(go_text, to_line)
    pieces = [e for e in (named, _from_timestamp(timestamp, metadata_file), _from_version(blis_version)) if e]
    afters, befores = [e for e in pieces if e.era == AFTER], [e for e in pieces if e.era == BEFORE]
    conflict = (afters[0], befores[0]) if afters and befores else None
    if named is not None:
        era = named.era
    elif conflict is not None or not pieces:
        era = UNKNOWN
    else:
        era = pieces[0].era
    return EraReading(era, tuple(pieces), conflict)


def _from_file(go_text: str, to_line: Callable[[int], int]) -> Evidence | None:
    code = _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), go_text)  # keeps lines where they are
    for name, era in ((OLD, BEFORE), (NEW, AFTER)):
        m = re.search(rf"\b{name}\b", code)
        if m:
            line = to_line(code.count("\n", 0, m.start()) + 1)
            return Evidence("file", era, f"the program names `{name}` (line {line})", line)
    return None


def _from_timestamp(timestamp: float | None, metadata_file: str | None) -> Evidence | None:
    if timestamp is None:
        return None
    try:
        day = datetime.fromtimestamp(timestamp, UTC).date()
    except (OverflowError, OSError, ValueError):
        return None
    if day >= CHANGE_DAY:  # evolved after the change, maybe on an older checkout: says nothing
        return None
    return Evidence(
        "timestamp",
        BEFORE,
        f"{metadata_file or 'best_program_info.json'}'s timestamp {timestamp:.0f} ({day.isoformat()})",
    )


def _from_version(text: str | None) -> Evidence | None:
    if not text or not text.strip():
        return None
    quoted = f"origin.blis_version {text.strip()!r}"
    if _BEFORE_COMMIT.search(text):
        return Evidence("blis_version", BEFORE, quoted)
    if _AFTER_COMMIT.search(text) or _ANY_COMMIT.search(text):
        return Evidence("blis_version", AFTER, quoted)
    eras = {_date_era(y, m, d) for y, m, d in _dates(text)}
    if len(eras) != 1 or UNKNOWN in eras:  # no date, the change's own day or month, or dates that disagree
        return None
    return Evidence("blis_version", eras.pop(), quoted)


def _dates(text: str) -> list[tuple[int, int, int | None]]:
    """(year, month, day or None) of each date the text names, ISO or with a month's name."""
    out: list[tuple[int, int, int | None]] = [(int(y), int(m), int(d)) for y, m, d in _ISO_DAY.findall(text)]
    out += [(int(y), int(m), None) for y, m in _ISO_MONTH.findall(text)]
    for m in _NAMED.finditer(text):
        day = m.group(1) or m.group(3)
        out.append((int(m.group(4)), _MONTHS[m.group(2).lower()], int(day) if day else None))
    return [(y, m, d) for y, m, d in out if 1 <= m <= 12 and (d is None or 1 <= d <= 31)]


def _date_era(year: int, month: int, day: int | None) -> str:
    """A day before or after the change's day; a month wholly before or after it; else unknown."""
    if day is not None:
        try:
            when = date(year, month, day)
        except ValueError:
            return UNKNOWN
        return BEFORE if when < CHANGE_DAY else AFTER if when > CHANGE_DAY else UNKNOWN
    key, change = (year, month), (CHANGE_DAY.year, CHANGE_DAY.month)
    return BEFORE if key < change else AFTER if key > change else UNKNOWN


def reading_of(an: Analysis, evolved_on: EvolvedOn | None) -> EraReading:
    """The reading for an analysed program (original-file lines)."""
    src = an.src
    if src is None:
        return EraReading(UNKNOWN)
    on = evolved_on or EvolvedOn()
    return read_era(src.go_text, on.timestamp, on.blis_version, on.metadata_file, src.to_original_line)


def check(an: Analysis, evolved_on: EvolvedOn | None) -> None:
    """Record the metadata's "before" for ``counter_era`` (``Analysis.dated_before``), and append the finding
    for evidence that contradicts itself. Run before ``counter_era.check``."""
    reading = reading_of(an, evolved_on)
    if reading.era == BEFORE and not any(e.source == "file" for e in reading.evidence):
        an.dated_before = " and ".join(e.words for e in reading.said(BEFORE))
    if reading.conflict is not None:
        an.findings.append(_conflict_finding(*reading.conflict))


def _conflict_finding(after: Evidence, before: Evidence) -> Finding:
    sources = {after.source, before.source}
    if "blis_version" in sources:
        other = before if after.source == "blis_version" else after
        fix = (
            "correct `origin.blis_version` in the request to the BLIS copy the program was evolved on "
            f"({other.words} puts it {other.era} {COMMIT})"
        )
        if "file" not in sources:
            fix += (
                "; if that copy predates the change, the numbers compared with or combined with EffectiveLoad() "
                "were tuned on the old count and need re-calibrating (hazard.counter-meaning-changed)"
            )
    else:
        fix = (
            "check which BLIS copy the program was evolved on: the metadata file may be another run's (preflight "
            "compares its id, iteration and fitness with `origin`, not its date), or the copy had the field before "
            f"{COMMIT} was merged; then say which in `origin.blis_version`"
        )
    rests = (
        "the file settles which counter the copy compiled against, so the provenance the PR cites is what is wrong"
        if "file" in sources
        else "the file names neither counter, so whether the numbers compared with or combined with EffectiveLoad() "
        "were tuned on the old count (hazard.counter-meaning-changed) rests on which is right"
    )
    return Finding(
        severity=Severity.IMPORTANT,
        check=CHECK_CONFLICT,
        source_line=next((e.line for e in (after, before) if e.line is not None), None),
        message=(
            f"the evidence of which BLIS copy the program was evolved on contradicts itself: {after.words} says "
            f"after {COMMIT} (PendingRequests renamed InFlightRequests and redefined, "
            f"{CHANGE_DAY.isoformat()}), but {before.words} says before it. The PR cites this provenance; {rests}"
        ),
        fix=fix,
    )
