"""Caps on the receiver maps the evolved code fills with a key the client sends.

``hazards`` flags a receiver map written with a client-controlled key (the fairness ID, the session, a header) that
no carried code deletes, resets or caps (``hazard.unbounded-client-keyed-state``): in BLIS the simulated workload
bounded the keys; in the EPP, where one plugin instance lives as long as the EPP, any client grows the map, and the
EPP's memory, one entry per new value. An llm-d maintainer will not merge a plugin whose memory a client controls,
so the plugin bounds each such map itself: after every call into the evolved code (``capState``, deferred in the
method that makes the call, so a call that panicked is followed too), under the mutex that already serialises
those calls (a map is state, ``receiver_state``, so the plugin has one; no lock of its own), a map holding more
than its cap is cleared. The cap is a parameter, ``maxTracked<Field>`` (default ``DEFAULT_CAP``, ``Validate()``
refuses a value <= 0), with a note in the EndpointPickerConfig.

Why clear rather than drop some entries: Go maps have no order, so dropping "some" drops arbitrary ones, neither
the oldest nor the least recently seen (that would need a second structure beside the evolved code's, with its own
bookkeeping on every request); clearing is one step a reviewer can reason about: every key restarts as one the
evolved code has never seen, as after an EPP restart, and the memory stays within what the cap's entries take. Only
the flagged map is cleared: the rest of the receiver's state (a learned typical load, totals) is kept, since
resetting it would change decisions the map never touched; the finding names that state, because a figure that
combines it with the map (a total over the map's length) no longer matches BLIS's after a clear. Below the cap the
plugin decides exactly as before, as the differential harness measures (its sampled keys are far fewer than the
default cap). The finding stays, as a SUGGESTION: the memory is bounded by construction, and what remains is a
documented change past the cap, on a key the client already chooses (it can always send a new one).
"""

from __future__ import annotations

from dataclasses import dataclass

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

    @property
    def param(self) -> str:
        return "maxTracked" + self.field[0].upper() + self.field[1:]

    @property
    def go_field(self) -> str:
        return self.param[0].upper() + self.param[1:]


def caps_of(client_keyed_maps: dict[str, int], state_fields) -> list[StateCap]:
    """The maps to cap: the flagged ones the plugin keeps as state (so calls into them already hold its lock)."""
    return [StateCap(f, line) for f, line in sorted(client_keyed_maps.items()) if f in set(state_fields)]


def param_spec(cap: StateCap) -> ParamSpec:
    return ParamSpec(
        cap.param,
        cap.go_field,
        "int",
        str(DEFAULT_CAP),
        f"{cap.go_field} caps the evolved map `{cap.field}`, whose keys the client sends (not an evolved value): "
        f"after a call into the evolved code that leaves it with more entries, the plugin clears it, so every key "
        f"restarts as one the evolved code has never seen (default {DEFAULT_CAP}). Below the cap the plugin "
        "decides as BLIS does.",
        checks=[{"cond": f"p.{cap.go_field} <= 0", "message": f"{cap.param} must be > 0, got %v", "bad": 0}],
        json_default=DEFAULT_CAP,
    )


def config_note(cap: StateCap) -> str:
    return (
        f"{cap.param}: the most entries the plugin keeps in the evolved map `{cap.field}`, keyed by what the client "
        "sends; past it the map is cleared (not an evolved value). Set it above the distinct keys this deployment "
        "sees if the evolved decisions must hold for all of them."
    )


def check_line(main_go: str, field: str) -> int | None:
    """1-based line of the size check of ``field`` in the plugin file (``capState``)."""
    for i, line in enumerate(main_go.splitlines(), start=1):
        if line.strip().startswith("if len(") and f".policy.{field}) > " in line:
            return i
    return None


def capped_findings(findings: list[Finding], caps: list[StateCap], main_go: str, file_name: str, kept) -> list[Finding]:
    """The unbounded-state findings of the capped maps, saying the plugin caps them, where, with which parameter,
    and what a clear does to decisions (``kept``: the other state fields, which a clear leaves as they are)."""
    by_line = {c.line: c for c in caps}
    out = []
    for f in findings:
        cap = by_line.get(f.source_line) if f.check == UNBOUNDED_STATE else None
        at = check_line(main_go, cap.field) if cap is not None else None
        if cap is None or at is None:
            out.append(f)
            continue
        head = f.message.split(", and no carried code", 1)[0]
        others = sorted(set(kept) - {c.field for c in caps})
        rest = (
            f"; the rest of the state it keeps ({', '.join(f'`{o}`' for o in others)}) is not cleared with it, so a "
            "figure that combines that state with the map (a total over its length, a share of a total) is no "
            "longer BLIS's after a clear"
            if others
            else ""
        )
        out.append(
            f.model_copy(
                update={
                    "severity": Severity.SUGGESTION,
                    "message": (
                        f"{head}, and no carried code deletes, resets or caps it: in the EPP the key is whatever the "
                        f"client sends, so the plugin caps the map at {DEFAULT_CAP} entries (parameter "
                        f"`{cap.param}`): after every call into the evolved code, under the lock that serialises "
                        f"those calls, it clears `{cap.field}` once it holds more (capState, {file_name}:{at}); memory "
                        "no longer grows with what clients send. Below the cap it "
                        "decides as BLIS does; past it every key restarts as one the evolved code has never seen (a "
                        f"tenant's count, share or bucket starts over){rest}"
                    ),
                    "fix": (
                        f"set `{cap.param}` above the distinct keys this deployment sees over an EPP's life if the "
                        "evolved decisions must hold for all of them (memory grows with it), or bound the map in the "
                        "evolved code (evict with the rest of its windowed state, or key it by something bounded) "
                        "and re-run the evolution"
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
    return [
        (
            "client-keyed state capped",
            (
                f"The evolved code keeps maps keyed by a value the client sends: {named}. In the EPP any client could "
                "grow them, and the EPP's memory, without limit, so after every call into the evolved code, under the "
                "lock that serialises those calls, the plugin clears a map holding more entries than its cap "
                "(capState). It clears rather than drops some entries: a Go map has no order to evict by (the oldest "
                "or least recently seen would need bookkeeping of its own on every request), and after a clear every "
                "key restarts as one the evolved code has never seen, as after an EPP restart. Only the capped map is "
                "cleared; the rest of the receiver's state is kept, so decisions that do not read the map are "
                "unchanged. Below the cap the plugin decides as BLIS does."
            ),
        )
    ]
