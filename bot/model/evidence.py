"""What the stages find and judge: hypotheses, effects, verdicts, fidelity and the translation summary (review findings:
``bot.model.findings``)."""

from __future__ import annotations

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
    Strict,
    Track,
    VerdictStatus,
    percent,
)
from bot.model.findings import Finding

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
    prompt_length_unmoved: list[str] | None = Field(
        default=None,
        description=(
            "a scheduler whose order reads the prompt length (InputTokens) but never moved with it on the compiled "
            "plugin in the harness, with its defaults: the parameters it reads the length through, none of which any "
            "input the probes tried made decide an outcome (the report's Generated tests lists them not exercised), "
            "while its queue behaviour rows scored every prompt length alike. Gate 2 then offers no prompt lengths "
            "as traffic that exercises the order. None: it moved, it was not measured (no harness answer, values "
            "set at gate 1), or an older summary"
        ),
    )
