"""Parameters that only act in a branch the plugin never enters in llm-d: a case for an SLO class it never receives.

The plugin reads the SLO class from the request's llm-d priority, which yields only critical, standard or
sheddable (``hazard.unreachable-slo-branch`` flags the comparisons with batch, background or the empty
class, and the ``default`` of a switch whose cases name all three). A parameter compared or combined only inside
such a branch (``case "batch": if loadRatio > batchLimit``, ``if c == "batch" { p = 1.25*p }``, ``default: w = 0.4``
beside cases for critical, standard and sheddable), or a factor that only scales such a limit
(``batchLimit *= 0.8``), cannot change an outcome in llm-d: no generated test can exercise it, the report says why
instead of "no input among the candidates made it decide", the config, the Go doc and the README mark it dead
instead of tunable, and gate 1 answers a ``param`` line for it that it has no effect.
"""

from __future__ import annotations

from bot.golang.analysis_types import Analysis, Node
from bot.golang.gotree import walk
from bot.golang.hazards import UNREACHABLE_SLO
from bot.model import Severity


def _spans(an: Analysis) -> list[tuple[int, int, str]]:
    """(first line, last line, what it tests) of every branch guarded by an unreachable class: a switch case
    on the class, or an ``if`` whose condition requires it (``c == "batch" && perInstance > 2``), condition
    included."""
    lines = {f.source_line for f in an.findings if f.check == UNREACHABLE_SLO and f.severity == Severity.IMPORTANT}
    if not lines or an.src is None:
        return []
    out = []
    for node in walk(an.src.tree.root_node):
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
        row, column = body.end_point
        last = an.src.to_original_line(row + (1 if column else 0))  # a case ends where the next one starts
        label = {"expression_case": f"case {what}", "default_case": "default:"}.get(node.type, what)
        out.append((an.line_of(node), last, label))
    return out


def unreachable_params(an: Analysis) -> dict[str, tuple[int, str]]:
    """Parameter -> (line, guard) of the unreachable-class branch holding every comparison it takes part in."""
    spans = _spans(an)
    if not spans:
        return {}
    out: dict[str, tuple[int, str]] = {}
    for th in an.thresholds:
        # Where it acts: the comparison it takes part in, or the line of the expression it is a number of (a
        # coefficient in `p = math.Min(1, 1.25*p)` inside `if req.SLOClass == "batch"`).
        lines = [an.line_of(an.cond_nodes[o.cond_id]) if o.cond_id in an.cond_nodes else o.line for o in th.occurrences]
        where = [next((s for s in spans if s[0] <= line <= s[1]), None) for line in lines]
        if th.param and where and all(where):
            out[th.param] = (where[0][0], where[0][2])
    # A factor or step on a limit only such a branch compares acts only there too.
    limits = {th.local: out[th.param] for th in an.thresholds if th.local and th.param in out}
    for th in an.thresholds:
        if th.param and th.target in limits:
            out.setdefault(th.param, limits[th.target])
    return out


def reason(param: str, line: int, guard: str) -> str:
    """Why ``param`` gets no test: the branch it acts in is for a class the plugin never receives."""
    return (
        f"`{param}`: it acts only in the branch on `{guard}` (line {line}), for an SLO class the plugin never "
        "receives (it reads the class from the request's llm-d priority: critical, standard or sheddable), "
        "so it cannot change an outcome in llm-d and no test can exercise it"
    )


def no_effect(line: int, guard: str) -> str:
    """Why setting it at gate 1 changes no decision (``bot.review.change_request``): the clause after "no effect"."""
    return (
        f"it acts only in the branch on `{guard}` (evolved line {line}), for an SLO class the plugin never receives "
        "(it reads the class from the request's llm-d priority: critical, standard or sheddable)"
    )


def dead_doc(line: int, guard: str) -> str:
    """The sentence a parameter's doc ends with when it acts only in a branch the plugin never enters."""
    return (
        f"No effect in llm-d: it acts only in the branch on `{guard}` (evolved line {line}), for an SLO class the "
        "plugin never receives (it reads the class from the request's llm-d priority: critical, standard or "
        "sheddable), so changing it changes no decision; it stays so the evolved logic is carried as it was."
    )


def dead_note(param: str, guard: str) -> str:
    """The comment above its line in the EndpointPickerConfig."""
    return f"{param}: acts only in the branch on `{guard}`, an SLO class llm-d never sends this plugin: no effect here."
