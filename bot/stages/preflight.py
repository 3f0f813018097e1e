"""What must hold of a request's evolved program before anything touches the fork, in both homes.

The program parses as Go in one of the accepted shapes, passes the static
safety check (nothing is analysed, built or run otherwise), and holds a policy
of the kind the request says; the metrics its claims and baselines name are
ones the benchmark reports (stage 3 would refuse them only after gate 1), and a
claim's magnitude is the change its statement states. Raises RequestError subclasses whose one line
names the problem and the fix; the local CLI prints it and exits 2, the GitHub
home answers ``needs-info`` with it.
"""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

from bot.model import BlisClaim, PromotionRequest, RequestError


class KindMismatch(RequestError):
    """The request's kind and the evolved program's policy disagree."""


class MagnitudeMismatch(RequestError):
    """A claim's ``magnitude`` is not the change its statement states."""


def check_program(request: PromotionRequest, *, where: str | None = None) -> None:
    from bot.dictionary import load_dictionary
    from bot.golang.analyze import analyze
    from bot.golang.safety import refuse_unsafe
    from bot.golang.source import parse_evolved_source

    name = where or str(request.source_path)
    src = parse_evolved_source(request.source_text, name)
    refuse_unsafe(src)  # nothing is analysed, built or run for a program that could reach outside itself
    dictionary = load_dictionary()
    analysis = analyze(src, dictionary, None)
    if analysis.kind is not request.kind:
        raise KindMismatch(
            f"the policy kind says {request.kind.value}, but {request.source} holds a "
            f"{analysis.kind.value} policy ({analysis.host}); fix the kind or the program"
        )
    _check_claim_signals(request, analysis, dictionary)


def _check_claim_signals(request: PromotionRequest, analysis, dictionary) -> None:
    """A claim's declared ``signals`` must be signals the plugin reads (stage 3 holds them to that too)."""
    from bot.golang.analysis_types import signals_read
    from bot.hypotheses.signals import declared_signals

    reads = sorted(signals_read(analysis, analysis.kind))
    for claim in request.claims:
        declared_signals(claim.id, claim.signals, reads, dictionary)


class OriginMismatch(RequestError):
    """``origin:`` names another program than the OpenEvolve metadata file it points at, or a file that is not there."""


def check_origin(request: PromotionRequest, request_file: str = "the request file") -> None:
    """``origin.metadata_file`` (OpenEvolve's ``best_program_info.json``) is where the PR's provenance comes from:
    it must be there, and say what ``origin:`` says (program id, iteration, fitness, baseline fitness), else the
    PR cites a program other than the one promoted. Only the fields the request gives are compared."""
    import json
    import math

    origin = request.origin
    if origin is None or not origin.metadata_file:
        return
    path = Path(request.base_dir) / origin.metadata_file
    fix = f"put OpenEvolve's best_program_info.json there, or remove `metadata_file` from {request_file}'s origin"
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise OriginMismatch(
            f"origin.metadata_file {origin.metadata_file}: no such file beside {request_file}; {fix}"
        ) from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise OriginMismatch(f"origin.metadata_file {origin.metadata_file}: not readable JSON ({exc}); {fix}") from None
    if not isinstance(info, dict):
        raise OriginMismatch(f"origin.metadata_file {origin.metadata_file}: not a JSON object; {fix}")
    metrics, baseline = info.get("metrics") or {}, info.get("baseline_metrics") or {}
    pairs = [
        ("program_id", origin.program_id, "id", info.get("id")),
        ("iteration", origin.iteration, "iteration", info.get("iteration")),
        ("fitness", origin.fitness, "metrics.combined_score", metrics.get("combined_score")),
        (
            "baseline_fitness",
            origin.baseline_fitness,
            "baseline_metrics.combined_score",
            baseline.get("combined_score"),
        ),
    ]
    for ours, mine, theirs, value in pairs:
        if mine is None or value is None:
            continue
        same = (
            math.isclose(float(mine), float(value), rel_tol=1e-9, abs_tol=1e-9)
            if isinstance(mine, int | float) and isinstance(value, int | float) and not isinstance(value, bool)
            else str(mine) == str(value)
        )
        if not same:
            raise OriginMismatch(
                f"origin.{ours} is {mine!r} but {origin.metadata_file} says {theirs} {value!r}: the request names "
                f"another program than the metadata file; correct the one that is wrong in {request_file}'s origin"
            )


