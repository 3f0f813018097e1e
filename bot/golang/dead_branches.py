"""Numbers that only act in a branch the plugin never enters in llm-d: a case for an SLO class it never receives.

The plugin reads the SLO class from the request's llm-d priority, which yields only critical, standard or
sheddable (``hazard.unreachable-slo-branch`` flags the comparisons with batch, background or the empty
class, the ``default`` of a switch whose cases name all three, and the fallback of an if/else chain naming all
three: its last ``else``, or the code after a chain whose every branch returns). A number compared or combined only
inside such a branch (``case "batch": if loadRatio > batchLimit``, ``if c == "batch" { p = 1.25*p }``, ``default: w =
0.4`` beside cases for critical, standard and sheddable, trial p2's ``return 0.34, 0.33, 0.33`` after ``if class ==
"critical" {...} else if class == "standard" {...} else if class == "sheddable" {...}``), or a factor that only scales
such a limit (``batchLimit *= 0.8``), cannot change an outcome in llm-d, so it is no parameter: an EndpointPickerConfig knob
documented as doing nothing is one upstream would not take. ``demote`` turns it into an unexported constant of
evolved.go, with the reason beside it; the harness still compares the plugin with BLIS on the same states (the
constant is the evolved value), the report and a gate-1 finding say why no test exercises it, and gate 1 answers
a ``param`` line naming it that it has no effect (``no_effect``). A ``case`` arm for such a class, and such a
``default`` or fallback, get a comment at their line (``arm_comments``). ``dead_logic`` hands both kinds to stage 3
(``TranslationSummary.dead_logic``): a claim whose mechanism rests on them is not testable as translated.

A number that acts only on signals llm-d cannot provide (``inert.inert_signals``: CacheHitRate, always 0 in the
plugin) changes no decision either, so it is demoted the same way (found by an llm-d maintainer reading g01's
plugin, whose ``cacheHitRateThreshold`` was a knob documented as doing nothing).
"""

from __future__ import annotations

import re

from bot.golang import order_keys
from bot.golang.analysis_types import Analysis, Node
from bot.golang.flow_classes import UNREACHABLE_CLASSES, class_fallback
from bot.golang.gonames import go_value, lower_camel
from bot.golang.gotree import text_of, walk
from bot.golang.hazards import SIM_SCALE, UNREACHABLE_SLO
from bot.golang.inert import inert_signals, no_source
from bot.model import DeadLogic, Severity


def _spans(an: Analysis) -> list[tuple[int, int, str, list[str]]]:
    """(first line, last line, what it tests, the classes it is for) of every branch guarded by an unreachable
    class: a switch case on the class, or an ``if`` whose condition requires it (``c == "batch" && perInstance >
    2``), condition included; a ``default`` is for the unreachable classes its switch's cases leave to it, and so is
    an if/else chain's fallback (``flow_classes.class_fallback``), labelled ``else``."""
    lines = {f.source_line for f in an.findings if f.check == UNREACHABLE_SLO and f.severity == Severity.IMPORTANT}
    if not lines or an.src is None:
        return []
    out = []
    for node in walk(an.src.tree.root_node):
        fallback = class_fallback(node, lambda n: text_of(an.src, n)) if node.type == "if_statement" else None
        if fallback is not None and an.line_of(fallback[0]) in lines:  # flagged only when it names all three
            first, last, _subject, names = fallback
            classes = [c for c in UNREACHABLE_CLASSES if c not in names]
            out.append((an.line_of(first), _last_line(an, last), "else", classes))
        if node.type not in ("expression_case", "default_case", "if_statement") or an.line_of(node) not in lines:
            continue
        if node.type == "default_case":  # flagged only when every class llm-d yields has its own case
            guard: Node | None = node.parent.child_by_field_name("value") if node.parent is not None else None
            body = node
        else:
            guard = node.child_by_field_name("value" if node.type == "expression_case" else "condition")
            body = node if node.type == "expression_case" else node.child_by_field_name("consequence")
        if guard is None or body is None:
            continue
        what = guard.text.decode("utf-8", "replace")
        # `c == "batch"` alone or with && holds never: the condition and the block are dead; `!=` or || are not.
        if node.type == "if_statement" and ("==" not in what or "!=" in what or "||" in what):
            continue
        last = _last_line(an, body)
        label = {"expression_case": f"case {what}", "default_case": "default:"}.get(node.type, what)
        if node.type == "default_case":
            named = {_string(v) for c in node.parent.named_children if c.type == "expression_case" for v in _values(c)}
            classes = [c for c in UNREACHABLE_CLASSES if c not in named]
        else:
            classes = [c for c in re.findall(r'"([^"]*)"', what) if c in UNREACHABLE_CLASSES]
        out.append((an.line_of(node), last, label, list(dict.fromkeys(classes))))
    return out


