"""Whether a person's change request would change anything, answered before it is recorded.

A change request sends the gate's stages back with the reason as input. Offline
only the directives of ``bot.directives`` act on it (the Claude author, with
``--llm anthropic``, also reads the prose at gates 1 and 2); a reason with none
of them reruns the stages on the same inputs and reopens the gate unchanged,
which looks like the bot ignored the person. So both homes ask ``refusal``
first and, when it says why, answer at once (the CLI exits 2, GitHub replies
to the comment) with the gate's directives, and record nothing.
A directive whose value cannot apply (an unknown or repeated scorer, a weight of 0, an unknown parameter, a margin
out of range, a hypothesis id the gate does not have) is refused the same way,
instead of failing the stage later or rerunning it for nothing.
"""

from __future__ import annotations

import difflib
import re

from bot import directives
from bot.escape import md
from bot.model import Direction, Hypothesis, RequestError

#: Gates whose stages the Claude author reruns with the reason as input (stage 2, stage 3); gate 3's stages
#: (the plan and the verdicts) have no author step.
AUTHOR_READS_PROSE = frozenset({1, 2})
#: How alike a word and a parameter name must be for the hint: ``loadThreshold`` ~ ``loadHighThreshold`` (0.87)
#: is a near miss; ``thresholds`` ~ ``deltaThreshold`` (0.75) only shares the suffix every threshold has.
_NEAR = 0.8


def refusal(
    gate: int,
    reason: str | None,
    *,
    parameters: list[str] | None = None,
    checks: dict[str, list[dict]] | None = None,
    types: dict[str, str] | None = None,
    hypotheses: list[Hypothesis] | None = None,
    author: bool = False,
    scorers: bool | None = None,
    examples: dict[str, str] | None = None,
    defaults: dict[str, float] | None = None,
    current: dict[str, float] | None = None,
    inert: dict[str, str] | None = None,
    github: bool = False,
) -> str | None:
    """Why this change request would change nothing (or cannot apply), with the fix; None when it applies.

    ``parameters`` are the plugin's parameter names (gate 1's ``param`` checks against them when known);
    ``checks`` are their Validate() conditions by name (``ParamSpec.checks``: a value they refuse would stop
    the EPP at startup and leave the differential check nothing to compare, so it is refused here);
    ``types`` their Go types by name (a word for a number, or a number for a string, is refused);
    ``hypotheses`` the ones gate 2's ids may name (its documents and those excluded before, when known);
    ``author`` says a Claude author reads the prose of this promotion's reruns;
    ``scorers`` whether the plugin has a ``scorers`` parameter (False: ``scorers:`` would change nothing);
    ``examples`` the directives this promotion is offered (``directives.promotion_examples``) for the answer;
    ``defaults`` the plugin's parameters at their evolved values and ``current`` the values a person's last gate-1
    change request deployed (a ``param`` that reproduces the deployed config changes nothing); ``inert`` the
    parameters that change no decision in llm-d, each with why (``inert_parameters``);
    ``github`` words the directives' effects for the GitHub home (no local flags there).
    """
    text = (reason or "").strip()
    if gate == 1:
        applied, problems = _gate1(
            text, parameters, checks or {}, types or {}, scorers, current or {}, set(inert or {})
        )
        if not problems:
            problems = _no_effect(text, inert or {}, None if author else defaults, current or {})
    elif gate == 2:
        applied, problems = _gate2(text, hypotheses)
    else:
        applied, problems = [d.name for d in directives.found(gate, text)], []
    if problems:
        return (
            f"gate {gate}: {'; '.join(problems)}; nothing was recorded. Gate {gate} applies: "
            f"{directives.listing(gate, examples, github=github)}"
        )
    if applied or (author and gate in AUTHOR_READS_PROSE):
        return None
    hint = (_suggestion(text, parameters) if gate == 1 else "") + _quoted_ids(text)
    return (
        f"gate {gate}: the reason names no directive gate {gate} applies by rule, so its stages would rerun on "
        f"the same inputs and reopen the gate unchanged; nothing was recorded.{hint} Gate {gate} applies, one per "
        f"line of the reason: {directives.listing(gate, examples, github=github)}. To put a remark on record without a rerun, approve or "
        "reject with it as the reason"
    )


