"""The signal adapter: one assignment per BLIS signal, from what llm-d has, with its freshness note.

Each line's expression is the dictionary's (Map B) ``llmd.expr``; untranslatable signals get the
zero value the dictionary's fallback calls for, and the comment above every line says where the
value comes from, how fresh it is compared with BLIS, and which Track B hypothesis checks the gap.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.dictionary import Dictionary, SignalEntry
from bot.golang.analysis_types import Analysis
from bot.golang.data_keys import keyed
from bot.golang.gonames import comment_lines, lower_camel
from bot.golang.gotree import text_of, walk
from bot.golang.inert import dead_reads

#: The dictionary's wall-clock expression; the plugin reads its own clock (``now``) instead.
WALL_CLOCK_EXPR = "time.Now().UnixMicro()"


@dataclass
class AdapterLine:
    target: str  # Go lvalue inside the adapter, e.g. s.QueueDepth
    expr: str
    comment: str
    signal: str
    scope: str
    status: str  # mapped | untranslatable | unknown
    uses_req: bool = False
    uses_m: bool = False
    source_lines: list[int] = field(default_factory=list)
    helper: str | None = None  # helper func holding a multi-statement expression
    helper_type: str | None = None
    entry: SignalEntry | None = None
    helper_params: list[str] = field(default_factory=list)
    helper_body: str = ""
    uses_now: bool = False
    never_acts: str = ""  # the signals llm-d cannot provide that keep every condition reading it false

    @property
    def comment_lines(self) -> list[str]:
        """The annotation as comment lines above the assignment, within the line-length limit."""
        return comment_lines(self.comment)


_HEADER_READ = re.compile(r'\breq\.Headers\["([^"]+)"\]')


#: The header constants of llm-d-router v0.10.0's pkg/epp/metadata (consts.go) a Map B expression may read through
#: ``metadata.GetLowerCaseHeaderValue``, with the names that helper tries: the current one, then the deprecated alias.
METADATA_HEADERS = {
    "TTFTSLOHeaderKey": ("x-llm-d-slo-ttft-ms", "x-slo-ttft-ms"),
    "TPOTSLOHeaderKey": ("x-llm-d-slo-tpot-ms", "x-slo-tpot-ms"),
    "FlowFairnessIDKey": ("x-llm-d-inference-fairness-id", "x-gateway-inference-fairness-id"),
    "ObjectiveKey": ("x-llm-d-inference-objective", "x-gateway-inference-objective"),
}
_HELPER_READ = re.compile(r"\bmetadata\.GetLowerCaseHeaderValue\(req\.Headers, metadata\.(\w+)\)")


def request_headers(expr: str) -> list[str]:
    """The request headers a Map B expression reads, in the order it tries them (the current name before a
    deprecated alias): a signal that only exists where clients send them. Read by name or through llm-d's
    helper and constants."""
    names = [n for key in _HELPER_READ.findall(expr) for n in METADATA_HEADERS.get(key, ())]
    return list(dict.fromkeys(names + _HEADER_READ.findall(expr)))


def zero_value(go_type: str) -> str:
    if go_type in ("int", "int64", "int32", "float64", "float32", "uint64"):
        return "0"
    if go_type == "string":
        return '""'
    if go_type == "bool":
        return "false"
    return "nil"


def _annotation(entry: SignalEntry | None, status: str, name: str) -> str:
    """The comment above an adapter line, for an llm-d reader: where the value comes from and how fresh it
    is. The dictionary's provenance (BLIS commits and invariants, maps, hypotheses) stays in the
    translation report: shipped code refers to nothing outside the repository."""
    if status == "unknown":
        return f"UNMAPPED: {name} has no dictionary entry; zero only so the package compiles (hazard.unmapped-signal)."
    if status == "untranslatable":
        return f"{name} has no llm-d source: it stays at its zero value, so no branch on it fires."
    assert entry is not None and entry.llmd is not None
    text = f"{name}: {_short(plain(entry.llmd.source))}."
    if entry.freshness.gap:
        text += f" Freshness: {_short(plain(entry.freshness.llmd))}."
    return text


def waiting_comment(entry: SignalEntry | None) -> str:
    """The comment above a scheduling plugin's read of the waiting count, the one signal that drives its score:
    its source and freshness like an adapter line's, and what its age means for the modelled queue."""
    if entry is None or entry.llmd is None:
        return "QueueDepth: the endpoint's waiting requests, as the EPP scrapes them."
    return (
        _annotation(entry, "mapped", "QueueDepth")
        + " The count is up to a scrape old: requests placed on the endpoint since then are not in it."
    )


#: Provenance a shipped comment must not carry: commit hashes, BLIS invariants, the dictionary's maps,
#: hypothesis tracks and the tool it replaces.
_PROVENANCE = re.compile(r"\b(?:[0-9a-f]{7,40}|INV-\d+|Map [ABC]|Track [ABC]|sim2real|seed's|design doc)\b|#\d+\b")


def plain(text: str) -> str:
    """``text`` without parentheticals or sentences that cite provenance (see ``_PROVENANCE``)."""
    t = " ".join(text.split())
    t = re.sub(r"\s*\((?:[^()]|\([^()]*\))*\)", lambda m: "" if _PROVENANCE.search(m.group(0)) else m.group(0), t)
    sentences = [x for x in re.split(r"(?<=\.)\s+", t) if x and not _PROVENANCE.search(x)]
    return " ".join(sentences).strip()