def _last_line(an: Analysis, body: Node) -> int:
    row, column = body.end_point
    return an.src.to_original_line(row + (1 if column else 0))  # a case ends where the next one starts


def unreachable_params(an: Analysis) -> dict[str, tuple[int, str]]:
    """Parameter -> (line, guard) of the unreachable-class branch holding every comparison it takes part in."""
    spans = _spans(an)
    if not spans:
        return {}
    out: dict[str, tuple[int, str]] = {}
    for th in an.thresholds:
        # Where it acts: the comparison it takes part in, or the line of the expression it is a number of (a
        # coefficient in `p = math.Min(1, 1.25*p)` inside `if req.SLOClass == "batch"`); a number passed to a helper
        # that compares it, the call that passes it (flow_args.py).
        lines = [
            an.line_of(an.cond_nodes[o.cond_id]) if o.cond_id in an.cond_nodes and not o.param else o.line
            for o in th.occurrences
        ]
        where = [next((s for s in spans if s[0] <= line <= s[1]), None) for line in lines]
        if th.param and where and all(where):
            out[th.param] = (where[0][0], where[0][2])
    # A factor or step on a limit only such a branch compares acts only there too.
    limits = {th.local: out[th.param] for th in an.thresholds if th.local and th.param in out}
    for th in an.thresholds:
        if th.param and th.target in limits:
            out.setdefault(th.param, limits[th.target])
    return out


def dead_logic(an: Analysis) -> list[DeadLogic]:
    """What stage 3 reads of gate 1's verdict (``TranslationSummary.dead_logic``): each branch for SLO classes
    llm-d never sends, with the classes and the names of the numbers that act only there (``_names``), then each
    number that acts only on signals llm-d cannot provide. Run after ``demote``. Not a scheduler's branches: its
    modelled waiting requests take ``incumbentSLOClass``, which may be such a class, so they can run there."""
    demoted = [th for th in an.thresholds if th.constant]
    out: list[DeadLogic] = []
    for first, _last, label, classes in _spans(an) if an.kind.value != "scheduling" else []:
        if any(d.line == first and d.code == label for d in out):
            continue
        names = [n for th in demoted if th.dead_branch and th.dead_branch[0] == first for n in _names(th)]
        which = " or ".join(f'SLO class "{c}"' if c else "the empty SLO class" for c in classes) or "an SLO class"
        why = (
            f"the branch serves only {which}, which llm-d never sends this plugin (it reads the class from the request's "
            "llm-d priority: critical, standard or sheddable)"
        )
        out.append(DeadLogic(line=first, code=label, classes=classes, names=list(dict.fromkeys(names)), why=why))
    for th in demoted:
        if th.inert and th.constant:
            why = f"the number {no_source(th.inert)} (always 0 in the plugin)"
            out.append(DeadLogic(line=th.line, code=th.constant, names=_names(th), why=why))
        elif th.cancels and th.constant:
            out.append(
                DeadLogic(
                    line=th.line,
                    code=th.constant,
                    names=_names(th),
                    why=f"the number is {th.reason.removeprefix('it is ')}",
                )
            )
    return out