def _gate1(
    text: str,
    parameters: list[str] | None,
    checks: dict[str, list[dict]],
    types: dict[str, str],
    scorers: bool | None,
    current: dict[str, float],
    inert: set[str],
) -> tuple[list[str], list[str]]:
    from bot.golang import param_relations
    from bot.golang.params import out_of_range, shown, type_problem
    from bot.golang.translate import feedback_options

    malformed = [  # what the parameter takes, when known, says more than the generic form
        why
        for m in directives.PARAM.finditer(text)
        if directives.param_value(m.group(2)) is None
        and m.group(1) in types
        and (why := type_problem(m.group(1), types[m.group(1)], None, m.group(2)))
    ]
    if malformed:
        return [], malformed
    bad_scorers = directives.scorers_problems(text)
    if bad_scorers:
        return [], bad_scorers
    try:
        options, applied = feedback_options(text)
    except RequestError as exc:  # an unknown scorer, a `param` value that is neither a number nor a word
        return [], [str(exc)]
    if "scorers" in options and scorers is False:
        # The generator reads it only for a routing plugin that carries BLIS's scorers: the translation report
        # would say "applied" while the plugin, its config and the baseline stay as they were.
        why = (
            "`scorers:` sets the BLIS scorers a routing plugin carries as its `scorers` parameter; this plugin has "
            "none, so it would change nothing"
        )
        return applied, [why]
    deployed = options.get("deployed", {})
    # An inert name the plugin has no parameter for is a constant of evolved.go (``dead_branches.demote``):
    # ``_no_effect`` says why it is none, which says more than "not a parameter".
    unknown = sorted(set(deployed) - set(parameters) - inert) if parameters is not None else []
    if unknown:
        return applied, [
            f"`param {', '.join(unknown)}` is not a parameter of the plugin (its parameters: {', '.join(parameters)})"
        ]
    mistyped = [why for n, v in deployed.items() if n in types and (why := type_problem(n, types[n], v))]
    if mistyped:
        return applied, mistyped
    refused = [
        f"`param {name}: {shown(value)}` is out of range: {why}"
        for name, value in deployed.items()
        for why in out_of_range(value, checks.get(name, []))
    ]
    # Checks across parameters (a cut and the taper before it) see the values in effect: the evolved defaults,
    # a person's earlier `param` lines, then these.
    in_effect = current | deployed
    refused += [
        f"{', '.join(f'`param {n}: {shown(deployed[n])}`' for n in names)} cannot apply with the values in effect: "
        + r.message(in_effect)
        for r in param_relations.broken(checks, in_effect)
        if (names := [n for n in dict(r.names).values() if n in deployed])
    ]
    if refused:
        return applied, [*refused, "the plugin's Validate() refuses such a value when the EPP starts"]
    return applied, []


def _no_effect(
    text: str, inert: dict[str, str], defaults: dict[str, float] | None, current: dict[str, float]
) -> list[str]:
    """``param`` lines that would rerun stage 2 for nothing: a parameter llm-d gives no input to, or only the
    values the deployed config already has (with no ``scorers:`` line beside them). ``defaults`` None: unknown,
    or a Claude author reads the prose too, so the rerun may still change something."""
    from bot.golang.translate import feedback_options

    options, _ = feedback_options(text)
    deployed = options.get("deployed", {})
    dead = [n for n in deployed if n in inert]
    if dead:
        return [f"`param {n}` has no effect in llm-d: {inert[n]}" for n in dead]
    if deployed and defaults is not None and "scorers" not in options and defaults | deployed == defaults | current:
        values = ", ".join(f"{n} = {directives.plain_number(v)}" for n, v in deployed.items())
        whose = "set by a person's earlier change request" if current else "the plugin's defaults"
        return [f"the deployed config already has {values} ({whose}), so stage 2 would rerun unchanged"]
    return []


