"""Review findings: one finding, its id across rounds and runs, a review round, and the bound on how many a round
keeps.

Apart from what the stages judge (``bot.model.evidence``: hypotheses, effects, verdicts, fidelity) because the
engine, the review, the GitHub home and the state read them without any of that: a round's findings decide whether
a gate's review converged (``bot.pipeline``) and are kept in the saved state.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from os.path import commonprefix

from pydantic import Field

from bot.model.base import Severity, Strict

#: Hex digits of ``Finding.digest()`` a finding's id carries after its check (a collision gets more).
ID_DIGITS = 6


#: The most of a checklist finding's message it is matched by; a longer one by its head and a digest of the whole.
MATCH_CHARS = 240


def match_text(message: str) -> str:
    """What a checklist finding's message is matched by across rounds: itself, or when longer than
    ``MATCH_CHARS`` its head and a digest of the whole, in at most ``MATCH_CHARS`` characters.

    The promotion state's status comment may keep only this form when space runs short (``bot.github.state``);
    as ``match_text`` of it is itself, a finding read back from the state is still the same finding, and two
    long messages differing anywhere still differ."""
    if len(message) <= MATCH_CHARS:
        return message
    note = f" [cut; sha256 {hashlib.sha256(message.encode('utf-8')).hexdigest()[:16]}]"
    return message[: MATCH_CHARS - len(note)].rstrip() + note


#: A generated file or directory (a branch path; a directory's ends in ``/``) -> what a finding's id calls it
#: (``id_file``): ``bot.golang.gonames.id_places`` makes them for a plugin package and its config.
Places = Mapping[str, str]


def id_file(file: str, places: Places | None) -> str:
    """``file`` as a finding's id digests it: a generated file by its name in ``places``, a file inside a
    generated directory by the directory's name there and the rest of its path (the directory itself, as gate 1
    names an empty package, by its name), any other file as it is (a model's finding on the runner or the docs
    keeps its path)."""
    if not places or not file:
        return file
    if file in places:
        return places[file]
    if file + "/" in places:
        return places[file + "/"].rstrip("/")
    within = [d for d in places if d.endswith("/") and file.startswith(d)]
    if not within:
        return file
    directory = max(within, key=len)
    return places[directory] + file[len(directory) :]


class Finding(Strict):
    """One review finding, anchored to a file and line on the promotion branch when it has one."""

    severity: Severity
    check: str = Field(description="checklist item id, e.g. G1.signals-mapped or hazard.inv9-output-tokens")
    message: str
    file: str | None = None
    line: int | None = Field(default=None, ge=1)
    fix: str | None = Field(default=None, description="suggested fix")
    source_line: int | None = Field(default=None, ge=1, description="line in the evolved program it traces back to")
    param: str | None = Field(
        default=None, description="the plugin parameter it concerns: several can share one evolved line"
    )
    by: str | None = Field(default=None, description="who raised it: None = the deterministic checklist, else a model")
    recurring: bool = Field(default=False, description="raised again after the author's fix round")
    count: int = Field(
        default=1, ge=1, description="how many findings it stands for: K for ``bounded``'s 'and K more like this'"
    )

    def key(self) -> tuple:
        """What makes two rounds' findings 'the same finding'. A model words a repeat differently and lines
        move when code changes, so a model's finding is the same when check and file are; the checklist's
        findings are deterministic and must match exactly (a long message by ``match_text``)."""
        if self.by:
            return (self.check, self.file or "")
        return (self.check, self.file or "", self.line, self.source_line, match_text(self.message))

    def for_author(self) -> bool:
        """Blocking, and one an author's rerun could resolve (not one only a person settles, ``PEOPLE_SETTLE``)."""
        return self.severity.blocking and self.check not in PEOPLE_SETTLE

    def sort_key(self) -> tuple:
        order = {Severity.CRITICAL: 0, Severity.IMPORTANT: 1, Severity.SUGGESTION: 2}
        return (order[self.severity], self.check, self.file or "", self.line or 0, self.message)

    def identity(self, places: Places | None = None) -> tuple:
        """What a finding's id digests: ``key()`` without the line in the generated file, plus the parameter,
        and a generated file by its place in the generated plugin (``id_file``), not by the directory it is in.

        The plugin and its config are generated, so a change request that edits one line (``param NAME: VALUE``)
        moves every finding anchored below it, while the finding (its check, file, evolved line, parameter and
        text) is unchanged: an id a person quoted must still name it in the next round. Findings that differ
        only in their generated line share an identity; ``finding_ids`` numbers them. The generated package's
        directory, main file and config are named for the plugin type, which `promote translate` derives from
        the file while a promotion names its own: an id quoted from a rehearsal must name the same finding in
        the promotion, so ``places`` (``ReviewRound.places``) names them for what they are. Without ``places``
        (a round saved before rounds kept them) the file is digested as it is, so its ids read as they did."""
        file = id_file(self.file or "", places)
        if self.by:
            return (self.check, file)
        return (self.check, file, self.source_line, self.param, match_text(self.message))

    def digest(self, places: Places | None = None) -> str:
        """The sha256 of ``identity()`` in hex: the same finding (across rounds, runs and a read back from the
        state, wherever its generated line moved, whatever its plugin type) has the same digest, so its id
        (``finding_ids``) is what a person can quote in any round."""
        return hashlib.sha256(json.dumps(list(self.identity(places)), ensure_ascii=False).encode("utf-8")).hexdigest()

    def short_id(self, digits: int = ID_DIGITS, places: Places | None = None) -> str:
        """``hazard.sim-scale-threshold#3fa2c1``: the check, which people know, and the head of ``digest()``,
        which tells apart the findings one check raises; ``finding_ids`` lengthens it where two collide."""
        return _short_id(self.check, self.digest(places), digits)


