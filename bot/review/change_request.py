"""Whether a person's change request would change anything, answered before it is recorded.

A change request sends the gate's stages back with the reason as input. Offline
only the directives of ``bot.directives`` act on it (the Claude author, with
``--llm anthropic``, also reads the prose at gates 1 and 2); a reason with none
of them reruns the stages on the same inputs and reopens the gate unchanged,
which looks like the bot ignored the person. So both homes ask ``refusal``
first and, when it says why, answer at once (the CLI exits 2, GitHub replies
to the comment) with the gate's directives, and record nothing.
A directive whose value cannot apply (an unknown scorer or parameter, a margin
out of range) is refused the same way, instead of failing the stage later.
"""

from __future__ import annotations

import difflib
import operator
import re

from bot import directives
from bot.escape import md
from bot.model import RequestError

#: Gates whose stages the Claude author reruns with the reason as input (stage 2, stage 3); gate 3's stages
#: (the plan and the verdicts) have no author step.
AUTHOR_READS_PROSE = frozenset({1, 2})


def refusal(
    gate: int,
    reason: str | None,
    *,
    parameters: list[str] | None = None,
    checks: dict[str, list[dict]] | None = None,
    author: bool = False,
) -> str | None:
    """Why this change request would change nothing (or cannot apply), with the fix; None when it applies.

    ``parameters`` are the plugin's parameter names (gate 1's ``param`` checks against them when known);
    ``checks`` are their Validate() conditions by name (``ParamSpec.checks``: a value they refuse would stop
    the EPP at startup and leave the differential check nothing to compare, so it is refused here);
    ``author`` says a Claude author reads the prose of this promotion's reruns.
    """
    text = (reason or "").strip()
    if gate == 1:
        applied, problems = _gate1(text, parameters, checks or {})
    elif gate == 2:
        applied, problems = _gate2(text)
    else:
        applied, problems = [d.name for d in directives.found(gate, text)], []
    if problems:
        return (
            f"gate {gate}: {'; '.join(problems)}; nothing was recorded. Gate {gate} applies: {directives.listing(gate)}"
        )
    if applied or (author and gate in AUTHOR_READS_PROSE):
        return None
    hint = _suggestion(text, parameters) if gate == 1 else ""
    return (
        f"gate {gate}: the reason names no directive gate {gate} applies by rule, so its stages would rerun on "
        f"the same inputs and reopen the gate unchanged; nothing was recorded.{hint} Gate {gate} applies, one per "
        f"line of the reason: {directives.listing(gate)}. To put a remark on record without a rerun, approve or "
        "reject with it as the reason"
    )


def _gate1(text: str, parameters: list[str] | None, checks: dict[str, list[dict]]) -> tuple[list[str], list[str]]:
    from bot.golang.translate import feedback_options

    try:
        options, applied = feedback_options(text)
    except RequestError as exc:  # an unknown scorer
        return [], [str(exc)]
    unknown = sorted(set(options.get("deployed", {})) - set(parameters)) if parameters is not None else []
    if unknown:
        return applied, [
            f"`param {', '.join(unknown)}` is not a parameter of the plugin (its parameters: {', '.join(parameters)})"
        ]
    refused = [
        f"`param {name}: {value:g}` is out of range: {why}"
        for name, value in options.get("deployed", {}).items()
        for why in out_of_range(value, checks.get(name, []))
    ]
    if refused:
        return applied, [*refused, "the plugin's Validate() refuses such a value when the EPP starts"]
    return applied, []


_COND = re.compile(r"^\s*p\.\w+\s*(<=|>=|<|>|==|!=)\s*(-?\d+(?:\.\d+)?)\s*$")
_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq, "!=": operator.ne}


def out_of_range(value: float, checks: list[dict]) -> list[str]:
    """The messages of the plugin's Validate() checks ``value`` trips, with the value in them.

    A check is a Go condition on the one field (``p.LoadHighThreshold < 0``, parts joined by ``||``) and
    the message Validate() returns (``loadHighThreshold must be >= 0, got %v``), as ``bot.golang.params``
    writes them. A condition in another form (a string comparison) is left to Validate(), never guessed.
    """
    tripped = []
    for check in checks:
        parts = [_COND.match(p) for p in check["cond"].split("||")]
        if all(parts) and any(_OPS[m.group(1)](value, float(m.group(2))) for m in parts):
            tripped.append(check["message"].replace("%v", f"{value:g}"))
    return tripped


def _gate2(text: str) -> tuple[list[str], list[str]]:
    from bot.hypotheses import parse_feedback

    fb = parse_feedback(text)
    applied = [*fb.exclude, *fb.guards, *fb.margins] + (["margin"] if fb.margin is not None else [])
    return applied, ([] if applied else [md(u) for u in fb.unapplied])  # they quote the person's line


def _suggestion(text: str, parameters: list[str] | None) -> str:
    """``set loadThreshold to 40`` names a parameter almost and a value: say the directive that does it."""
    if not parameters:
        return ""
    by_lower = {p.lower(): p for p in parameters}
    value = re.search(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])", text)
    names: list[str] = []
    for word in re.findall(r"[A-Za-z][A-Za-z0-9_]{3,}", text):
        for hit in difflib.get_close_matches(word.lower(), by_lower, n=3, cutoff=0.75):
            if by_lower[hit] not in names:
                names.append(by_lower[hit])
    if not names:
        return ""
    v = value.group(0) if value else "VALUE"
    return " Did you mean " + " or ".join(f"`param {n}: {v}`" for n in names[:3]) + "?"


def refusal_on_branch(gate: int, reason: str | None, ctx, *, author: bool) -> str | None:
    """``refusal`` with the plugin's parameters read from the committed translation (``ctx``: a StageContext)
    and their Validate() checks from the request's program (the analysis is pure and takes a fraction of a
    second; the checks are not in translation.json)."""
    parameters = None
    checks = None
    if gate == 1:
        from bot.model import TranslationSummary

        text = ctx.read(ctx.paths.translation_json)
        if text is not None:
            parameters = sorted(TranslationSummary.model_validate_json(text).thresholds)
        checks = parameter_checks(ctx.request, ctx.dictionary)
    why = refusal(gate, reason, parameters=parameters, checks=checks, author=author)
    if why is None and gate == 3 and ctx.results_dir is not None:
        unusable = unusable_results(ctx)
        if unusable is not None:
            return (
                f"gate 3: {unusable}; nothing was recorded. Put this promotion's reports in {ctx.results_dir} "
                "(or start again with `promote run REQUEST --results DIR`), then ask for the rejudge again"
            )
    return why


def unusable_results(ctx) -> str | None:
    """Why stage 5 could not judge the reports in ``ctx.results_dir`` (none of them evidence for this
    promotion), or None. A rejudge asks this before it is recorded: stage 5 raising it after stage 4 had
    rerun would leave the decision on record for a command that exited 2."""
    from bot.bench.errors import ReportError
    from bot.stages.run_validate import load_reports

    try:
        load_reports(ctx, ctx.results_dir)
    except ReportError as exc:
        return str(exc)
    return None


def parameter_checks(request, dictionary) -> dict[str, list[dict]]:
    """The Validate() checks of each plugin parameter the request's program gives (``ParamSpec.checks``)."""
    from bot.golang.analyze import analyze
    from bot.golang.params import param_specs
    from bot.golang.source import parse_evolved_source
    from bot.model import PolicyKind

    analysis = analyze(parse_evolved_source(request.source_text, request.source), dictionary, request.kind)
    return {p.name: p.checks for p in param_specs(analysis, None, request.kind == PolicyKind.SCHEDULING)}