def check_metrics(request: PromotionRequest) -> None:
    """Every claim's metric and baseline's guarded metric is one stage 3 can judge, asked by stage 3's own
    functions: a typo (``e2e_p95_msec``, ``ttft_meen``) is answered now, naming the known metrics, instead
    of after a person has decided gate 1 on a promotion that cannot be fixed in place."""
    from bot.hypotheses.generate import claim_metric, guarded_metrics

    for claim in request.claims:
        claim_metric(claim)
    for baseline in request.baselines:
        guarded_metrics(baseline)


#: A change stated in a claim: a signed percentage ("-24%", "+12.5 %", "−24%"), or one followed by the word
#: that makes it a change ("24% lower", "12% increase"). A bare "60%" is a share of the workload ("60%
#: heavy-hitter prefix group"), and "by 60%" as often describes the workload ("load rises by 60%"): neither is
#: taken for the claimed change.
_SIGNED_PERCENT = re.compile(r"(?<![\w.%])([+\-\u2212\u2013])(\d+(?:\.\d+)?)\s?%")
_WORDED_PERCENT = re.compile(
    r"(?<![\w.+\-\u2212\u2013])(\d+(?:\.\d+)?)\s?%\s+"
    r"(?:lower|higher|less|faster|slower|reduction|increase|decrease|improvement|drop|gain)\b",
    re.IGNORECASE,
)


def check_magnitudes(request: PromotionRequest) -> None:
    """A claim whose statement states one change ("-24%") and whose ``magnitude`` says another (-0.18) is
    refused: the PR would quote the magnitude ("BLIS predicted -18.0%") under a statement that says -24%.
    A statement with no stated change, or several (which one is the metric's is a guess), is not judged."""
    for claim in request.claims:
        why = magnitude_disagreement(claim)
        if why is not None:
            raise MagnitudeMismatch(why)


def magnitude_disagreement(claim: BlisClaim) -> str | None:
    """Why the claim's magnitude and its statement's one stated change disagree beyond rounding, or None."""
    if claim.magnitude is None:
        return None
    changes = stated_changes(claim.statement)
    if len(changes) != 1:
        return None
    text, stated, signed = changes[0]
    claimed = Decimal(repr(claim.magnitude)) * 100
    if not signed:  # "24% lower": the word gives the sense, the direction field says which way
        stated = abs(stated) * (-1 if claim.magnitude < 0 else 1)
    places = min(_decimals(stated), _decimals(claimed))
    if abs(stated - claimed) <= Decimal(5) / 10 ** (places + 1):
        return None
    fix = f"magnitude: {_fraction(stated)}"
    if (stated < 0) != (claimed < 0):
        fix += f" and direction: {'decrease' if stated < 0 else 'increase'}"
    return (
        f"claims[{claim.id}].magnitude: {claim.magnitude:g} is {_percent(claimed)}, but the statement says "
        f"{text}; set {fix} if the statement is right, or correct the statement "
        f"(the PR quotes the magnitude as what BLIS predicted)"
    )


def stated_changes(statement: str) -> list[tuple[str, Decimal, bool]]:
    """Each change the statement states: its text, its value in percent, and whether it carries a sign."""
    out = [
        (m.group(0).strip(), Decimal(m.group(2)) * (1 if m.group(1) == "+" else -1), True)
        for m in _SIGNED_PERCENT.finditer(statement)
    ]
    out += [(m.group(0).strip(), Decimal(m.group(1)), False) for m in _WORDED_PERCENT.finditer(statement)]
    return out


def _decimals(value: Decimal) -> int:
    exponent = value.normalize().as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def _percent(value: Decimal) -> str:
    return f"{value.normalize():+f}%"


def _fraction(percent: Decimal) -> str:
    return f"{(percent / 100).normalize():f}"