def _names(th) -> list[str]:
    """What a mechanism may call a demoted number: its constant in evolved.go, and the local it initialises in the
    evolved code (``batchLimit := 0.5``, compared only in the dead branch). Not the variable it is assigned to or
    scales: ``w`` in ``default: w = 0.4`` is set by the live cases too."""
    return list(dict.fromkeys(n for n in (th.constant, th.local) if n))


def why_constant(th) -> str:
    """Why the demoted ``th`` is no parameter and gets no test (``param_coverage``, gate 1's findings)."""
    if th.cancels:
        return f"`{th.constant}` (a constant in evolved.go, not a parameter): {th.reason}, so no test can exercise it"
    return reason(th.constant, *th.dead_branch)


def reason(constant: str, line: int, guard: str) -> str:
    """Why ``constant`` is no parameter and gets no test: the branch it acts in is for a class the plugin never
    receives."""
    return (
        f"`{constant}` (a constant in evolved.go, not a parameter): it acts only in the branch on `{guard}` (line "
        f"{line}), for an SLO class the plugin never receives (it reads the class from the request's llm-d "
        "priority: critical, standard or sheddable), so it cannot change an outcome in llm-d and no test can "
        "exercise it"
    )


def no_effect(line: int, guard: str) -> str:
    """Why setting it at gate 1 changes no decision (``bot.review.change_request``): the clause after "no effect"."""
    return (
        f"it acts only in the branch on `{guard}` (evolved line {line}), for an SLO class the plugin never receives "
        "(it reads the class from the request's llm-d priority: critical, standard or sheddable)"
    )


def demote(an: Analysis, reserved: set[str], d) -> None:
    """Make every parameter that cannot act in llm-d a constant of the carried code (``th.constant``, no longer
    ``th.param``): one that acts only in a branch the plugin never enters, or (by the dictionary ``d``) only on
    signals llm-d cannot provide; and drop its simulator-scale findings: a number that never acts in llm-d has no
    scale to re-calibrate. ``reserved``: the package-level names the generator declares."""
    dead = unreachable_params(an)
    inert = {th.param: sigs for th in an.thresholds if (sigs := inert_signals(th, d))}
    cancels = order_keys.cancelling(an)  # added to every candidate's key, which is compared only between them
    if not (dead or inert or cancels) or an.src is None:
        return
    taken = set(reserved)
    for node in walk(an.src.tree.root_node):
        if node.type in ("identifier", "field_identifier", "type_identifier"):
            name = node.text.decode("utf-8", "replace")
            taken |= {name, lower_camel(name)}  # a carried helper is renamed to lowerCamel
    for th in an.thresholds:
        if th.param not in dead and th.param not in inert and th.param not in cancels:
            continue
        if th.param in cancels and th.param not in dead and th.param not in inert:
            th.cancels = cancels[th.param]
            name = order_keys.constant_name(th.cancels, taken)  # named by the key: slack -> baseSlack
        else:
            name = th.param if th.param not in taken else th.param + "Evolved"
        taken.add(name)
        th.constant = name
        if th.cancels:
            th.reason = order_keys.cancel_reason(an, th)
        elif th.param in dead:
            th.dead_branch = dead[th.param]
            th.reason = f"acts only in the branch on `{dead[th.param][1]}`, an SLO class llm-d never sends this plugin"
        else:
            th.inert = tuple(inert[th.param])
            th.reason = f"{no_source(th.inert)} (always 0)"
        an.findings = [f for f in an.findings if not (f.check == SIM_SCALE and f.param == th.param)]
        th.param, th.field = None, None


def constants(an: Analysis) -> list[dict]:
    """The constants evolved.go declares for the demoted numbers: name, Go type, evolved value, the comment."""
    return [
        {
            "name": th.constant,
            "type": th.go_type or "float64",
            "value": go_value(th.value, th.go_type),
            "comment": order_keys.cancel_comment(an, th) if th.cancels else constant_comment(th),
        }
        for th in an.thresholds
        if th.constant
    ]