def _short(text: str) -> str:
    t = " ".join(text.split())
    t = t.split(". ")[0].rstrip(".")
    first = t.split(" ", 1)[0] if t else ""
    # Lower-case a leading ordinary word ("Periodic" -> "periodic"), never an identifier (InFlightLoad).
    return t[0].lower() + t[1:] if re.fullmatch(r"[A-Z][a-z]+[:,]?", first) else t


def adapter_lines(an: Analysis, d: Dictionary) -> tuple[list[AdapterLine], list[AdapterLine], list[AdapterLine]]:
    """(snapshot lines, request lines, state lines) in a stable order."""
    first_lines: dict[tuple[str, str], list[int]] = {}
    for u in an.signals:
        first_lines.setdefault((u.scope if u.scope != "method" else "snapshot", u.name), []).append(u.line)
    snaps: list[AdapterLine] = []
    for name, typ in sorted(an.snapshot_fields.items()):
        if name == "ID":
            continue
        entry = d.signal(name, "snapshot")
        snaps.append(_line("s." + name, name, "snapshot", typ, entry, first_lines.get(("snapshot", name), [])))
    reqs: list[AdapterLine] = []
    dead = dead_reads(an, d, sorted(an.request_fields))
    for name, typ in sorted(an.request_fields.items()):
        entry = d.signal(name, "request")
        if name == "InputTokens":
            reqs.append(
                _line("r.numInputTokens", name, "request", "int", entry, first_lines.get(("request", name), []))
            )
            continue
        if name == "OutputTokens":
            reqs.append(
                AdapterLine(
                    "r.numOutputTokens",
                    "0",
                    "OutputTokens cannot be known before the response is generated: it stays 0.",
                    name,
                    "request",
                    "untranslatable",
                    source_lines=first_lines.get(("request", name), []),
                    entry=entry,
                )
            )
            continue
        line = _line("r." + name, name, "request", typ, entry, first_lines.get(("request", name), []))
        if name == "SessionID" and line.status == "mapped":
            line.comment += (
                ' The evolved code reads only its presence (!= "").'
                if presence_only(an, name)
                else " The evolved code uses its value (a key or a comparison), not only its presence."
            )
        if name in dead and line.status == "mapped":
            line.never_acts = dead[name]
            line.comment += (
                f" It changes no decision in llm-d: every condition that reads it also needs {dead[name]}, which "
                "llm-d cannot provide (0), above a threshold."
            )
        reqs.append(line)
    states: list[AdapterLine] = []
    for name, typ in sorted(an.state_fields.items()):
        entry = d.signal(name, "state")
        states.append(_line("state." + name, name, "state", typ, entry, first_lines.get(("state", name), [])))
    return snaps, reqs, states


def presence_only(an: Analysis, field: str) -> bool:
    """Every read of ``req.<field>`` in the carried code is compared with "" (``req.SessionID != ""``): the value
    itself decides nothing. A read kept in a local, used as a map key or compared with another value uses it."""
    src, fns = an.src, [an.host_info, *an.helpers]
    reads = [
        n
        for f in fns
        if f is not None and src is not None
        for n in walk(f.node)
        if n.type == "selector_expression" and text_of(src, n.child_by_field_name("field")) == field
    ]
    for n in reads:
        parent = n.parent
        if parent is None or parent.type != "binary_expression" or _op(src, parent) not in ("==", "!="):
            return False
        left, right = parent.child_by_field_name("left"), parent.child_by_field_name("right")
        if text_of(src, right if left == n else left).strip() != '""':
            return False
    return bool(reads)


def _op(src, node) -> str:
    return text_of(src, node.child_by_field_name("operator")).strip()


def _line(target: str, name: str, scope: str, typ: str, entry: SignalEntry | None, lines: list[int]) -> AdapterLine:
    if entry is None:
        return AdapterLine(
            target,
            zero_value(typ or "float64"),
            _annotation(None, "unknown", name),
            name,
            scope,
            "unknown",
            source_lines=lines,
        )
    if entry.llmd is None:
        return AdapterLine(
            target,
            zero_value(typ or entry.blis_type),
            _annotation(entry, "untranslatable", name),
            name,
            scope,
            "untranslatable",
            source_lines=lines,
            entry=entry,
        )
    expr = keyed(" ".join(entry.llmd.expr.split()))  # produced data under the configured producer's name
    uses_now = expr == WALL_CLOCK_EXPR
    if uses_now:  # the plugin's clock, so tests (and the harness) can set the time
        expr = "now"
    line = AdapterLine(
        target, expr, _annotation(entry, "mapped", name), name, scope, "mapped", source_lines=lines, entry=entry
    )
    line.uses_now = uses_now
    line.uses_req = bool(re.search(r"\breq\b", expr))
    line.uses_m = bool(re.search(r"\bm\b", expr))
    if "{" in expr:  # multi-statement expression: keep one adapter line per signal via a helper
        line.helper = f"{lower_camel(name)}Signal"
        line.helper_type = entry.go_type if entry.go_type != "[]TokenID" else "int"
        params = []
        if line.uses_m:
            params.append("m")
        if line.uses_req:
            params.append("req")
        if re.search(r"\bep\b", expr):
            params.append("ep")
        if re.search(r"\bendpoints\b", expr):
            params.append("endpoints")
        if re.search(r"\bkeys\.", expr):
            params.append("keys")
        line.expr = f"{line.helper}({', '.join(params)})"
        line.helper_params = params
        # A function literal called at once (the dictionary's one-line form) becomes the helper's own body.
        literal = re.fullmatch(r"func\(\)\s*\w+\s*\{(.*)\}\(\)", expr)
        line.helper_body = literal.group(1).strip() if literal else f"return {expr}"
    return line
