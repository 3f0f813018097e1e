"""The words every track's hypotheses share: who is compared with whom, where, and which way is better."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from bot.hypotheses import direction
from bot.hypotheses.metrics import metric_label
from bot.model import PolicyKind, PromotionRequest, TranslationSummary
from bot.model.metrics import METRICS


@dataclass
class Ctx:
    """What every hypothesis of one promotion is written from."""

    req: PromotionRequest
    summary: TranslationSummary
    dictionary: Any
    plugin: str  # "the evolved scorer `x`"
    default: str  # "the default scorer pipeline"
    #: The values a person set at gate 1 (``param NAME: VALUE``, the config stage 2 committed): the plugin the
    #: benchmark runs has them, so the hypotheses say so beside BLIS's.
    deployed: dict[str, float | str] = dataclasses.field(default_factory=dict)

    def recalibrated(self) -> dict[str, float | str]:
        """The deployed values that differ from the evolved ones (one set back to BLIS's is no re-calibration)."""
        return {n: v for n, v in self.deployed.items() if self.summary.thresholds.get(n) != v}

    def as_deployed(self) -> str:
        """```qThreshold` = 24 (BLIS: 3)``, for each re-calibrated value; "" when none."""
        from bot.directives import plain_number

        def value(v: float | str) -> str:
            return plain_number(v) if isinstance(v, int | float) else str(v)

        return ", ".join(
            f"`{n}` = {value(v)}"
            + (f" (BLIS: {value(self.summary.thresholds[n])})" if n in self.summary.thresholds else "")
            for n, v in self.recalibrated().items()
        )


#: What an admitter is compared with: its own EndpointPickerConfig without it, whose saturation detector keeps
#: llm-d-router v0.10.0's built-in shedding (priority < 0, HTTP 429 at saturation >= 1) to a pool whose every
#: endpoint has a full KV cache or stale metrics (bot.golang.admission_docs), not "every request admitted" by
#: default: that shedding is on by default.
ADMISSION_BASELINE = (
    "the same EndpointPickerConfig without the admitter (llm-d's built-in shedding left only for a pool whose every "
    "endpoint has a full KV cache or stale metrics)"
)


def plugin_phrase(kind: PolicyKind, plugin: str) -> tuple[str, str]:
    """(the evolved plugin, what it is compared with), as the seed's example words them."""
    if kind is PolicyKind.ROUTING:
        return f"the evolved scorer `{plugin}`", "the default scorer pipeline"
    if kind is PolicyKind.ADMISSION:
        return f"the evolved admission plugin `{plugin}`", ADMISSION_BASELINE
    return f"the evolved queue-ordering plugin `{plugin}`", "the default scheduling pipeline"


def named_plugins(statements: Iterable[str]) -> set[tuple[PolicyKind, str]]:
    """(kind, plugin type) of every evolved plugin the statements name as ``plugin_phrase`` words it: what a
    hypotheses directory says it is about, so a translation of another plugin can be told from its own."""
    statements, out = list(statements), set()
    for kind in PolicyKind:
        lead = plugin_phrase(kind, "")[0].removesuffix("``")
        pattern = re.compile(re.escape(lead) + r"`([^`\n]+)`")
        out |= {(kind, m) for s in statements for m in pattern.findall(s)}
    return out


#: What a scheduling plugin does in llm-d, whatever order BLIS evolved: it places requests, it orders no queue.
PLACEMENT = (
    "prefers endpoints where the evolved queue order would serve the request earlier "
    "(vLLM serves each queue first come, first served; the plugin reorders none)"
)


def llmd_mechanism(kind: PolicyKind, mechanism: str | None) -> str | None:
    """A Track A claim's mechanism as llm-d tests it. A BLIS scheduler orders the wait queue; its llm-d
    translation only places requests (``PLACEMENT``), so a scheduling claim's mechanism says that first and
    keeps BLIS's words as the origin: "puts critical requests at the head of the wait queue" read as what
    the benchmark checks, and it is not. Other kinds act in llm-d as in BLIS and keep their mechanism."""
    if kind is not PolicyKind.SCHEDULING:
        return mechanism
    origin = (
        f" It translates BLIS's mechanism (the origin, not what runs in llm-d): {mechanism.strip()}"
        if mechanism
        else ""
    )
    return f"In llm-d the plugin {PLACEMENT}.{origin}"


def clause(text: str) -> str:
    """A sentence used mid-sentence: no trailing period, first letter lowered unless it starts an acronym."""
    t = text.strip().rstrip(".")
    if len(t) > 1 and t[0].isupper() and t[1].islower():
        t = t[0].lower() + t[1:]
    return t


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def fmt_rate(r: float) -> str:
    return f"{r:g}"


def where(req: PromotionRequest, workloads: list[str], rates: list[float]) -> str:
    parts = []
    for name in workloads:
        w = req.workload(name)
        desc = f" ({w.description.rstrip('.')})" if w.description else ""
        parts.append(f"`{name}`{desc}")
    names = " and ".join(parts) if len(parts) <= 2 else ", ".join(parts[:-1]) + " and " + parts[-1]
    at = " at " + ", ".join(fmt_rate(r) for r in rates) + " req/s" if rates else " at every benchmarked rate"
    return f"workload{'s' if len(workloads) > 1 else ''} {names}{at}"


def direction_words(short: str, direction: str) -> str:
    better = METRICS[short].better
    lower = direction == "decrease"
    good = (better == "lower") == lower
    return f"{'better' if good else 'worse'} ({'lower' if lower else 'higher'}) {metric_label(short)}"


def code_list(names: list[str]) -> str:
    """`a`, `b` and `c`."""
    quoted = [f"`{n}`" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def prediction_phrases(h) -> list[str]:
    """The words in which a hypothesis's text states its benchmark prediction: the direction and metric
    (``direction_words``), or the metric and margin of an equivalence or no-regression, and the workloads."""
    p = h.prediction
    if p is None:
        return []
    if p.direction.value in ("increase", "decrease"):
        said = [direction_words(p.metric, p.direction.value)]
    else:
        said = [metric_label(p.metric), f"{p.margin:.0%}"]
    return said + list(h.workloads)


def opposite_phrases(h) -> list[str]:
    """Words that would state the opposite of an increase/decrease prediction ("worse (higher)" for a
    predicted lower latency)."""
    p = h.prediction
    if p is None or p.direction.value not in ("increase", "decrease"):
        return []
    flipped = "increase" if p.direction.value == "decrease" else "decrease"
    return [" ".join(direction_words(p.metric, flipped).split(" ")[:2])]


def claim_kept(old, new) -> list[str]:
    """Why a reworded hypothesis no longer says what its prediction tests; [] when it still does.

    The prediction is fixed by rule, and the title and statement are where people read it: a verdict of
    "confirmed" under a title that claims the opposite would mislead the gate and the PR. So a rewording
    keeps every prediction phrase the generated text had (``prediction_phrases``), says its metric moves
    against the prediction in no words of its own (``direction.against_prediction``: "TTFT p99 rises" for a
    predicted decrease, however the text words it, as a Map C gap's Track B text does), and turns round no
    claim the text made ("fewer 429s" -> "more 429s"); it is free to change everything else."""
    errors = []
    p = new.prediction
    for field in ("title", "statement"):
        was, now = getattr(old, field).lower(), getattr(new, field).lower()
        lost = [w for w in prediction_phrases(new) if w.lower() in was and w.lower() not in now]
        flipped = [w for w in opposite_phrases(new) if w.lower() in now and w.lower() not in was]
        if p is not None:
            before = set(direction.against_prediction(was, p.metric, p.direction.value))
            flipped += [w for w in direction.against_prediction(now, p.metric, p.direction.value) if w not in before]
        if lost:
            errors.append(
                f"{new.id} {field}: keep the words that state its prediction "
                f"({', '.join(repr(w) for w in lost)}); the prediction is fixed, reword around them"
            )
        if flipped:
            errors.append(
                f"{new.id} {field}: says {', '.join(repr(w) for w in dict.fromkeys(flipped))}, the opposite of its "
                f"prediction ({p.metric} {p.direction.value})"
            )
        elif turned := direction.reversed_claims(was, now):
            errors.append(
                f"{new.id} {field}: says "
                + ", ".join(f"{w!r} where it said {o!r}" for w, o in turned)
                + ": a rewording keeps the direction of every claim the text makes"
            )
    return errors
