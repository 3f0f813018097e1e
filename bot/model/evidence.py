"""What the stages find and judge: review findings, hypotheses, effects, verdicts, fidelity and the translation summary."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from os.path import commonprefix
from typing import Literal

from pydantic import Field, field_validator

from bot.model.base import (
    VVUQ,
    DeadLogic,
    Direction,
    Family,
    HypothesisType,
    PolicyKind,
    Rate,
    Severity,
    Strict,
    Track,
    VerdictStatus,
    percent,
)

# --------------------------------------------------------------------------
# Review findings
# --------------------------------------------------------------------------


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

    def identity(self) -> tuple:
        """What a finding's id digests: ``key()`` without the line in the generated file, plus the parameter.

        The plugin and its config are generated, so a change request that edits one line (``param NAME: VALUE``)
        moves every finding anchored below it, while the finding (its check, file, evolved line, parameter and
        text) is unchanged: an id a person quoted must still name it in the next round. Findings that differ
        only in their generated line share an identity; ``finding_ids`` numbers them."""
        if self.by:
            return (self.check, self.file or "")
        return (self.check, self.file or "", self.source_line, self.param, match_text(self.message))

    def digest(self) -> str:
        """The sha256 of ``identity()`` in hex: the same finding (across rounds, runs and a read back from the
        state, wherever its generated line moved) has the same digest, so its id (``finding_ids``) is what a
        person can quote in any round."""
        return hashlib.sha256(json.dumps(list(self.identity()), ensure_ascii=False).encode("utf-8")).hexdigest()

    def short_id(self, digits: int = ID_DIGITS) -> str:
        """``hazard.sim-scale-threshold#3fa2c1``: the check, which people know, and the head of ``digest()``,
        which tells apart the findings one check raises; ``finding_ids`` lengthens it where two collide."""
        return _short_id(self.check, self.digest(), digits)


def _short_id(check: str, digest: str, digits: int) -> str:
    return f"{check}#{digest[:digits]}"


def finding_ids(findings: Sequence[Finding]) -> list[str]:
    """Each finding's id, in order: ``CHECK#HEX`` (``Finding.short_id``), stable across rounds and runs because it
    is derived from ``Finding.identity()``: what the finding is, not the generated line it is anchored to.

    Distinct within the list: where two findings of one check share the first ``ID_DIGITS`` hex digits of their
    digests, those two (only) get as many digits as tell them apart; findings with one identity (a model's two
    findings of one check in one file, the checklist's two that differ only in their generated line) get ``-2``,
    ``-3``, ... after the first, in list order. Pure and deterministic, so
    every place that lists a review round's findings shows the ids the review report shows."""
    digests = [f.digest() for f in findings]
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
    read_first: dict[str, str] = Field(default_factory=dict, description="what to read first -> branch path")
    directive_examples: dict[str, str] | None = Field(
        default=None,
        description="the directives this gate offers the promotion -> an example that applies to it "
        "(bot.directives.promotion_examples); None: the registry's own",
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
        return finding_ids(self.findings)


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


# --------------------------------------------------------------------------
# Hypotheses and verdicts
# --------------------------------------------------------------------------


class Prediction(Strict):
    """What one hypothesis predicts, in llm-d-benchmark terms."""

    metric: str = Field(description="short metric name, see bot.model.metrics (e.g. ttft_mean, e2e_p95)")
    direction: Direction
    margin: float = Field(default=0.05, gt=0, lt=1, description="equivalence / regression margin (relative)")
    blis_magnitude: float | None = Field(
        default=None, allow_inf_nan=False, description="relative change BLIS predicted, for attenuation checks"
    )


#: How stage 3 words (``Hypothesis.not_in_plan``) the one hypothesis an admitter's priority mix decides, its
#: shedding order (bot.hypotheses.track_b; bot.stats.shedding judges it): ``Hypothesis.on_priority_mix`` reads it.
ON_PRIORITY_MIX = "is judged on the plan's priority mix by per-class admit rate"
#: What the plan README, the hypotheses index, the hypothesis's Prediction and gate 2 call such a hypothesis.
DECIDED_ON_MIX = "decided on the priority mix (per-class admit rate)"


class Hypothesis(Strict):
    id: str = Field(pattern=r"^[ABC][0-9]+$")
    track: Track
    title: str
    statement: str
    family: Family
    vvuq: VVUQ
    type: HypothesisType
    diagnostic: str = Field(description='"If this fails, it would indicate ..."')
    workloads: list[str] = Field(min_length=1)
    rates: list[Rate] = Field(default_factory=list, description="empty = every rate of each workload")
    prediction: Prediction | None = Field(default=None, description="None for hypotheses not decided by benchmarks")
    source: str = Field(description="claim id, Map B signal, Map C gap id or baseline scenario it comes from")
    mechanism: str | None = None
    blis_statement: str | None = None
    not_in_plan: str | None = Field(
        default=None,
        description="why the benchmark plan cannot decide it (e.g. a run this cluster cannot do); None otherwise",
    )
    signals: list[str] = Field(
        default_factory=list,
        description=(
            "BLIS signals the hypothesis's mechanism reads (named by the claim's mechanism, the OpenEvolve "
            "MECHANISM comment, or the Map B signal it is about); what links it to the translation"
        ),
    )
    not_testable: str | None = Field(
        default=None,
        description=(
            "why the plugin as translated cannot test it: a signal its mechanism reads is constant in the plugin "
            "or removed by the translation, or it rests on logic gate 1 found dead (TranslationSummary.dead_logic); "
            "names the signal or the logic, and the evolved line; None otherwise"
        ),
    )

    covers: list[str] = Field(
        default_factory=list,
        description=(
            "what was folded into this hypothesis so each distinct claim is tested once: a duplicate OpenEvolve "
            "claim, an implied hypothesis, Map B freshness gaps its treatment varies; each says what and why"
        ),
    )

    @property
    def benchmarked(self) -> bool:
        """Decided by benchmark reports: it predicts a metric and the translated plugin can exercise its mechanism."""
        return self.prediction is not None and self.not_testable is None

    @property
    def on_priority_mix(self) -> bool:
        """Decided on the plan's priority mix (an admitter's shedding order), not on cells: no benchmark
        prediction, yet a run of the plan decides it, so no text may call it "not benchmarked"."""
        return not self.benchmarked and (self.not_in_plan or "").startswith(f"it {ON_PRIORITY_MIX}")

    @field_validator("diagnostic")
    @classmethod
    def _diagnostic_clause(cls, v: str) -> str:
        if "if this fails" not in v.lower():
            raise ValueError('diagnostic must contain "If this fails, it would indicate ..."')
        return v


#: ``Effect.held_by``: what overrode a cell's test (its p-values alone would have decided it otherwise).
HELD_NOISE_FLOOR = "noise-floor"
HELD_SHEDDING = "shedding-guard"


class Effect(Strict):
    """The measured effect of the evolved treatment on one (workload, rate, metric)."""

    workload: str
    rate: float
    metric: str
    baseline_mean: float
    evolved_mean: float
    rel_change: float
    ci_low: float
    ci_high: float
    p_value: float | None = Field(
        default=None, description="one-sided p of the test behind the cell's status (refutation test if refuted)"
    )
    p_adjusted: float | None = Field(
        default=None,
        description=(
            "p_value after promotion-wide multiplicity control, on the alpha scale: <= alpha exactly when the "
            "test behind the cell's status decides it, unless held_by names what overrode the test"
        ),
    )
    held_by: str = Field(
        default="",
        description=(
            "what kept this cell from deciding whatever its p-values: 'noise-floor' (the change is within T_eff; "
            "p_adjusted is then the weighted Holm of the tests' own p-values, not 1 as a stand-in), "
            "'shedding-guard' (the evolved arm lost more requests, so a latency gain is not confirmed); "
            "'' when the test alone decided"
        ),
    )
    test: str = ""
    cv_baseline: float
    t_eff: float
    n_baseline: int = Field(description="baseline repetitions used (outlier runs excluded)")
    n_evolved: int = Field(description="evolved repetitions used (outlier runs excluded)")
    excluded_runs: list[str] = Field(
        default_factory=list, description="outlier runs flagged by the robust rule and left out, with why"
    )
    runs_judged: int | None = Field(
        default=None,
        description=(
            "group-sequential cell: the look that decided it judged the first runs_judged runs of each arm (outliers "
            "among them excluded, see n_baseline / n_evolved); None: every run (a fixed design)"
        ),
    )
    all_runs_change: float | None = Field(
        default=None,
        description=(
            "group-sequential cell decided before its last look: the change over every run the looks reached "
            "(rel_change is the deciding look's, which leans away from zero); None: decided at its last look, or a "
            "fixed design (optional, so verdicts.json written before it still loads)"
        ),
    )
    status: VerdictStatus | None = Field(default=None, description="this cell's own verdict")
    reason: str = Field(default="", description="why this cell is confirmed, refuted or inconclusive")
    lost_baseline: float | None = Field(
        default=None,
        description="share of the baseline arm's requests failed or incomplete in this cell; None: not counted",
    )
    lost_evolved: float | None = Field(
        default=None,
        description=(
            "share of the evolved arm's requests failed or incomplete in this cell (an admission policy's shed "
            "rate); None: not counted"
        ),
    )


#: How a request the EPP refused reaches the client on llm-d-router v0.10.0. Its built-in admission (the legacy
#: saturation shedding, flow control's capacity rejection and TTL eviction) rejects with
#: ``errcommon.ResourceExhausted``, which ``pkg/common/error.BuildErrResponse`` maps to 429 Too Many Requests.
#: An Admitter plugin's rejection does not keep its code: ``requestcontrol/director.go`` wraps it as
#: ``errcommon.Internal`` ("request cannot be admitted: ..."), so the client gets 500 Internal Server Error,
#: whatever code the plugin returned (probabilistic-admitter's and the evolved admitter's alike). 503 is
#: ServiceUnavailable: no endpoints at all, an outage rather than shedding, so it is an error but not shed. Here
#: rather than in ``bot.bench.priority_mix`` (which counts them) because ``bot.stats.admission`` words its
#: verdicts with them, and the statistics sit below the benchmark plan.
SHED_STATUS = 429
ADMITTER_REJECT_STATUS = 500
#: How the reason for leaving out a run that does not record its condition starts (verdicts and gate 3 key on it;
#: ``bot.bench.conditions`` writes it, ``bot.stats.unjudged`` reads it: here so neither imports the other).
CONDITION_NOT_RECORDED = "condition not recorded"


class AdmissionRow(Strict):
    """One traffic class of a priority mix (``bot.stats.admission``): sent, admitted (2xx) and shed (HTTP 429, or a
    500 that streamed nothing: an Admitter's rejection on v0.10.0) per arm, pooled over the arm's runs, of the
    shed how many were such 500s, and Fisher's exact test of its admit rate, evolved against baseline."""

    traffic_class: str
    priority: int | None = None
    baseline_requests: int = Field(ge=0)
    baseline_admitted: int = Field(ge=0)
    baseline_shed: int = Field(ge=0)
    evolved_requests: int = Field(ge=0)
    evolved_admitted: int = Field(ge=0)
    evolved_shed: int = Field(ge=0)
    baseline_shed_500: int = Field(default=0, ge=0, description="of baseline_shed, HTTP 500s (ADMITTER_REJECT_STATUS)")
    evolved_shed_500: int = Field(default=0, ge=0, description="of evolved_shed, HTTP 500s (ADMITTER_REJECT_STATUS)")
    baseline_runs: list[float] = Field(default_factory=list, description="admit rate of each baseline run")
    evolved_runs: list[float] = Field(default_factory=list, description="admit rate of each evolved run")
    p_value: float = Field(ge=0, le=1, description="two-sided Fisher's exact p, evolved against baseline")
    p_adjusted: float = Field(ge=0, le=1, description="Holm-adjusted over the mix's classes")
    change: str = Field(description="admits fewer / admits more / no detectable change / not measured")


class Verdict(Strict):
    hypothesis_id: str
    status: VerdictStatus
    summary: str
    effects: list[Effect] = Field(default_factory=list)
    flags: list[str] = Field(default_factory=list, description="mechanism, shedding, attenuation, noise warnings")
    admission: list[AdmissionRow] = Field(
        default_factory=list,
        description="per-class admission on the plan's priority mix, when it judged this hypothesis (the shedding order)",
    )


#: The cause the differential check names for the values a person set at gate 1 (a run with the evolved ones).
DEPLOYED_VALUES = "deployed-values"


class FidelityCause(Strict):
    """One mapping between BLIS's view and llm-d's, and the disagreements switching it off removes."""

    mapping: str = Field(description="mapping id (bot.golang.harness_world.MAPPINGS) or a structural cause")
    title: str
    why: str = ""
    states: int = Field(ge=0, description="disagreeing states whose agreement rises when this mapping is switched off")
    agreement_without: float = Field(ge=0, le=1, description="agreement with only this mapping switched off")
    breaks: int = Field(
        default=0, ge=0, description="states that agree as deployed and disagree with only this mapping switched off"
    )
    examples: list[str] = Field(default_factory=list, description="a few concrete disagreeing states, one line each")


class FidelityFailure(Strict):
    """Sampled states on which one side failed (a panic or an error), with the first failure's words."""

    side: Literal["plugin", "blis"] = Field(
        description="plugin: it failed where the BLIS original decided (counted as disagreements); blis: the "
        "original itself failed (left out: there is no decision to compare)"
    )
    states: int = Field(ge=0)
    plugin_too: int = Field(default=0, ge=0, description="blis side: of those states, how many the plugin failed too")
    message: str = Field(description="the first line of the first failure's message, shortened")
    example: str = Field(description="one failing state's shape, e.g. 'request r7 (120 tokens), 3 endpoints'")
    shapes: str = Field(default="", description="how many failing states had each endpoint count")
    at: str = Field(default="", description="where the first failure was raised (FILE:LINE from its stack), if known")


class FidelityClass(Strict):
    """An admitter's sampled states of one BLIS SLO class: how many disagree, which way, and whether the class
    matters here (the program names it; the plan's priority mix sends traffic the plugin reads as it)."""

    name: str = Field(description='the BLIS SLO class ("" is the empty class)')
    states: int = Field(ge=0, description="compared states whose request has this class")
    disagreements: int = Field(default=0, ge=0)
    blis_admits: int = Field(default=0, ge=0, description="BLIS admits, the plugin rejects")
    llmd_admits: int = Field(default=0, ge=0, description="the plugin admits, BLIS rejects")
    plugin_failed: int = Field(default=0, ge=0, description="the plugin failed where BLIS decided")
    examples: list[str] = Field(default_factory=list, description="a few disagreeing states, one line each")
    read_as: str = Field(default="", description="the class the plugin reads for such a request (from its priority)")
    named: bool | None = Field(default=None, description="whether the evolved program compares the class by name")
    mix: list[str] = Field(
        default_factory=list, description="the plan's priority-mix classes the plugin reads as this class"
    )


class Fidelity(Strict):
    """How often the plugin, as llm-d runs it, decides like the BLIS original on sampled states."""

    measured: bool = True
    reason: str = Field(default="", description="why it was not measured, when measured is false")
    decision: str = Field(default="", description="what is compared: the chosen endpoint, or admit/reject")
    states: int = Field(default=0, ge=0)
    seed: int = 0
    agreement: float = Field(default=0.0, ge=0, le=1)
    agreement_all_off: float = Field(default=0.0, ge=0, le=1, description="with every mapping switched off")
    floor: float = Field(default=0.99, ge=0, le=1)
    floor_default: float | None = Field(
        default=None, ge=0, le=1, description="the bot's floor when the request set its own (`fidelity_floor`)"
    )
    all_high_fidelity: bool = False
    reference: str = Field(default="", description="what the plugin's figure is compared with, when there is one")
    reference_agreement: float | None = Field(
        default=None, ge=0, le=1, description="how often that reference decides like the BLIS original"
    )
    causes: list[FidelityCause] = Field(default_factory=list, description="largest first")
    unattributed: int = Field(default=0, ge=0, description="disagreements no mapping explains")
    overlapping: int = Field(default=0, ge=0, description="disagreements more than one mapping explains on its own")
    tied: int = Field(default=0, ge=0, description="disagreements in part only: a random pick among tied top scores")
    redrawn: int = Field(
        default=0, ge=0, description="a router: states the BLIS original decides otherwise run again with another seed"
    )
    redraw_agreement: float | None = Field(
        default=None, ge=0, le=1, description="the original's agreement with itself there; None: it draws no number"
    )
    errors: int = Field(default=0, ge=0, description="states left out: the BLIS original itself failed")
    failures: list[FidelityFailure] = Field(default_factory=list, description="plugin side first")
    classes: list[FidelityClass] = Field(
        default_factory=list, description="an admitter's states and disagreements per BLIS SLO class"
    )
    deployed_values_changed: int | None = Field(
        default=None,
        ge=0,
        description="compared states the plugin decided differently with the values set at gate 1 than with the "
        "evolved ones; None when none were set",
    )
    notes: list[str] = Field(default_factory=list)
    held_constant: list[str] = Field(
        default_factory=list,
        description="signals the program reads that the harness holds at one value in every sampled state: the "
        "figure does not exercise them (harness_world.HELD_CONSTANT says why)",
    )
    files: dict[str, str] = Field(default_factory=dict, description="plugin file -> sha256 of what was measured")

    @property
    def below_floor(self) -> bool:
        return self.measured and self.agreement < self.floor

    @property
    def floor_missed_by_choice(self) -> FidelityCause | None:
        """Below the floor only because of the values a person set at gate 1: their cause, whose agreement with
        it switched off is at or above the floor (their decision, on record, not a gap to fix); else None."""
        if not self.below_floor:
            return None
        return next(
            (c for c in self.causes if c.mapping == DEPLOYED_VALUES and c.agreement_without >= self.floor), None
        )

    @property
    def floor_pct(self) -> str:
        """``95%``, ``97.5%``: the floor as precisely as it was set (a 0.975 floor shown as 98% hid a miss)."""
        return percent(self.floor)


class TranslationSummary(Strict):
    """What stage 2 hands to stage 3 (committed as translation.json beside the translation report)."""

    kind: PolicyKind
    plugin_type: str
    package_dir: str = Field(description="branch-relative directory of the generated plugin package")
    signals: list[str] = Field(description="canonical BLIS signals the evolved logic reads")
    freshness_gaps: list[str] = Field(default_factory=list, description="signals whose Map B entry has a freshness gap")
    touched_gaps: list[str] = Field(default_factory=list, description="Map C gap ids the policy touches")
    thresholds: dict[str, float] = Field(default_factory=dict, description="plugin parameter name -> evolved default")
    untranslatable: list[str] = Field(default_factory=list, description="signals with no llm-d source (fallback used)")
    epp_plugins: list[str] | None = Field(
        default=None,
        description=(
            "plugin types the deployed EndpointPickerConfig runs beside the evolved plugin (producers, the profile's "
            "other scorers); what Track B's wording and the freshness conditions depend on. None: not recorded"
        ),
    )
    registration_import: str = Field(default="", description="import for cmd/epp/runner/runner.go")
    registration_line: str = Field(default="", description="the plugin.Register(...) line in registerInTreePlugins()")
    findings: list[Finding] = Field(default_factory=list)
    fidelity: Fidelity | None = Field(default=None, description="the differential check against the BLIS original")
    behaviour: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "what the plugin decided in the generated test's behaviour states, on a fresh plugin with its defaults "
            "(an admitter: '<idle|overloaded>:<priority>' -> 'admit' or 'reject'); empty when the harness did not run"
        ),
    )
    stateful: bool = Field(
        default=False,
        description="the plugin keeps state between requests, so a fresh plugin's behaviour is not all it can do",
    )
    dead_logic: list[DeadLogic] = Field(default_factory=list, description="evolved logic that cannot act in llm-d")