def _gate2(text: str, hypotheses: list[Hypothesis] | None) -> tuple[list[str], list[str]]:
    from bot.hypotheses import parse_feedback

    fb = parse_feedback(text)
    applied = [*fb.exclude, *fb.guards, *fb.margins] + (["margin"] if fb.margin is not None else [])
    problems = _unknown_ids(fb.exclude, fb.margins, hypotheses) if hypotheses is not None else []
    if hypotheses is not None and [w for w in fb.not_ids if w]:
        ids = ", ".join(sorted({h.id for h in hypotheses}, key=lambda i: (i[0], int(i[1:]))))
        problems += [f"{md(w)} is not a hypothesis id of this promotion (ids: {ids})" for w in fb.not_ids if w]
    problems += [md(b) for b in fb.bad_margins]  # beside other directives too: a rerun would drop it silently
    if not problems and not applied:
        problems = [md(u) for u in fb.unapplied]  # they quote the person's line
    return applied, problems


def _unknown_ids(exclude: list[str], margins: dict[str, float], hypotheses: list[Hypothesis]) -> list[str]:
    """``exclude: B9`` or ``margin C12: 3%`` on an id gate 2 does not have, or a margin on a hypothesis that
    has none (a directional prediction): each would rerun stage 3 and reopen the gate unchanged."""
    from bot.hypotheses import hypothesis_order

    known = sorted({h.id for h in hypotheses}, key=lambda i: (i[0], int(i[1:])))
    tolerant = [
        h.id
        for h in sorted(hypotheses, key=hypothesis_order)
        if h.prediction is not None and h.prediction.direction in (Direction.EQUIVALENT, Direction.NO_WORSE)
    ]
    out = []
    unknown = [i for i in dict.fromkeys([*exclude, *margins]) if i not in known]
    if unknown:
        verb = "is not a hypothesis" if len(unknown) == 1 else "are not hypotheses"
        out.append(f"{', '.join(unknown)} {verb} of this promotion (its hypotheses: {', '.join(known)})")
    no_margin = [i for i in margins if i in known and i not in tolerant]
    if no_margin:
        out.append(
            f"`margin {', '.join(no_margin)}` names a directional prediction, which has no margin (margins apply to "
            f"the equivalence and no-worse predictions: {', '.join(tolerant) or 'none here'})"
        )
    return out


#: A finding id as the reviews show it (``bot.model.finding_ids``): ``hazard.sim-scale-threshold#3fa2c1-2``.
_FINDING_ID = re.compile(r"(?<![\w.#-])([A-Za-z][\w.-]*#[0-9a-f]{6,64}(?:-\d+)?)(?![\w#-])")


def _quoted_ids(text: str) -> str:
    """The README invites people to quote finding ids; a reason made of one ("please fix X#abc123") then reads
    as if the bot would act on the finding. Say that an id is for reference, and what does act."""
    ids = list(dict.fromkeys(_FINDING_ID.findall(text)))
    if not ids:
        return ""
    named = ", ".join(f"`{i}`" for i in ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
    return (
        f" A finding id ({named}) is for reference only: the bot does not act on it; to address the finding, put "
        "the directive its suggested fix names on a line of its own."
    )


def _suggestion(text: str, parameters: list[str] | None) -> str:
    """``set loadThreshold to 40`` names a parameter almost and a value: say the directive that does it.

    Only then: without a value, or with only a word every threshold shares ("these thresholds are already
    llm-d scale"), any parameter offered would be a guess the person did not make.
    """
    value = re.search(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])", text)
    if not parameters or value is None:
        return ""
    by_lower = {p.lower(): p for p in parameters}
    names: list[str] = []
    for word in re.findall(r"[A-Za-z][A-Za-z0-9_]{3,}", text):
        for hit in difflib.get_close_matches(word.lower(), by_lower, n=3, cutoff=_NEAR):
            if by_lower[hit] not in names:
                names.append(by_lower[hit])
    if not names:
        return ""
    return " Did you mean " + " or ".join(f"`param {n}: {value.group(0)}`" for n in names[:3]) + "?"