def constant_comment(th) -> str:
    """The one line above the constant in evolved.go: why it is no parameter (the classes its branch tests, or the
    signals llm-d cannot provide)."""
    if th.inert:
        return f"{th.constant} {no_source(th.inert)} (always 0)."
    if th.cancels:
        return f"{th.constant} is {th.reason.removeprefix('it is ')}."
    if th.dead_branch[1] == "default:":  # its switch names every class llm-d sends: the rest never come
        return f"{th.constant} acts only in the default arm, for SLO classes llm-d never sends this plugin."
    if th.dead_branch[1] == "else":  # so does its if/else chain
        return f"{th.constant} acts only past an if/else chain naming every class llm-d sends, for SLO classes it never sends."
    classes = [f'SLO class "{c}"' if c else "the empty SLO class" for c in re.findall(r'"([^"]*)"', th.dead_branch[1])]
    which = " or ".join(dict.fromkeys(classes)) or "an SLO class"
    return f"{th.constant} acts only for {which}, which llm-d never sends this plugin."


#: The classes the plugin's SLO class can take for the request it decides on (from its llm-d priority).
_RECEIVED = {"critical", "standard", "sheddable"}


def arm_comments(an: Analysis) -> dict[int, str]:
    """End-of-line comments (by the byte offset of the line's end) for the ``case`` arms of a switch on the SLO
    class that the plugin never takes for the request it decides on: an arm whose every class llm-d never sends,
    and the ``default`` of a switch whose other arms name every class it does send; and the fallback of an if/else
    chain naming every such class (its last ``else``, the code after a chain whose branches all return)."""
    lines = {f.source_line for f in an.findings if f.check == UNREACHABLE_SLO and f.severity == Severity.IMPORTANT}
    if not lines or an.src is None:
        return {}
    queued = an.kind.value == "scheduling"
    never = (
        "never the request being placed: llm-d yields critical, standard or sheddable"
        if queued
        else "never taken: llm-d yields critical, standard or sheddable"
    )
    out: dict[int, str] = {}
    for node in walk(an.src.tree.root_node):
        fallback = class_fallback(node, lambda n: text_of(an.src, n)) if node.type == "if_statement" else None
        if fallback is not None and an.line_of(fallback[0]) in lines:
            eol = _end_of_line(an.src.go_bytes, fallback[0].start_byte + (1 if fallback[0].type == "block" else 0))
            if eol is not None:
                out[eol] = f" // {never}" if fallback[0].type == "block" else f" // {never.replace('taken', 'reached')}"
        if node.type != "expression_switch_statement":
            continue
        arms = [c for c in node.named_children if c.type in ("expression_case", "default_case")]
        cases = [c for c in arms if c.type == "expression_case"]
        dead = [c for c in cases if an.line_of(c) in lines]
        if not dead:
            continue
        named = {_string(v) for c in cases for v in _values(c)}
        for arm in arms:
            if arm in dead or (arm.type == "default_case" and named >= _RECEIVED):
                eol = _line_end(an.src.go_bytes, arm)
                if eol is not None:
                    out[eol] = f" // {never}"
    return out


def _values(case: Node) -> list[Node]:
    value = case.child_by_field_name("value")
    return [] if value is None else (value.named_children if value.type == "expression_list" else [value])


def _string(node: Node) -> str | None:
    text = node.text.decode("utf-8", "replace")
    return text[1:-1] if node.type == "interpreted_string_literal" and len(text) >= 2 else None


def _line_end(data: bytes, arm: Node) -> int | None:
    """The end of the line holding the arm's ``:``, None when that line already carries a comment."""
    colon = next((c for c in arm.children if c.type == ":"), None)
    return None if colon is None else _end_of_line(data, colon.end_byte)


def _end_of_line(data: bytes, start: int) -> int | None:
    """The end of the line holding ``start``, None when a comment follows ``start`` on it."""
    end = data.find(b"\n", start)
    end = len(data) if end < 0 else end
    return None if b"//" in data[start:end] or b"/*" in data[start:end] else end
