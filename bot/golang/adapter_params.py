"""The parameters of the adapter's functions: only those a function reads, and its call sites to match.

A parameter a generated function never reads (``_ []scheduling.Endpoint``, ``_ int64``, or a named ``req`` only
handed on to a function that ignores it) is what revive's unused-parameter and unparam flag in an llm-d review.
Which ones a function reads follows from the adapter lines it holds, so the signature of ``newBlisRequest``,
``newRouterState``, ``newRoutingSnapshot`` (and a scheduling plugin's ``incoming``) and every call of them, in the
plugin, its generated test and the harness hook, are written from one ``AdapterParams``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.golang.adapter import AdapterLine

#: Each parameter's Go declaration, in the order the functions take them.
DECLARATIONS = {
    "id": "id string",
    "req": "req *scheduling.InferenceRequest",
    "ep": "ep scheduling.Endpoint",
    "m": "m *fwkdl.Metrics",
    "endpoints": "endpoints []scheduling.Endpoint",
    "now": "now int64",
    "keys": "keys dataKeys",
}
#: A scheduling plugin's ``incoming`` takes the request as Score names it, and its clock.
_INCOMING = DECLARATIONS | {"req": "request *scheduling.InferenceRequest", "now": "clock int64"}


@dataclass(frozen=True)
class AdapterParams:
    """The parameters each adapter function takes, in declaration order."""

    request: tuple[str, ...]  # newBlisRequest (and a scheduling plugin's incoming): of req, endpoints, now
    state: tuple[str, ...]  # newRouterState: of req, endpoints, now, keys
    snapshot: tuple[str, ...]  # newRoutingSnapshot: of id, ep, m, req, keys
    incoming: tuple[str, ...] = ()  # a scheduling plugin's incoming: newBlisRequest's, and now

    def signature(self, which: str) -> str:
        """The Go parameter list of ``which`` (request, state or snapshot)."""
        declarations = _INCOMING if which == "incoming" else DECLARATIONS
        return ", ".join(declarations[p] for p in getattr(self, which))

    def call(self, which: str, **values: str) -> str:
        """The argument list of a call of ``which``, each parameter it takes given by ``values`` (a parameter it does
        not take is left out; one it takes but ``values`` lacks is a template error)."""
        return ", ".join(values[p] for p in getattr(self, which))

    @property
    def names_scheduling(self) -> bool:
        """Whether newBlisRequest takes an llm-d scheduling type (a scheduling plugin's adapter has only it)."""
        return "req" in self.request or "endpoints" in self.request

    @property
    def reads_request(self) -> bool:
        """Whether the llm-d request reaches any adapter function (else Score/Admit leave it unnamed)."""
        return "req" in self.request or "req" in self.state


def adapter_params(
    snaps: list[AdapterLine],
    reqs: list[AdapterLine],
    states: list[AdapterLine],
    *,
    consumes_prefix: bool,
    keys: bool,
) -> AdapterParams:
    """The parameters the adapter lines read. ``keys``: the adapter reads produced data (its snapshots do)."""
    snap_exprs = " ".join(line.expr for line in snaps)
    snapshot = ["id"]
    if consumes_prefix or re.search(r"\bep\b", snap_exprs):
        snapshot.append("ep")
    if re.search(r"\bm\b", snap_exprs):
        snapshot.append("m")
    if any(line.uses_req for line in snaps):
        snapshot.append("req")
    if keys:
        snapshot.append("keys")
    request = []
    if any(line.uses_req for line in reqs):
        request.append("req")
    if any(re.search(r"\bendpoints\b", line.expr) for line in reqs):
        request.append("endpoints")
    if any(line.uses_now for line in reqs):
        request.append("now")
    state = []
    if "req" in snapshot or any(line.uses_req for line in states):
        state.append("req")
    state.append("endpoints")
    if any(line.uses_now for line in states):
        state.append("now")
    if keys:
        state.append("keys")
    incoming = [p for p in request if p != "now"] + ["now"]  # a scheduling plugin dates the request it scores
    return AdapterParams(tuple(request), tuple(state), tuple(snapshot), tuple(incoming))
