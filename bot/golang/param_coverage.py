"""Which generated test exercises each evolved parameter, or why none does: the report's "Generated tests".

A parameter is exercised by a threshold case (``probes.select``: the evolved value against a moved one), or by a
behaviour row whose outcome its move changes (``probes.behaviour_exercised``, ``sequences.exercising``). The report
once listed only the threshold cases: a stateful admitter whose four parameters only its burst rows exercised read
"none: no parameter could be exercised" above a list that left those four out, so they were named nowhere. Here
every evolved parameter lands in exactly one of the two lists, the test named or the reason given.

Pure: the probes' specs and answers in, the two lists out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.golang import dead_branches, probes, queue_properties, sequences
from bot.golang.analysis_types import Analysis
from bot.golang.probes import Case
from bot.model import PolicyKind

#: Why a parameter has no test when the search found no input on which it decides.
NO_INPUT = "no llm-d input among the candidates made it decide the outcome"


@dataclass
class Coverage:
    """``tested``: "`param`: the test" lines; ``untested``: "`param`: why not" lines; ``params``: the tested names."""

    tested: list[str] = field(default_factory=list)
    untested: list[str] = field(default_factory=list)
    params: set[str] = field(default_factory=set)


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '\\"') + '"'


def coverage(
    an: Analysis,
    cases: list[Case],
    probe_specs: list[dict],
    results: list[dict] | None,
    skipped: list[str],
    never: dict[str, str],
) -> Coverage:
    """Every evolved parameter once, as tested (by which test) or untested (why); ``results`` None: the harness did
    not answer, so nothing was chosen (the caller says so once for every parameter). ``skipped``: ``probes.specs``'
    parameters no llm-d input sets; ``never``: ``never_binds.never_binds``' floors and caps no input reaches."""
    by_test: dict[str, list[str]] = {}
    for c in cases:
        by_test.setdefault(c.param, []).append(_quoted(c.name))
    named = {p: "TestThresholds " + ", ".join(names) for p, names in by_test.items()}
    if results is not None:
        rows = sequences.exercising(probe_specs, results, "TenantID" in an.signal_names)
        for p in sorted(probes.behaviour_exercised(probe_specs, results) | set(rows)):
            test = "TestQueueBehaviour" if an.kind.value == "scheduling" else "TestBehaviour"
            named.setdefault(p, f"{test} {_quoted(rows[p])}" if p in rows else f"{test} (an assertion its move breaks)")
    out = Coverage(params=set(named))
    reasons = {u.split("`")[1]: u for u in skipped if u.startswith("`")}
    for s in probe_specs:
        if s["role"] != "observe" and s["param"] not in named:
            reasons.setdefault(s["param"], f"`{s['param']}`: {never.get(s['param'], NO_INPUT)}")
    for p in dict.fromkeys(th.param for th in an.thresholds if th.param):
        if p in named:
            out.tested.append(f"`{p}`: {named[p]}")
        else:
            out.untested.append(reasons.get(p, f"`{p}`: {NO_INPUT}"))
    # A number only a branch llm-d never enters reaches is a constant, not a parameter (dead_branches.demote), and
    # so is one added to every candidate's key, which cancels in every comparison (order_keys.py).
    out.untested += [
        dead_branches.why_constant(th) for th in an.thresholds if th.constant and (th.dead_branch or th.cancels)
    ]
    return out


def prompt_length_unmoved(an: Analysis, tested: set[str], queue_rows: list[dict]) -> list[str] | None:
    """A scheduler's parameters through which its order reads the prompt length, when the compiled plugin's order
    never moved with it (``TranslationSummary.prompt_length_unmoved``): no input made one of them decide an outcome
    (none is in ``tested``) and its queue behaviour rows scored every prompt length alike. Trial 4's order put a
    standard request behind every modelled incumbent whatever its length, and gate 2 offered prompt lengths as the
    traffic that would exercise it. None when either measurement shows a move, or neither measured the length
    (no length parameter, and rows with one prompt length). ``tested``: ``Coverage.params`` of a harness that
    answered."""
    if an.kind is not PolicyKind.SCHEDULING or "InputTokens" not in an.signal_names:
        return None
    params = list(dict.fromkeys(th.param for th in an.thresholds if th.param and "InputTokens" in th.signals))
    moves = queue_properties.prompt_moves(queue_rows)
    if moves or set(params) & tested or (not params and moves is None):
        return None
    return params