def refusal_on_branch(gate: int, reason: str | None, ctx, *, author: bool, results_problem=None) -> str | None:
    """``refusal`` with the plugin's parameters, their Go types and Validate() checks from the request's program
    (``ctx``: a StageContext; the analysis is pure and takes a fraction of a second, and translation.json lists
    only the evolved numbers, not a scheduling plugin's own settings), and gate 2's hypotheses from the
    committed documents.
    ``results_problem(ctx)`` (stage 5's ``unusable_results``, passed in by the entry points: a
    review does not import a stage) says why stage 5 could not judge the reports a rejudge would read."""
    parameters = None
    checks = None
    types = None
    scorers = None
    if gate == 1:
        specs = parameter_specs(ctx.request, ctx.dictionary)
        parameters = sorted(specs)
        checks = {n: s.checks for n, s in specs.items()}
        types = {n: s.go_type for n, s in specs.items()}
        scorers = has_scorers(ctx.request, ctx.dictionary)
    hypotheses = _hypotheses_on_branch(ctx) if gate == 2 else None
    why = refusal(
        gate,
        reason,
        parameters=parameters,
        checks=checks,
        types=types,
        hypotheses=hypotheses,
        author=author,
        scorers=scorers,
        examples=gate_examples(gate, ctx) if gate == 1 else None,
        defaults=_parameters_on_branch(ctx) if gate == 1 else None,
        current=deployed_by_person(ctx.state) if gate == 1 else None,
        inert=inert_parameters(ctx.request, ctx.dictionary) if gate == 1 else None,
        github=ctx.home == "github",
    )
    if why is None and gate == 2:
        why = _leaves_no_plan(ctx, reason)
    if why is None and gate == 3 and ctx.results_dir is not None and results_problem is not None:
        unusable = results_problem(ctx)
        if unusable is not None:
            return (
                f"gate 3: {unusable}; nothing was recorded. Put this promotion's reports in {ctx.results_dir} "
                "(or start again with `promote run REQUEST --results DIR`), then ask for the rejudge again"
            )
    return why


def _leaves_no_plan(ctx, reason: str | None) -> str | None:
    """An ``exclude:`` that leaves stage 4 no plan (no benchmarked hypothesis and no priority mix that decides
    one left): recorded, it failed stage 4 with the same error on every `promote resume`. None when a plan is
    left, or the hypotheses cannot be read (stage 3 then says why)."""
    from bot.bench.plan import PlanError, make_plan
    from bot.hypotheses import is_hypothesis_file, parse_feedback, parse_hypothesis
    from bot.review.brief import planned_hypotheses

    dropped = parse_feedback(reason or "").exclude
    if not dropped:
        return None
    try:
        docs = [
            parse_hypothesis(ctx.read(p) or "", p) for p in ctx.list(ctx.paths.hypotheses_dir) if is_hypothesis_file(p)
        ]
    except RequestError:
        return None
    left = [h for h in docs if h.id not in dropped]
    try:
        make_plan(ctx.request, planned_hypotheses(ctx, left))
    except PlanError:
        return (
            f"gate 2: excluding {', '.join(dropped)} leaves stage 4 nothing to plan: no hypothesis left is decided by "
            "a cell or by the priority mix, so stage 4 would fail on every resume; nothing was recorded. "
            "Keep at least one hypothesis a cell or the priority mix decides (exclude fewer), or reject the "
            "promotion with the reason"
        )
    return None


def _parameters_on_branch(ctx) -> dict[str, float] | None:
    """The plugin's parameters and their defaults, from the committed translation summary (None before it)."""
    from bot.model import TranslationSummary

    text = ctx.read(ctx.paths.translation_json)
    return dict(TranslationSummary.model_validate_json(text).thresholds) if text is not None else None


def gate_examples(gate: int, ctx) -> dict[str, str] | None:
    """The directives gate ``gate`` offers this promotion, with its own examples (None: the registry's).

    ``param``'s example is a change the review asks for: a simulator-scale threshold at pod scale (what the
    recalibration finding tries), unless a person already deployed that value; never a parameter llm-d gives
    no input to, nor a value its Validate() refuses (alone, or with the values in effect beside it)."""
    from bot.golang import param_relations
    from bot.golang.params import out_of_range
    from bot.golang.recalibration import pod_scale

    if gate != 1:
        return None
    defaults = _parameters_on_branch(ctx)
    person = deployed_by_person(ctx.state)
    in_effect = (defaults or {}) | person
    checks = parameter_checks(ctx.request, ctx.dictionary)
    suggested = {
        n: v
        for n, v in pod_scale(_analysis(ctx.request, ctx.dictionary)).items()
        if defaults is not None
        and n in defaults
        and in_effect.get(n) != v
        and not out_of_range(v, checks.get(n, []))
        and not param_relations.broken(checks, person | {n: v})
    }
    return directives.promotion_examples(
        1,
        parameters=defaults,
        scorers=has_scorers(ctx.request, ctx.dictionary),
        suggested=suggested,
        inert=set(inert_parameters(ctx.request, ctx.dictionary)),
    )