def _short_id(check: str, digest: str, digits: int) -> str:
    return f"{check}#{digest[:digits]}"


def finding_ids(findings: Sequence[Finding], places: Places | None = None) -> list[str]:
    """Each finding's id, in order: ``CHECK#HEX`` (``Finding.short_id``), stable across rounds and runs because it
    is derived from ``Finding.identity()``: what the finding is, not the generated line it is anchored to, nor the
    plugin type its generated files are named for (``places``: where the generated ones are).

    Distinct within the list: where two findings of one check share the first ``ID_DIGITS`` hex digits of their
    digests, those two (only) get as many digits as tell them apart; findings with one identity (a model's two
    findings of one check in one file, the checklist's two that differ only in their generated line) get ``-2``,
    ``-3``, ... after the first, in list order. Pure and deterministic, so
    every place that lists a review round's findings shows the ids the review report shows."""
    digests = [f.digest(places) for f in findings]
    by_check: dict[str, set[str]] = {}
    for f, d in zip(findings, digests, strict=True):
        by_check.setdefault(f.check, set()).add(d)
    # The longest prefix a digest shares with any other of its check is shared with a neighbour in sorted order:
    # comparing with every other was quadratic, hours for a flood of 60,000 compiler errors.
    shared: dict[tuple[str, str], int] = {}
    for check, group in by_check.items():
        ordered = sorted(group)
        for i, d in enumerate(ordered):
            near = ordered[max(i - 1, 0) : i] + ordered[i + 1 : i + 2]
            shared[check, d] = max((len(commonprefix([d, o])) for o in near), default=0)  # noqa: RUF071 - hex, by char
    ids, seen = [], {}
    for f, d in zip(findings, digests, strict=True):
        base = _short_id(f.check, d, max(ID_DIGITS, shared[f.check, d] + 1))  # the digest once, not again
        seen[base] = seen.get(base, 0) + 1
        ids.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    return ids


#: Another open promotion of the same plugin (gate 2, on GitHub: ``bot.events.same_plugin``).
SAME_PLUGIN_CHECK = "G2.same-plugin"
#: Checks whose blocking findings no author rerun can change (which of two promotions goes on is a person's
#: call): they send nothing back to the author (``ReviewRound.for_author``).
PEOPLE_SETTLE = frozenset({SAME_PLUGIN_CHECK})


