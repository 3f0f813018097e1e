"""Carrying the evolved code into the plugin: the same declarations, renamed to the plugin's types.

``carry_function``/``carry_type`` copy one top-level declaration from the evolved file with a list of
byte-range edits applied: BLIS types to the plugin's local types, ``PendingRequests`` to
``InFlightRequests``, ``len(req.InputTokens)`` to the adapter's token count, evolved numbers to
``Parameters`` fields. Everything else is as evolved, so a reviewer can diff it line by line.
Hypothesis-mode comments (``EVOLVE-BLOCK``, ``HYPOTHESIS-n``, ``MECHANISM-n``, ``EXPECT-n``) are
blanked: they describe the simulation run and are kept in the translation report instead.

``watch_edits`` wraps the subject of every threshold comparison in ``promotionWatch(...)`` (a helper's comparison
with a number its callers pass in ``promotionWatchIf(...)``, arg_thresholds.py): used only for the harness copy of
the plugin, so test inputs can be chosen from the values the compiled logic really compares (never shipped).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.golang import arg_thresholds
from bot.golang.analysis_types import (
    SHIMMED_FUNCS,
    SHIMMED_TYPES,
    SLO_PRIORITY_FUNCS,
    Analysis,
    Node,
    Occurrence,
    Threshold,
)
from bot.golang.gonames import lower_camel
from bot.golang.gotree import named, text_of, walk
from bot.golang.local_consts import carried_decl
from bot.golang.package_vars import decl_specs
from bot.golang.source import EvolvedSource

MARKER_COMMENT = re.compile(r"^//\s*(EVOLVE-BLOCK-(START|END)|(HYPOTHESIS|MECHANISM|EXPECT)-\d+\s*:)")


@dataclass
class Edit:
    start: int
    end: int
    text: str


@dataclass
class Carried:
    """One top-level declaration carried from the evolved file, with its edits applied."""

    text: str
    source_start_line: int  # original line of the first line
    node_start: int
    mapped_lines: int | None = None  # how many leading lines map 1:1 to the source (None: all)


GENERATED_NAMES = {
    "Parameters",
    "DefaultParameters",
    "ScorerConfig",
    "newRoutingSnapshot",
    "newBlisRequest",
    "newRouterState",
    "endpointID",
    "newScorer",
    "scorePrefixAffinity",
    "scorePrecisePrefixCache",
    "scoreActiveRequests",
    "scoreRunningRequests",
    "scoreLoadAware",
    "scoreVLLMDP",
    "invertedMinMax",
    "baselineScorers",
    "promotionWatch",
    "promotionWatchIf",
    "scoreQueueDepth",
    "scoreKVUtilization",
    "scoreLoadBalance",
    "normalizeWeights",
    "endpointScores",
    "choiceGap",
    "routingSnapshot",
    "blisRequest",
    "routerState",
    "routingDecision",
    "newRoutingDecision",
    "newRoutingDecisionWithScores",
    "scorerFunc",
    "observerFunc",
    "tokenID",
    "newPolicy",
    "incumbent",
    "queuePosition",
    "evolvedPanicSite",
    "goruntime",
    *SHIMMED_TYPES.values(),
    *SLO_PRIORITY_FUNCS.values(),
}


@dataclass
class GoNames:
    types: dict[str, str] = field(default_factory=dict)  # original -> generated (type identifiers)
    idents: dict[str, str] = field(default_factory=dict)  # original -> generated (value identifiers: funcs)
    receiver: str = "evolvedPolicy"
    receiver_var: dict[int, str] = field(default_factory=dict)  # method node start -> receiver var used for params


def plan_names(src: EvolvedSource, an: Analysis, plugin_struct: str) -> GoNames:
    names = GoNames()
    reserved = set(GENERATED_NAMES) | {plugin_struct, plugin_struct + "Type", plugin_struct + "Factory"}
    reserved.add("New" + plugin_struct)
    names.types.update(SHIMMED_TYPES)
    names.idents.update(SHIMMED_FUNCS)
    names.idents.update(SLO_PRIORITY_FUNCS)
    host = an.host_info
    assert host is not None
    recv = host.receiver_type or "evolvedPolicy"
    gen = lower_camel(recv)
    if gen in reserved:
        gen += "Evolved"
    names.receiver = gen
    names.types[recv] = gen
    for spec in an.types:
        nm = text_of(src, spec.child_by_field_name("name"))
        new = lower_camel(nm)
        if new in reserved or new in names.types.values():
            new += "Evolved"
        names.types[nm] = new
    for f in an.helpers + ([an.constructor] if an.constructor else []):
        if f.receiver_type is None:
            new = lower_camel(f.name)
            if new in reserved:
                new += "Evolved"
            names.idents[f.name] = new
    return names


def _param_ref(params: str, th: Threshold) -> str:
    return f"{params}.{th.field}"


#: Prefix of the reason a number in a function without a receiver keeps its literal; ``thread_params`` lifts
#: it when the Parameters can be passed in.
HELPER_REASON = "inside helper function "


def thread_params(src: EvolvedSource, an: Analysis) -> None:
    """Values a function without a receiver chooses by a condition, such as the per-class values it returns
    (``func weightFor(c string) float64 { switch c { case "critical": return 0.9 ...``), are parameters too: the
    plugin passes its Parameters in as the first argument (``threaded_helpers``). Only when every use of the
    function is a direct call from a method of the policy's type, which holds the Parameters; otherwise they keep
    their literal and the reason says why."""
    host = an.host_info
    if host is None or host.receiver_type is None:
        return
    helpers = {f.label: f for f in an.helpers if f.receiver_type is None}
    for th in an.thresholds:
        owner = helpers.get(th.occurrences[0].owner or "") if th.occurrences else None
        if th.role != "value" or not (th.reason or "").startswith(HELPER_REASON) or owner is None:
            continue
        if _called_only_by(src, owner.name, host.receiver_type):
            th.reason = None


def _called_only_by(src: EvolvedSource, name: str, receiver_type: str) -> bool:
    """Every use of function ``name`` in the file is a call in a method of ``receiver_type``, outside any function
    literal whose parameter hides the receiver (there ``recv.params`` would name the parameter)."""
    for n in walk(src.tree.root_node):
        if n.type != "identifier" or text_of(src, n) != name or n.parent is None:
            continue
        if n.parent.type == "function_declaration" and n.parent.child_by_field_name("name") == n:
            continue
        if n.parent.type != "call_expression" or n.parent.child_by_field_name("function") != n:
            return False
        method, literal_params = n.parent, set()
        while method is not None and method.type not in ("method_declaration", "function_declaration"):
            if method.type == "func_literal" and (plist := method.child_by_field_name("parameters")) is not None:
                literal_params |= {text_of(src, c) for d in named(plist) for c in d.children if c.type == "identifier"}
            method = method.parent
        recv = method.child_by_field_name("receiver") if method is not None else None
        if method is None or method.type != "method_declaration" or recv is None:
            return False
        decl = next((c for c in named(recv) if c.type == "parameter_declaration"), None)
        typ = text_of(src, decl.child_by_field_name("type")).lstrip("*").strip() if decl is not None else ""
        recv_name = decl.child_by_field_name("name") if decl is not None else None
        if typ != receiver_type or (recv_name is not None and text_of(src, recv_name) in literal_params):
            return False
    return True


def threaded_helpers(an: Analysis) -> set[str]:
    """Functions without a receiver that hold a parameter (``thread_params``): the plugin passes them its
    Parameters."""
    labels = {f.label for f in an.helpers if f.receiver_type is None}
    return {o.owner for th in an.thresholds if th.param for o in th.occurrences if o.owner in labels}


def carry_function(
    src: EvolvedSource, an: Analysis, f, names: GoNames, extra: list[Edit] | None = None, *, instrument: bool = False
) -> Carried:
    node = f.node
    edits: list[Edit] = list(extra or [])
    edits += marker_edits(src, node)
    if instrument:
        edits += watch_edits(src, an, node)
    recv_var = f.receiver_var
    if f.receiver_type is not None and recv_var is None:
        # unnamed receiver: name it so the parameters can be reached
        recv = node.child_by_field_name("receiver")
        decl = next(c for c in recv.children if c.type == "parameter_declaration")
        t = decl.child_by_field_name("type")
        body_text = text_of(src, node.child_by_field_name("body"))
        recv_var = "p" if not re.search(r"\bp\b", body_text) else "evolvedReceiver"
        name_node = decl.child_by_field_name("name")
        if name_node is not None:  # `_`
            edits.append(Edit(name_node.start_byte, name_node.end_byte, recv_var))
        else:
            edits.append(Edit(t.start_byte, t.start_byte, recv_var + " "))
    names.receiver_var[node.start_byte] = recv_var or ""
    threaded = threaded_helpers(an)
    params = f"{recv_var}.params" if f.receiver_type is not None else None
    if f.label in threaded:
        body_text = text_of(src, node)
        params = "params" if not re.search(r"\bparams\b", body_text) else "evolvedParams"
        plist = node.child_by_field_name("parameters")
        edits.append(
            Edit(plist.start_byte + 1, plist.start_byte + 1, f"{params} Parameters" + (", " if named(plist) else ""))
        )
    edits += _common_edits(src, an, node, names, params, threaded)
    start = _leading_comment_start(node)
    if f.receiver_type is None:
        edits += _doc_name_edits(src, start, f.name, names.idents.get(f.name, f.name))
    return Carried(
        _apply(src, start.start_byte, node.end_byte, edits),
        src.to_original_line(start.start_point[0] + 1),
        node.start_byte,
    )


def _doc_name_edits(src: EvolvedSource, doc, old: str, new: str) -> list[Edit]:
    """A doc comment begins with the name it documents (Go's convention, which godoc and linters read): the one
    of a renamed declaration gets the new name (``// SLOAgingScheduler orders`` above ``type sloAgingScheduler``).
    The rest of the comment is as evolved."""
    if doc.type != "comment" or old == new:
        return []
    m = re.match(rf"//\s*({re.escape(old)})\b", text_of(src, doc))
    if m is None:
        return []
    start = doc.start_byte + len(text_of(src, doc)[: m.start(1)].encode("utf-8"))
    return [Edit(start, start + len(old.encode("utf-8")), new)]


def _leading_comment_start(node):
    """The first of the comment lines directly above a declaration (its doc comment), else the node."""
    first = node
    prev = node.prev_sibling
    while prev is not None and prev.type == "comment" and prev.end_point[0] + 1 >= first.start_point[0]:
        first = prev
        prev = prev.prev_sibling
    return first


def _common_edits(
    src: EvolvedSource, an: Analysis, node, names: GoNames, params: str | None, threaded: set[str] = frozenset()
) -> list[Edit]:
    """Renames, the adapter's token counts, evolved numbers to ``params``' fields (``p.params``, or the argument
    a threaded helper takes, ``thread_params``) and that argument passed at each call of a threaded helper."""
    edits: list[Edit] = []
    for n in walk(node):
        t = n.type
        if t == "type_identifier":
            nm = text_of(src, n)
            if nm in names.types and names.types[nm] != nm:
                edits.append(Edit(n.start_byte, n.end_byte, names.types[nm]))
        elif t == "identifier":
            nm = text_of(src, n)
            parent = n.parent
            read = an.const_reads.get(n.start_byte)  # a package constant's number, now a parameter or a constant
            if read is not None and (read.constant or (read.param and params)):
                edits.append(Edit(n.start_byte, n.end_byte, read.constant or _param_ref(params or "", read)))
            elif nm in names.idents and names.idents[nm] != nm:
                edits.append(Edit(n.start_byte, n.end_byte, names.idents[nm]))
            elif (
                nm in names.types
                and names.types[nm] != nm
                and parent is not None
                and parent.type in ("composite_literal", "call_expression", "type_conversion_expression")
            ):
                edits.append(Edit(n.start_byte, n.end_byte, names.types[nm]))
        elif t == "const_declaration" and params and (decl := carried_decl(src, an, n, params)) is not None:
            edits.append(Edit(n.start_byte, n.end_byte, decl))  # `const windowUs = 2_000_000`, now a parameter
        elif t == "field_identifier" and text_of(src, n) == "PendingRequests":
            edits.append(Edit(n.start_byte, n.end_byte, "InFlightRequests"))
        elif t == "call_expression":
            fn = n.child_by_field_name("function")
            args = n.child_by_field_name("arguments")
            if params and fn is not None and fn.type == "identifier" and text_of(src, fn) in threaded:
                more = ", " if args is not None and named(args) else ""
                edits.append(Edit(args.start_byte + 1, args.start_byte + 1, params + more))
            if fn is not None and text_of(src, fn) == "len" and args is not None and len(named(args)) == 1:
                a = named(args)[0]
                if a.type == "selector_expression":
                    fld = text_of(src, a.child_by_field_name("field"))
                    if fld in ("InputTokens", "OutputTokens"):
                        edits.append(Edit(n.start_byte, a.start_byte, ""))
                        edits.append(
                            Edit(
                                a.child_by_field_name("field").start_byte,
                                n.end_byte,
                                "numInputTokens" if fld == "InputTokens" else "numOutputTokens",
                            )
                        )
        elif t in ("int_literal", "float_literal", "unary_expression"):
            th = an.literal_nodes.get(n.start_byte)
            if (
                th is not None
                and th.constant
                and any(o.start == n.start_byte and o.end == n.end_byte for o in th.occurrences)
                and not _inside_const(n)
            ):
                edits.append(Edit(n.start_byte, n.end_byte, th.constant))
            elif (
                th is not None
                and th.param
                and params
                and any(o.start == n.start_byte and o.end == n.end_byte for o in th.occurrences)
            ) and not _inside_const(n):
                edits.append(Edit(n.start_byte, n.end_byte, _param_ref(params, th)))
    return edits


def made_fields(src: EvolvedSource, an: Analysis, names: GoNames | None) -> str:
    """Go lines making each receiver map or slice that BLIS's uncarried constructor makes empty
    (``Analysis.made_fields``), after the receiver is built: in the plugin's names for newPolicy, in the program's
    (``names`` None) for the harness's BLIS receiver. Left nil, the evolved code's first write would panic."""
    lines = [
        f"\tp.{f} = "
        + (_apply(src, v.start_byte, v.end_byte, _common_edits(src, an, v, names, None)) if names else text_of(src, v))
        for f, v in an.made_fields.items()
    ]
    if not lines:
        return ""
    return "\n\t// Made as BLIS's constructor, which the plugin does not carry, makes them.\n" + "\n".join(lines)


def _inside_const(n) -> bool:
    p = n.parent
    while p is not None:
        if p.type == "const_declaration":
            return True
        p = p.parent
    return False


def _apply(src: EvolvedSource, start: int, end: int, edits: list[Edit]) -> str:
    data = src.go_bytes
    inside = sorted((e for e in edits if start <= e.start and e.end <= end), key=lambda e: (e.start, e.end))
    out: list[bytes] = []
    pos = start
    for e in inside:
        if e.start < pos:  # overlapping edit: the outer one already replaced this range
            continue
        out.append(data[pos : e.start])
        out.append(e.text.encode("utf-8"))
        pos = e.end
    out.append(data[pos:end])
    return b"".join(out).decode("utf-8")


def carry_type(src: EvolvedSource, an: Analysis, spec, names: GoNames, add_params: bool) -> Carried:
    edits = _common_edits(src, an, spec, names, None)
    decl = spec.parent if spec.parent is not None and spec.parent.type == "type_declaration" else spec
    doc = (
        _leading_comment_start(decl)
        if decl is not spec and len([c for c in decl.children if c.type == "type_spec"]) == 1
        else spec
    )
    name = text_of(src, spec.child_by_field_name("name"))
    renamed = _doc_name_edits(src, doc, name, names.types.get(name, name))
    prefix = _apply(src, doc.start_byte, decl.start_byte, renamed) if doc is not spec else ""
    text = _apply(src, spec.start_byte, spec.end_byte, edits)
    mapped = (prefix + "type " + text).count("\n") + 1
    if add_params:
        mapped -= 1  # the closing brace moves below the inserted field
        t = spec.child_by_field_name("type")
        if t is not None and t.type == "struct_type":
            idx = text.rfind("}")
            inner = text[:idx].rstrip()
            if inner.endswith("{"):
                text = inner + "\n\tparams Parameters\n}"
            else:
                text = (
                    inner + "\n\n\t// params are the plugin parameters (the evolved numbers).\n\tparams Parameters\n}"
                )
    first = doc if doc is not spec else spec
    return Carried(prefix + "type " + text, src.to_original_line(first.start_point[0] + 1), spec.start_byte, mapped)


def carry_const(src: EvolvedSource, an: Analysis, decl, names: GoNames) -> Carried:
    """A package-level ``const`` or ``var`` declaration the carried code names, as evolved
    (``package_consts.carried_consts``); a name of its group now read from a parameter is a comment there, on its
    line, so the lines still map."""
    edits = _common_edits(src, an, decl, names, None)
    lifted = {th.const_decl: th for th in an.const_reads.values() if th.param or th.constant}
    for spec in decl_specs(decl):
        th = next((lifted[text_of(src, c)] for c in spec.children if text_of(src, c) in lifted), None)
        if th is not None:
            now = f"the parameter {th.param}" if th.param else f"the constant {th.constant}"
            said, end = _trailing_comment(src, spec)  # its own comment, said once after (`// a = 1: now ...: why`)
            written = " ".join(text_of(src, spec).split())
            edits.append(Edit(spec.start_byte, end, f"// {written}: now {now}" + (f": {said}" if said else "")))
    start = _leading_comment_start(decl)
    return Carried(
        _apply(src, start.start_byte, decl.end_byte, edits),
        src.to_original_line(start.start_point[0] + 1),
        decl.start_byte,
    )


def _trailing_comment(src: EvolvedSource, spec) -> tuple[str, int]:
    """The text of the comment that ends ``spec``'s line (without its ``//``) and where it ends; ("", the spec's end)
    when none does."""
    after = spec.next_sibling
    if after is None or after.type != "comment" or after.start_point[0] != spec.end_point[0]:
        return "", spec.end_byte
    said = text_of(src, after).strip()
    return (said[2:].strip(), after.end_byte) if said.startswith("//") else ("", spec.end_byte)


#: What a hypothesis-mode comment alone on its line becomes: ``gofiles.drop_marker_lines`` removes the line where it
#: opens or closes a body (a blank line there is scaffolding residue) and blanks it elsewhere. A comment, so a copy
#: that kept it would still compile.
MARKER_LINE = "//__PROMOTION_MARKER_LINE__"


def marker_edits(src: EvolvedSource, node) -> list[Edit]:
    """Blank the hypothesis-mode comments inside a declaration (one alone on its line becomes ``MARKER_LINE``)."""
    data = src.go_bytes
    out = []
    for n in walk(node):
        if n.type != "comment" or not MARKER_COMMENT.match(text_of(src, n)):
            continue
        before = data[data.rfind(b"\n", 0, n.start_byte) + 1 : n.start_byte]
        after_end = data.find(b"\n", n.end_byte)
        after = data[n.end_byte : after_end if after_end >= 0 else len(data)]
        alone = not before.strip() and not after.strip()
        out.append(Edit(n.start_byte, n.end_byte, MARKER_LINE if alone else ""))
    return out


def watch_id(th: Threshold, line: int) -> str:
    return f"{th.param}@{line}"


def watch_edits(src: EvolvedSource, an: Analysis, node) -> list[Edit]:
    """Wrap each threshold comparison's subject inside ``node`` in promotionWatch(id, subject)."""
    edits: list[Edit] = []
    lo, hi = node.start_byte, node.end_byte
    passed: dict[int, list[tuple[Node, Occurrence, str, str]]] = {}  # a helper's comparison -> the numbers passed
    for th in an.thresholds:
        if not th.param:
            continue
        for occ in th.occurrences:
            cond = an.cond_nodes.get(occ.cond_id) if occ.role == "threshold" and occ.cond_id is not None else None
            if cond is not None and occ.param and lo <= cond.start_byte < hi:  # passed to a helper comparing it
                passed.setdefault(cond.start_byte, []).append((cond, occ, watch_id(th, occ.line), th.literal))
                continue
            if cond is None or occ.param or not (lo <= occ.start < hi):
                continue
            left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
            subject = right if left is not None and left.start_byte <= occ.start < left.end_byte else left
            if th.local and left is not None and text_of(src, left).strip() == th.local:
                subject = right  # a lifted local's literal is at its declaration, not in the comparison

            if subject is None:
                continue
            edits.append(Edit(subject.start_byte, subject.start_byte, f'promotionWatch("{watch_id(th, occ.line)}", '))
            edits.append(Edit(subject.end_byte, subject.end_byte, ")"))
    for watches in passed.values():
        edits += [Edit(at, at, text) for at, text in arg_thresholds.watch(src, watches)]
    return edits
