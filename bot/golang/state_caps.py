"""Caps on the receiver maps the evolved code fills with a key the client sends.

``hazards`` flags a receiver map written with a client-controlled key (the fairness ID, the session, a header) that
no carried code deletes, resets or caps (``hazard.unbounded-client-keyed-state``): in BLIS the simulated workload
bounded the keys; in the EPP, where one plugin instance lives as long as the EPP, any client grows the map, and the
EPP's memory, one entry per new value. An llm-d maintainer will not merge a plugin whose memory a client controls,
so the plugin bounds each such map itself: after every call into the evolved code (``capState``, deferred in the
method that makes the call, so a call that panicked is followed too), under the mutex that already serialises
those calls (a map is state, ``receiver_state``, so the plugin has one; no lock of its own). The cap is a parameter,
``maxTracked<Field>`` (default ``DEFAULT_CAP``, ``Validate()`` refuses a value <= 0), with a note in the
EndpointPickerConfig.

How it bounds: by evicting the entries least recently seen. When every client-keyed write of the map uses a field of
the request as is (``req.TenantID``, or a local set once from it; ``request_keys``), ``capState`` knows which entry
the request just touched: it moves that key to the back of a list kept beside the map (``keyRecency``, O(1)), and
once the map holds more than its cap it deletes the least recently touched tenth in one pass (so O(1) amortised per
request). Clearing the whole map, as an earlier version did, let one client that sends more distinct keys than the
cap wipe every tenant's state, bypassing the limiter; now such a flood evicts its own stale keys, and a client loses
its entry only if it stayed idle while about nine tenths of the cap's worth of new keys went through; it then starts
afresh, as a new client. When the key is something else (built from the field, computed in a helper), the plugin
cannot tell which entry a request touched, so it still clears the map, and says so. Either way only the flagged map
is touched: the rest of the receiver's state (a learned typical load, totals) is kept, since resetting it would
change decisions the map never touched; the finding names that state, because a figure that combines it with the
map (a total over the map's length) no longer matches BLIS's after an eviction. Below the cap the plugin decides
exactly as before, as the differential harness measures (its sampled keys are far fewer than the default cap). The
finding stays, as a SUGGESTION: the memory is bounded by construction, and what remains is a documented change past
the cap, on a key the client already chooses (it can always send a new one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.golang.gotree import text_of, walk
from bot.golang.hazards import UNBOUNDED_STATE
from bot.golang.params import ParamSpec
from bot.model import Finding, Severity

#: The default number of entries a capped map may hold between requests: far above the tenants or sessions of one
#: benchmark or a BLIS workload, far below what would make an EPP's memory matter (an entry is tens of bytes).
DEFAULT_CAP = 10000


@dataclass(frozen=True)
class StateCap:
    field: str  # the receiver map, as the carried code names it
    line: int  # the evolved line of its first client-keyed write (where the finding is)
    #: the request fields its client-keyed writes use as the key, as is (``request_keys``): the plugin touches them
    #: after each call and evicts the least recently touched entries; empty: it cannot tell, so it clears the map
    keys: tuple[str, ...] = ()
    map_type: str = ""  # the map's Go type, as the carried code declares it

    @property
    def param(self) -> str:
        return "maxTracked" + self.field[0].upper() + self.field[1:]

    @property
    def go_field(self) -> str:
        return self.param[0].upper() + self.param[1:]

    @property
    def key_type(self) -> str:
        m = re.match(r"map\[(\w+)\]", self.map_type)
        return m.group(1) if m else "string"

    @property
    def seen_as(self) -> str:
        """How a request carries the key, for the texts: "the request's TenantID"."""
        return "the request's " + " or ".join(self.keys)


def caps_of(an, state_fields) -> list[StateCap]:
    """The maps to cap: the flagged ones the plugin keeps as state (so calls into them already hold its lock)."""
    return [
        StateCap(f, line, request_keys(an, f), (an.receiver_fields.get(f) or "").strip())
        for f, line in sorted(an.client_keyed_maps.items())
        if f in set(state_fields)
    ]


def request_keys(an, field: str) -> tuple[str, ...]:
    """The request fields the client-keyed writes of ``field`` use as the key, when every one of them is, in the host
    method, ``req.F`` or a local set once from it (``tenantID := req.TenantID``), so ``capState`` can look up the
    entry a request touched; () when any is something else (built from the field, written in a helper)."""
    host = an.host_info
    writes = an.client_map_keys.get(field, [])
    if host is None or an.src is None or not writes:
        return ()
    requests = {n for n, t in host.params if t.strip().lstrip("*").rsplit(".", 1)[-1] == "Request"}
    keys = set()
    for within, key in writes:
        got = _request_field(an.src, host, requests, key) if within == host.label else None
        if got is None:
            return ()
        keys.add(got)
    return tuple(sorted(keys))


def _request_field(src, host, requests: set[str], key: str) -> str | None:
    """``F`` when ``key`` is ``req.F`` or a local the host sets exactly once, ``key := req.F``; else None."""
    m = re.fullmatch(r"(\w+)\.([A-Z]\w*)", key)
    if m:
        return m.group(2) if m.group(1) in requests else None
    if not re.fullmatch(r"\w+", key):
        return None
    sets = [n for n in walk(host.node) if key in _bound_by(src, n)]  # every statement binding or assigning it
    if len(sets) != 1 or sets[0].type != "short_var_declaration" or _bound_by(src, sets[0]) != [key]:
        return None
    right = sets[0].child_by_field_name("right")
    values = right.named_children if right is not None else []
    if len(values) != 1 or not re.fullmatch(r"\w+\.\w+", text_of(src, values[0])):
        return None
    return _request_field(src, host, requests, text_of(src, values[0]))


def _bound_by(src, node) -> list[str]:
    """The names a declaration, an assignment or a range clause sets ([] for any other node)."""
    if node.type not in ("short_var_declaration", "assignment_statement", "var_spec", "range_clause"):
        return []
    left = node.child_by_field_name("left") or node.child_by_field_name("name")
    if left is None:
        return []
    return [text_of(src, n) for n in (left.named_children if left.type == "expression_list" else [left])]


def param_spec(cap: StateCap) -> ParamSpec:
    how = (
        f"deletes the least recently seen tenth of its entries (a key is seen when {cap.seen_as} carries it), so "
        "a client that keeps sending keeps its entry, and one whose entry goes starts afresh, as a new client"
        if cap.keys
        else "clears it, so every key restarts as one the evolved code has never seen"
    )
    return ParamSpec(
        cap.param,
        cap.go_field,
        "int",
        str(DEFAULT_CAP),
        f"{cap.go_field} caps the evolved map `{cap.field}`, whose keys the client sends (not an evolved value): "
        f"after a call into the evolved code that leaves it with more entries, the plugin {how} (default "
        f"{DEFAULT_CAP}). Below the cap the plugin decides as BLIS does.",
        checks=[{"cond": f"p.{cap.go_field} <= 0", "message": f"{cap.param} must be > 0, got %v", "bad": 0}],
        json_default=DEFAULT_CAP,
    )


def config_note(cap: StateCap) -> str:
    past = "the least recently seen tenth is deleted" if cap.keys else "the map is cleared"
    return (
        f"{cap.param}: the most entries the plugin keeps in the evolved map `{cap.field}`, keyed by what the client "
        f"sends; past it {past} (not an evolved value). Set it above the distinct keys this deployment "
        "sees if the evolved decisions must hold for all of them."
    )


def cap_doc(caps: list[StateCap]) -> str:
    """The Go doc comment of ``capState``: what it does to each map, and why."""
    lru = [c.field for c in caps if c.keys]
    cleared = [c.field for c in caps if not c.keys]
    text = (
        f"capState bounds the evolved maps whose keys the client sends ({', '.join(c.field for c in caps)}): in "
        "BLIS the simulated workload bounded their keys, in the EPP any client could grow them, and the EPP's "
        "memory, without limit. Called after every call into the evolved code, under its lock."
    )
    if lru:
        text += (
            f" It marks the entry of {', '.join(lru)} the request touched as the most recent and, past the map's "
            "maxTracked parameter, deletes the least recently touched tenth: a client that sends more distinct "
            "keys than the cap evicts its own stale keys, not every tenant's state, and a client whose entry is "
            "evicted starts afresh, as a new client."
        )
    if cleared:
        text += (
            f" It clears {', '.join(cleared)} once it holds more entries than its maxTracked parameter allows: the "
            "evolved code's key there is not a request field as is, so the plugin cannot tell which entry a "
            "request touched; after a clear every key restarts as one the evolved code has never seen."
        )
    return text + " The rest of the receiver's state is kept. Below the cap nothing changes."


def check_line(main_go: str, field: str) -> int | None:
    """1-based line of the size check of ``field`` in the plugin file (``capState``)."""
    for i, line in enumerate(main_go.splitlines(), start=1):
        code = line.strip()
        if code.startswith("if len(") and f".policy.{field}) > " in code:
            return i
        if code.startswith("evictStalest(") and f".policy.{field}, " in code:
            return i
    return None


def capped_findings(findings: list[Finding], caps: list[StateCap], main_go: str, file_name: str, kept) -> list[Finding]:
    """The unbounded-state findings of the capped maps, saying the plugin caps them, with which parameter, and
    what an eviction does to decisions (``kept``: the other state fields, which it leaves as they are); the fix
    says where (``file_name``, the plugin's main file, and the line of its check)."""
    by_line = {c.line: c for c in caps}
    out = []
    for f in findings:
        cap = by_line.get(f.source_line) if f.check == UNBOUNDED_STATE else None
        at = check_line(main_go, cap.field) if cap is not None else None
        if cap is None or at is None:
            out.append(f)
            continue
        lru = "evictStalest(" in main_go.splitlines()[at - 1]
        head = f.message.split(", and no carried code", 1)[0]
        others = sorted(set(kept) - {c.field for c in caps})
        rest = (
            f"; the rest of the state it keeps ({', '.join(f'`{o}`' for o in others)}) is not evicted with it, so a "
            "figure that combines that state with the map (a total over its length, a share of a total) is no "
            f"longer BLIS's after {'an eviction' if lru else 'a clear'}"
            if others
            else ""
        )
        # Where the cap is goes in the fix, not the message: a finding's id digests its message, and the main
        # file is named for the plugin type while its lines move with every edit above (``Finding.identity``).
        where = "(capState)"
        span = "between two requests of its least active client" if lru else "over an EPP's life"
        does = (
            f"it notes that {cap.seen_as} was seen and, once `{cap.field}` holds more, deletes the least recently "
            f"seen tenth of its entries {where}; memory no longer grows with what clients send, and a client that "
            "sends more distinct keys than the cap evicts its own stale keys, not every tenant's state. Below the "
            "cap it decides as BLIS does; a client whose entry is evicted starts afresh, as a new client (its "
            "count, share or bucket starts over); residual risk: a flood of new keys evicts the state of clients "
            f"idle through it (about {DEFAULT_CAP - DEFAULT_CAP // 10} new keys between two of their requests)"
            if lru
            else f"it clears `{cap.field}` once it holds more {where}; memory no longer grows with what clients "
            "send. Below the cap it decides as BLIS does; past it every key restarts as one the evolved code has "
            "never seen (a tenant's count, share or bucket starts over)"
        )
        out.append(
            f.model_copy(
                update={
                    "severity": Severity.SUGGESTION,
                    "message": (
                        f"{head}, and no carried code deletes, resets or caps it: in the EPP the key is whatever the "
                        f"client sends, so the plugin caps the map at {DEFAULT_CAP} entries (parameter "
                        f"`{cap.param}`): after every call into the evolved code, under the lock that serialises "
                        f"those calls, {does}{rest}"
                    ),
                    "fix": (
                        f"set `{cap.param}` above the distinct keys this deployment sees "
                        f"{span} if "
                        "the evolved decisions must hold for all of them (memory grows with it), or bound the map in "
                        "the evolved code (evict with the rest of its windowed state, or key it by something "
                        "bounded) and re-run the evolution; the plugin caps it in capState, "
                        f"{file_name}:{at}"
                    ),
                }
            )
        )
    return out


def decisions(caps: list[StateCap]) -> list[tuple[str, str]]:
    """The translation report's entry for the caps: which eviction, and why that one."""
    if not caps:
        return []
    named = ", ".join(f"`{c.field}` (`{c.param}`, default {DEFAULT_CAP})" for c in caps)
    text = (
        f"The evolved code keeps maps keyed by a value the client sends: {named}. In the EPP any client could grow "
        "them, and the EPP's memory, without limit, so after every call into the evolved code, under the lock that "
        "serialises those calls, the plugin bounds each (capState)."
    )
    lru = [c for c in caps if c.keys]
    if lru:
        text += (
            f" For {', '.join(f'`{c.field}` (key: {c.seen_as})' for c in lru)} it moves the entry the request "
            "touched to the back of a list kept beside the map (O(1)) and, once the map holds more than its cap, "
            "deletes the least recently touched tenth in one pass (O(1) amortised per request). Not a clear: a "
            "client sending more distinct keys than the cap would then wipe every tenant's state, bypassing the "
            "limiter; now such a flood evicts its own stale keys, and only a client idle while about nine tenths of "
            "the cap's worth of new keys go through loses its entry (it starts afresh, as a new client)."
        )
    cleared = [c for c in caps if not c.keys]
    if cleared:
        text += (
            f" {', '.join(f'`{c.field}`' for c in cleared)} it clears past the cap: the evolved code's key there "
            "is not a request field as is, so the plugin cannot tell which entry a request touched; after a clear "
            "every key restarts as one the evolved code has never seen, as after an EPP restart."
        )
    text += (
        " Only the capped map is touched; the rest of the receiver's state is kept, so decisions that do not read "
        "the map are unchanged. Below the cap the plugin decides as BLIS does."
    )
    return [("client-keyed state capped", text)]