def deployed_by_person(state) -> dict[str, float]:
    """The ``param`` values in effect on the branch: those of every gate-1 change request so far, a later line for
    the same parameter winning (``PipelineState.change_requests``: the reruns read them all)."""
    from bot.golang.translate import feedback_options

    try:
        return feedback_options(state.change_requests(1))[0].get("deployed", {})
    except RequestError:
        return {}


def inert_parameters(request, dictionary) -> dict[str, str]:
    """Numbers that change no decision of the plugin (constants of evolved.go, no parameters), each with why: they
    act only on signals llm-d cannot provide, or only in a branch for an SLO class the plugin never receives
    (``dead_branches``: a ``case "batch"``, a ``default:`` beside cases for every class llm-d yields)."""
    from bot.golang import dead_branches
    from bot.golang.inert import no_source

    analysis = _analysis(request, dictionary)
    # Demoted to constants of evolved.go (``dead_branches.demote``): named by a `param` line, they are answered so.
    return {
        th.constant: (
            dead_branches.no_effect(*th.dead_branch)
            if th.dead_branch
            else th.reason
            if th.cancels  # added to every candidate's key: it cancels in every comparison (order_keys.py)
            else f"it {no_source(th.inert)}"
        )
        for th in analysis.thresholds
        if th.constant
    }


def _analysis(request, dictionary):
    from bot.golang.analyze import analyze
    from bot.golang.source import parse_evolved_source

    return analyze(parse_evolved_source(request.source_text, request.source), dictionary, request.kind)


def has_scorers(request, dictionary) -> bool:
    """Whether the plugin carries BLIS's scorers as a ``scorers`` parameter (``bot.golang.generate``: a routing
    program that reads ws.scorers), the only plugin ``scorers:`` changes."""
    from bot.model import PolicyKind

    return request.kind == PolicyKind.ROUTING and bool(_analysis(request, dictionary).uses_scorers)


def parameter_specs(request, dictionary) -> dict:
    """Every parameter ``param`` may set, by name (``ParamSpec``: Go type, Validate() checks): the evolved
    numbers and, for a scheduling plugin, its own pseudo-queue settings (``maxPseudoQueue``, ``incumbent*``),
    which the translation summary's thresholds leave out. ``scorers`` is a list its own directive sets."""
    from bot.golang.params import param_specs
    from bot.model import PolicyKind

    analysis = _analysis(request, dictionary)
    return {p.name: p for p in param_specs(analysis, None, request.kind == PolicyKind.SCHEDULING)}


def parameter_checks(request, dictionary) -> dict[str, list[dict]]:
    """The Validate() checks of each plugin parameter the request's program gives (``ParamSpec.checks``)."""
    return {n: s.checks for n, s in parameter_specs(request, dictionary).items()}


def _hypotheses_on_branch(ctx) -> list[Hypothesis] | None:
    """The ids gate 2's directives may name: the documents and what a person excluded before (an id the last
    reason excluded may be named again). None when they cannot all be read: nothing is refused on a guess."""
    from bot.hypotheses import is_hypothesis_file, parse_excluded, parse_hypothesis

    try:
        docs = [
            parse_hypothesis(ctx.read(p) or "", p) for p in ctx.list(ctx.paths.hypotheses_dir) if is_hypothesis_file(p)
        ]
        excluded = [h for h, _ in parse_excluded(ctx.read(ctx.paths.hypotheses_excluded))]
    except RequestError:  # (HypothesisError is one)
        return None
    return (docs + excluded) or None