class ReviewRound(Strict):
    gate: int = Field(ge=1, le=3)
    round: int = Field(ge=1)
    reviewer: str = "checklist"
    findings: list[Finding] = Field(default_factory=list)
    headline: str = Field(default="", description="what the gate decides on, in one line (bot.review.brief)")
    headline_lines: list[str] = Field(
        default_factory=list,
        description="the headline's figures broken down, one labelled figure a line, shown under it (gate 2: the "
        "GPU cost, bot.review.brief.cost_breakdown)",
    )
    read_first: dict[str, str] = Field(default_factory=dict, description="what to read first -> branch path")
    directive_examples: dict[str, str] | None = Field(
        default=None,
        description="the directives this gate offers the promotion -> an example that applies to it "
        "(bot.directives.promotion_examples); None: the registry's own",
    )
    places: dict[str, str] = Field(
        default_factory=dict,
        description="the generated plugin's files and directory -> what its findings' ids call them "
        "(``Finding.identity``): ids do not depend on the plugin type; empty: saved before rounds kept them",
    )

    @property
    def blocking(self) -> list[Finding]:
        return [f for f in self.findings if f.severity.blocking]

    @property
    def for_author(self) -> list[Finding]:
        """The blocking findings an author's rerun could resolve (not those only a person settles)."""
        return [f for f in self.findings if f.for_author()]

    def tally(self) -> str:
        """``0 CRITICAL, 3 IMPORTANT, 3 SUGGESTION``: every severity, zeros included."""
        return tally(self.findings)

    def ids(self) -> list[str]:
        """Each finding's id, in order (``finding_ids``): what the report, the PR review and commands quote."""
        return finding_ids(self.findings, self.places)


def counted(findings: list[Finding]) -> int:
    """How many findings these are: a bounded group's count finding stands for the K it counts (``bounded``)."""
    return sum(f.count for f in findings)


def tally(findings: list[Finding]) -> str:
    """``0 CRITICAL, 3 IMPORTANT, 3 SUGGESTION``: every severity, zeros included, each finding counted as the
    number it stands for (``Finding.count``)."""
    return ", ".join(
        f"{counted([f for f in findings if f.severity is s])} {s.value}"
        for s in (Severity.CRITICAL, Severity.IMPORTANT, Severity.SUGGESTION)
    )


#: The most findings of one check at one severity a review round keeps; the rest are counted in one finding.
KEEP_PER_CHECK = 25


def bounded(findings: list[Finding], *, where: str, keep: int = KEEP_PER_CHECK) -> list[Finding]:
    """``findings`` with at most ``keep`` per check and severity (the first by ``Finding.sort_key``), and for
    each group cut, one finding of its severity and check: "and K more like this; all of them are in ``where``",
    whose ``count`` is K, so every tally and an approval's record count the findings raised, not those kept.

    A checker or a toolchain step can report thousands of distinct findings (an evolved program whose plugin
    makes `go build` fail everywhere); a review round is kept in the promotion state (on GitHub one
    65,536-character comment), shown in the review report and the checklist, and sent to the author, so it
    takes a bounded list, and the full one stays where it was made (``where``: the checks files on the branch,
    ``promote translate --out DIR``). Deterministic, and the count finding's message carries a digest of the
    findings it stands for, so two rounds have the same keys (``pipeline._stalled``) exactly when their full
    lists do. Already bounded findings come through unchanged."""
    groups: dict[tuple, list[Finding]] = {}
    for f in findings:
        groups.setdefault((f.severity, f.check, f.by), []).append(f)
    if all(len(g) <= keep + 1 for g in groups.values()):
        return list(findings)
    out: list[Finding] = []
    for (severity, check, by), group in groups.items():
        if len(group) <= keep + 1:
            out += group
            continue
        group = sorted(group, key=Finding.sort_key)
        rest = group[keep:]
        digest = hashlib.sha256("\n".join(repr(f.key()) for f in rest).encode("utf-8")).hexdigest()[:12]
        out += group[:keep]
        out.append(
            Finding(
                severity=severity,
                check=check,
                message=f"and {len(rest):,} more like this [{digest}]; all of them are in {where}",
                fix="fix the ones above first: they often cause the rest",
                by=by,
                count=counted(rest),  # what the tallies and an approval's record count: not one
            )
        )
    return out
