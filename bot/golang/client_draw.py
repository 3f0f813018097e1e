"""``hazard.client-steerable-draw``: a draw that looks random in BLIS and is the client's to choose in llm-d.

Evolved programs hash a request value (``uniformFromID(req.ID)``, FNV of the session) to get a
"random" number that is the same on every replay, which is what a simulator wants. In llm-d the
request ID is the client's ``x-request-id`` as sent (the EPP makes one up only when it is absent),
and the session, the fairness ID and any header are the client's too: a client that reuses a value,
or tries values until one hashes high, picks its own draw (never shed, always first). Upstream's
probabilistic admitter draws from ``math/rand`` with an injectable source instead.

The walker records every call to a program function or a package that is passed a request-derived
value (``tainted-call``); this module keeps the calls whose callee hashes (calls a ``hash/*`` or
``crypto/*`` package, itself or through another carried function) and whose value is one the client
controls, by the dictionary's llm-d source.
"""

from __future__ import annotations

from bot.dictionary import Dictionary
from bot.golang.analysis_types import Analysis, FuncInfo
from bot.golang.gotree import text_of, walk
from bot.golang.source import EvolvedSource
from bot.model import Finding, Severity

CLIENT_DRAW = "hazard.client-steerable-draw"

#: What an llm-d source expression reads when the value comes from the client, unbounded: any header, the
#: fairness ID (itself a header, x-llm-d-inference-fairness-id) and the request ID (x-request-id as sent).
CLIENT_SOURCES = ("req.Headers", "req.FairnessID", "req.RequestID")


def client_keyed(entry) -> bool:
    """The signal's llm-d value comes straight from the client: any string it likes, new on every request."""
    return entry.llmd is not None and any(s in entry.llmd.expr for s in CLIENT_SOURCES)


def hash_package(path: str | None) -> bool:
    return path is not None and (path == "hash" or path.startswith(("hash/", "crypto/")))


def findings(src: EvolvedSource, an: Analysis, d: Dictionary, calls: list) -> list[Finding]:
    """One finding per call that hashes a client-controlled request value; ``calls`` are the walker's
    ``tainted-call`` nodes. A call inside a function that is itself flagged where it is called is left to
    that outer call (the line where the client's value enters)."""
    funcs = {f.label: f for f in [an.host_info, *an.helpers] if f is not None}
    hashing: dict[str, str | None] = {}
    flagged = []
    for node, info in calls:
        how = _hashes_via(src, an, funcs, info, hashing)
        client = [e for e in (d.signal(n, "request") for n in info["reads"]) if e is not None and client_keyed(e)]
        if how and client:
            flagged.append((node, info, how, client))
    outer = {info["callee"] for _, info, _, _ in flagged if info["callee"]}
    out = []
    for node, info, how, client in flagged:
        if info["within"] in outer:
            continue
        line = src.to_original_line(node.start_point[0] + 1)
        snippet = " ".join(text_of(src, node).split())[:80]
        names = ", ".join(f"{e.name} (llm-d: {_as_sent(e)})" for e in client)
        out.append(
            Finding(
                severity=Severity.IMPORTANT,
                check=CLIENT_DRAW,
                source_line=line,
                message=(
                    f"`{snippet}` draws a number from a hash of {names} ({how}), a value the client chooses: in BLIS "
                    "a hash is a replayable stand-in for a random draw, but in the EPP a client that reuses one value "
                    "(or tries values until one hashes the way it wants) gets the same draw on every request (an "
                    "admitter never sheds it, a scorer always favours the same endpoint), and one that retries a "
                    "refused request with the same value is refused every time"
                ),
                fix=(
                    "draw from math/rand (or math/rand/v2) per request, as upstream's probabilistic-admitter does "
                    "(rand.Float64()), and inject the source (a func() float64 field) so unit tests stay deterministic; "
                    "then re-run the fidelity check"
                ),
            )
        )
    return out


def _as_sent(entry) -> str:
    """The llm-d source, with what the EPP does to a request ID (nothing: it generates one only when absent)."""
    source = entry.llmd.source
    if "req.RequestID" in entry.llmd.expr:
        return f"{source}, taken as the client sent it; the EPP generates one only when it is absent"
    return source


def _hashes_via(src: EvolvedSource, an: Analysis, funcs: dict[str, FuncInfo], info: dict, memo: dict) -> str | None:
    """How the callee hashes (``hash/fnv``, ``uniformFromID calls hash/fnv``), or None."""
    if info["pkg"]:
        path = an.imports.get(info["pkg"])
        return path if hash_package(path) else None
    f = funcs.get(info["callee"] or "")
    return _function_hashes(src, an, funcs, f, memo) if f is not None else None


def _function_hashes(src: EvolvedSource, an: Analysis, funcs: dict, f: FuncInfo, memo: dict) -> str | None:
    """A carried function hashes when its body calls a hash/crypto package, or a carried function that does."""
    if f.label in memo:
        return memo[f.label]
    memo[f.label] = None  # recursion guard
    found = None
    for node in walk(f.node):
        if node.type != "call_expression" or found:
            continue
        fn = node.child_by_field_name("function")
        if fn is None:
            continue
        if fn.type == "selector_expression":
            operand = text_of(src, fn.child_by_field_name("operand"))
            field = text_of(src, fn.child_by_field_name("field"))
            if hash_package(an.imports.get(operand)):
                found = f"{f.name} calls {an.imports[operand]}"
            elif operand == f.receiver_var and f"{f.receiver_type}.{field}" in funcs:
                inner = _function_hashes(src, an, funcs, funcs[f"{f.receiver_type}.{field}"], memo)
                found = f"{f.name} calls {inner}" if inner else None
        elif fn.type == "identifier" and text_of(src, fn) in funcs and text_of(src, fn) != f.label:
            inner = _function_hashes(src, an, funcs, funcs[text_of(src, fn)], memo)
            found = f"{f.name} calls {inner}" if inner else None
    memo[f.label] = found
    return found
