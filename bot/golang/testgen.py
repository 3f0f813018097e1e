"""The plugin's table-driven unit test, written in llm-d terms from what the harness found.

Expected outcomes never come from a re-implementation: the factory and defaults tests check the
evolved literals, the adapter test checks each Map B line on a known endpoint, and the threshold
tests compare the plugin with itself under the evolved value and under the value moved to a readable
number across the input (the inputs the compiled plugin was seen to decide on, ``probes``).
Behaviour tests say in llm-d terms what the evolved logic does ("an endpoint with more waiting
requests scores lower"), as the compiled plugin does it on a two-endpoint state.
"""

from __future__ import annotations

import json
import re

from bot.golang import queue_properties, sequences
from bot.golang.adapter import request_headers, zero_value
from bot.golang.analysis_types import Analysis
from bot.golang.generate import MODULE, Generated
from bot.golang.gofiles import sort_imports
from bot.golang.golines import TAB, WIDTH, fits, wrap
from bot.golang.gonames import go_float, go_quote, render
from bot.golang.plugin_docs import as_default_type
from bot.golang.plugin_file import (
    IMPORT_ATTRPREFIX,
    IMPORT_CONCURRENCY,
    IMPORT_DL,
    IMPORT_ERR,
    IMPORT_PLUGIN,
    IMPORT_RC,
    IMPORT_SCHED,
)
from bot.golang.plugin_shape import TEST_DRAW_BASE
from bot.golang.probes import ADMISSION_POOLS, CLOCK, SPACING, Case
from bot.model import PolicyKind

_TEST_METRICS = {
    "WaitingQueueSize": 3,
    "RunningRequestsSize": 2,
    "KVCacheUsagePercent": 0.5,
    "CacheNumBlocks": 100,
    "CacheBlockSize": 16,
}
_SIMPLE_M = re.compile(r"^(int|int64|float64)?\(?m\.(\w+)\)?$")
_HEADER_REQ = re.compile(r'^req\.Headers\["([^"]+)"\]$')
_SIMPLE_REQ = re.compile(r"^req\.(\w+)$")
_BEHAVIOUR_NAMES = {
    "waiting": "an endpoint with more waiting requests",
    "running": "an endpoint with more running requests",
    "kv": "an endpoint with a fuller KV cache",
    "prefix": "an endpoint holding more of the prompt's prefix",
}


def _metrics_literal(m: dict | None, read: frozenset[str] | None = None) -> str:
    if m is None:
        return "nil"
    parts = [
        f"{k}: {go_float(v) if isinstance(v, float) else v}"
        for k, v in m.items()
        if v and k != "CacheBlockSize" and (read is None or k in read)
    ]
    return "&fwkdl.Metrics{" + ", ".join(parts) + "}"


def _endpoint_literal(ep: dict, prefix: bool, read: frozenset[str] | None = None) -> str:
    m = _metrics_literal(ep.get("metrics"), read)
    p = ep.get("prefix") or {}
    if prefix and p.get("match"):
        return f"prefixEndpoint({go_quote(ep['name'])}, {m}, {p['match']}, {p['total']})"
    return f"testEndpoint({go_quote(ep['name'])}, {m})"


def _request_literal(r: dict, read: frozenset[str] | None = None, *, value: bool = False) -> str:
    """``&scheduling.InferenceRequest{...}`` setting the fields the plugin reads; with ``value``, the struct
    without its RequestID (``burst`` numbers the copies)."""

    def wanted(name: str) -> bool:
        return read is None or name in read

    parts = [] if value else [f"RequestID: {go_quote(r.get('RequestID', 'r-1'))}"]
    sent = {k: v for k, v in (r.get("Headers") or {}).items() if wanted(k)}  # the headers the plugin reads
    if sent and wanted("Headers"):
        headers = ", ".join(f"{go_quote(k)}: {go_quote(v)}" for k, v in sorted(sent.items()))
        parts.append(f"Headers: map[string]string{{{headers}}}")
    if r.get("Priority") and wanted("Objectives"):
        parts.append(f"Objectives: scheduling.RequestObjectives{{Priority: {r['Priority']}}}")
    if r.get("FairnessID") and wanted("FairnessID"):
        parts.append(f"FairnessID: {go_quote(r['FairnessID'])}")
    if r.get("RequestSizeBytes") and wanted("RequestSizeBytes"):
        parts.append(f"RequestSizeBytes: {r['RequestSizeBytes']}")
    return ("" if value else "&") + "scheduling.InferenceRequest{" + ", ".join(parts) + "}"


def _warmups_literal(warm: list[dict], read: frozenset[str] | None = None) -> str:
    """A sequence's earlier requests as ``burst`` calls, one per run of alike requests (48 spelled out made one
    7,400-character line), joined by ``slices.Concat``; a request not numbered ``w-<k>`` is written out."""
    runs: list[list] = []  # [first, count, literal]; count 0: a literal written out
    for k, w in enumerate(warm):
        body = _request_literal(w, read, value=True)
        if w.get("RequestID") != f"w-{k}":
            runs.append([k, 0, "[]*scheduling.InferenceRequest{" + _request_literal(w, read) + "}"])
        elif runs and runs[-1][1] and runs[-1][2] == body:
            runs[-1][1] += 1
        else:
            runs.append([k, 1, body])
    pieces = [f"burst({first}, {n}, {body})" if n else body for first, n, body in runs]
    return pieces[0] if len(pieces) == 1 else "slices.Concat(" + ", ".join(pieces) + ")"


#: Where a test row's value starts: three tabs and the longest key (``endpoints: ``), as gofmt aligns them.
_ROW_INDENT, _ROW_COL = 3, 3 * TAB + len("endpoints: ")


def _wrapped(row: dict) -> dict:
    """A test row with its endpoints, request and warm-ups as Go expressions broken to fit the line width."""
    out = dict(row)
    if "endpoints" in out:
        out["endpoints"] = "[]scheduling.Endpoint{" + out["endpoints"] + "}"
    for key in ("endpoints", "request", "warmups", "before"):
        if out.get(key):
            out[key] = wrap(out[key], _ROW_INDENT, _ROW_COL)
    return out


def _json_lines(text: str, indent: int, col: int) -> str:
    """JSON text inside a Go raw string starting at column ``col`` of a line indented ``indent`` tabs, a list too
    long for the line written one element a line (the scorers list): JSON does not mind the line breaks."""
    if col + len(text) + 3 <= WIDTH or "[{" not in text:  # the raw string's quotes and a comma
        return text
    head, _, rest = text.partition("[")
    body, _, tail = rest.rpartition("]")
    elements = re.split(r"(?<=\}), (?=\{)", body)
    inside = "\t" * (indent + 1)
    return head + "[\n" + ",\n".join(inside + e for e in elements) + "\n" + "\t" * indent + "]" + tail


def fields_read(gen: Generated) -> frozenset[str]:
    """The endpoint-metrics and request fields the shipped plugin reads anywhere: a test input sets only
    these, so a reader sees what the case is about (a field nothing reads changes no decision)."""
    text = "\n".join(t for p, t in gen.files.items() if p.endswith(".go") and not p.endswith("_test.go"))
    # and the request headers it reads, by name: a session header where it reads no SessionID is noise
    headers = [h for line in gen.request_lines for h in request_headers(line.expr + " " + line.helper_body)]
    return frozenset(re.findall(r"\.(\w+)\b", text)) | frozenset(headers)


def _before_literal(history: list[dict], prefix: bool, read: frozenset[str] | None) -> str:
    """A walk's earlier requests on pools of their own (``load_sequences``) as ``earlier`` runs, one per run of
    requests on one pool ("" for none)."""
    runs: list[tuple[list[dict], list[dict]]] = []
    for h in history:
        eps = h["llmd"]["endpoints"]
        if runs and runs[-1][0] == eps:
            runs[-1][1].append(h["llmd"]["request"])
        else:
            runs.append((eps, [h["llmd"]["request"]]))
    return ", ".join(
        "{endpoints: []scheduling.Endpoint{"
        + ", ".join(_endpoint_literal(ep, prefix, read) for ep in eps)
        + "}, requests: []*scheduling.InferenceRequest{"
        + ", ".join(_request_literal(w, read).removeprefix("&scheduling.InferenceRequest") for w in requests)
        + "}}"
        for eps, requests in runs
    )


def _case_ctx(c: Case, prefix: bool, read: frozenset[str] | None = None) -> dict:
    llmd = c.state["llmd"]
    history = c.state.get("history", [])
    own = [h for h in history if not h["llmd"].get("endpoints")]  # compact: on the request's own pool
    warm = [h["llmd"]["request"] for h in own]
    before = _before_literal([h for h in history if h["llmd"].get("endpoints")], prefix, read)
    return {
        "name": c.name,
        "field": c.field,
        "moved": str(round(c.moved)) if c.integer else go_float(round(c.moved, 10)),
        "want": c.want,
        "endpoints": ", ".join(_endpoint_literal(ep, prefix, read) for ep in llmd["endpoints"]),
        "request": _request_literal(llmd["request"], read),
        "warmups": _warmups_literal(warm, read) if warm else "nil",
        "before": "[]earlier{" + before + "}" if before else "",
        # µs between warm-ups, as the harness replayed them (a window that closes between them decides too).
        "spacing": CLOCK - history[-1]["blis"]["clock"] if history else SPACING,
    }


def _sequence_row(state: dict, want: str, gen: Generated, tenants: bool) -> dict:
    """A stateful admitter's behaviour row: the earlier requests replayed on the same plugin, then the request.
    ``tenants``: whether the plugin reads the tenant (the row names none otherwise)."""
    ctx = _case_ctx(Case("", "", "", 0, want, state, "", False), gen.consumes_prefix, fields_read(gen))
    keys = ("endpoints", "request", "warmups", "before", "spacing", "want")
    return {"name": sequences.describe(state, want, tenants)} | {k: ctx[k] for k in keys}


def _queue_by(read: frozenset[str]) -> str:
    """ ", per <the request inputs the scorer reads>" for TestQueueBehaviour's doc comment ("" for none)."""
    said = [w for w, f in (("priority", "Objectives"), ("prompt length", "RequestSizeBytes")) if f in read]
    return f", per {' and '.join(said)}" if said else ""


#: Per statement kind (queue_properties): its subtest name, from the requests' labels in llm-d terms, and the
#: generated helper that asserts it.
_QUEUE_SAYS = {
    queue_properties.BUSIER: ("{0}: a busier endpoint never scores higher", ["busierNeverHigher"]),
    queue_properties.SPREAD: ("{0}: an idle endpoint scores highest, the busiest lowest", ["idleHighestBusiestLowest"]),
    queue_properties.ALIKE: ("{0}: every endpoint scores alike", ["scoresAlike"]),
    queue_properties.NEVER_WORSE: ("{0} never sees an endpoint as worse than {1} does", ["neverWorse"]),
    queue_properties.BETTER: (
        "{0} never sees an endpoint as worse than {1} does, and sees one as better",
        ["neverWorse", "seesOneBetter"],
    ),
}


def _queue_request(k: queue_properties.Key, read: frozenset[str]) -> str:
    """The request of a behaviour row, setting only the inputs the plugin reads."""
    _, priority, tokens = k
    return _request_literal({"RequestID": "r-1", "Priority": priority, "RequestSizeBytes": 4 * (tokens or 512)}, read)


def _pair_name(name: str, said: list[str]) -> str:
    """A statement's subtest name; a pair's says what its requests share once, in front ("a 64-token prompt:
    priority 1 never sees an endpoint as worse than priority 0 does")."""
    if len(said) == 1:
        return name.format(*said)
    parts = [x.split(", ") for x in said]
    shared = [p for p, q in zip(*parts, strict=True) if p == q]
    differ = [", ".join(p for p in x if p not in shared) for x in parts]
    return (f"{', '.join(shared)}: " if shared else "") + name.format(*differ)


def _queue_ctx(rows: list[dict], read: frozenset[str]) -> dict:
    """TestQueueBehaviour's statements (queue_properties.decide: the ones that held on the compiled plugin), each
    a subtest named in llm-d terms, and the rows pinned beside them where an expected statement did not hold."""
    decided = queue_properties.decide(rows)
    waiting = {queue_properties.key(r): r["waiting"] for r in rows}
    statements, helpers = [], set()
    for s in decided.statements:
        said = [queue_properties.label(k, read) for k in s.about]
        if s.kind == queue_properties.CAP:
            w = waiting[s.about[0]]
            name = f"past maxPseudoQueue: {w[-1]} waiting scores like {w[-2]}"
            shown = said[0] != "any request"
            call = f"queueScores(t, {_queue_request(s.about[0], read)}, {', '.join(map(str, w))})"
            statements.append(
                {
                    "name": name + (f" ({said[0]})" if shown else ""),
                    "cap": True,
                    "waiting": w,
                    "call": wrap(call, 2, 2 * TAB + len("got := "), 0),
                }
            )
            continue
        name, calls = _QUEUE_SAYS[s.kind]
        scores = ", ".join(f"scores[{go_quote(x)}]" for x in said)
        name = _pair_name(name, said)
        # A name too long to share its line with the function puts it below: its body one tab further in.
        depth = 2 if fits(f"\tt.Run({go_quote(name)}, func(t *testing.T) {{") else 3
        calls_said = [wrap(f"{c}(t, waiting, {scores})", depth, depth * TAB, 0) for c in calls]
        statements.append({"name": name, "cap": False, "calls": calls_said})
        helpers |= set(calls)
    requests = [k for k in waiting if not k[0]]
    labelled = [(queue_properties.label(k, read), k) for k in requests]
    # The scores map's values start past the longest quoted key, as gofmt aligns them.
    key_col = 2 * TAB + max((len(go_quote(said)) for said, _ in labelled), default=0) + 2
    pinned = [
        {
            "name": f"{queue_properties.label(p.key, read)} ({p.why}): endpoints with "
            + ", ".join(map(str, waiting[p.key][:-1]))
            + f" and {waiting[p.key][-1]} waiting",
            "request": wrap(_queue_request(p.key, read), 3, 3 * TAB + len("request: ")),
            "waiting": ", ".join(map(str, waiting[p.key])),
            "want": ", ".join(repr(float(v)) for v in p.scores),
        }
        for p in decided.pinned
    ]
    return {
        "statements": statements,
        "helpers": helpers,  # none: no statement reads the requests' scores, so the test declares none
        "waiting": ", ".join(map(str, waiting[requests[0]])) if requests else "",
        "requests": [
            {"said": said, "call": wrap(f"queueScores(t, {_queue_request(k, read)}, waiting...)", 2, key_col)}
            for said, k in labelled
        ],
        "pinned": pinned,
    }


def render_test(
    gen: Generated,
    an: Analysis,
    plugin_type: str,
    cases: list[Case],
    behaviours: list[tuple[str, str]],
    queue_rows: list[dict] | None = None,
    sequence_rows: list[tuple[dict, str]] | None = None,
) -> str:
    kind = an.kind
    bad = [
        {"name": f"{p.name} = {c['bad']} is rejected", "json": json.dumps({p.name: c["bad"]})}
        for p in gen.params
        for c in p.checks
    ]
    if any(p.name == "scorers" for p in gen.params):
        one = json.dumps((gen.scorer_defaults or [("queue-depth", 1)])[0][0])
        bad += [
            {"name": "unknown scorer is rejected", "json": '{"scorers": [{"name": "no-such-scorer", "weight": 1}]}'},
            {"name": "zero scorer weight is rejected", "json": f'{{"scorers": [{{"name": {one}, "weight": 0}}]}}'},
            {
                "name": "duplicate scorer is rejected",
                "json": f'{{"scorers": [{{"name": {one}, "weight": 1}}, {{"name": {one}, "weight": 2}}]}}',
            },
            {"name": "empty scorer list is rejected", "json": '{"scorers": []}'},
        ]
    # TestDefaultsAreTheEvolvedValues' want: gofmt pads each field to the longest, and a long value (the scorers
    # list) is broken from there.
    want_col = 2 * TAB + max((len(p.field) for p in gen.params), default=0) + 2
    want_params = [
        {"field": p.field, "want": wrap(p.threshold.literal if p.threshold is not None else p.default, 2, want_col)}
        for p in gen.params
    ]
    adapter_checks = []
    for aline in gen.snapshot_lines:
        fld = aline.target.split(".", 1)[1]
        typ = gen.snapshot_fields.get(fld, "float64")
        if aline.status != "mapped":
            adapter_checks.append({"field": fld, "want": zero_value(typ), "why": "no llm-d source: zero value"})
            continue
        m = _SIMPLE_M.match(aline.expr)
        if m and m.group(2) in _TEST_METRICS and typ in ("int", "int64", "float64"):
            v = _TEST_METRICS[m.group(2)]
            adapter_checks.append(
                {
                    "field": fld,
                    "want": go_float(v) if typ == "float64" else str(int(v)),
                    "why": f"from Metrics.{m.group(2)}",
                }
            )
    # The in-flight count has two sources (the producer's attribute, else the scraped gauges): test both.
    inflight_check = any(
        a.signal == "InFlightRequests"
        and "InFlightLoadDataKey" in a.helper_body
        and "return int(m.WaitingQueueSize + m.RunningRequestsSize)" in a.helper_body
        for a in gen.snapshot_lines
    )
    request_checks = []
    for aline in gen.request_lines:
        fld = aline.target.split(".", 1)[1]
        m, h = _SIMPLE_REQ.match(aline.expr), _HEADER_REQ.match(aline.expr)
        if aline.status == "mapped" and m and m.group(1) in ("RequestID", "TargetModel", "FairnessID"):
            request_checks.append(
                {
                    "field": fld,
                    "literal": f'{m.group(1)}: "value-1"',
                    "want": '"value-1"',
                    "why": f"from InferenceRequest.{m.group(1)}",
                }
            )
        elif aline.status == "mapped" and h:
            request_checks.append(
                {
                    "field": fld,
                    "literal": f'Headers: map[string]string{{{go_quote(h.group(1))}: "value-1"}}',
                    "want": '"value-1"',
                    "why": f"from header {h.group(1)}",
                }
            )
    behaviour_rows = []
    for label, direction in behaviours:
        if ":" in label:  # admission: what an idle or overloaded pool does with a request of some priority
            load, priority = label.split(":")
            m = _metrics_literal(ADMISSION_POOLS[load])
            behaviour_rows.append(
                {
                    "name": f"an {load} pool {'admits' if direction == 'admit' else 'rejects'} a request of "
                    f"priority {priority}",
                    "endpoints": f'testEndpoint("pod-a", {m}), testEndpoint("pod-b", {m})',
                    "request": f'&scheduling.InferenceRequest{{RequestID: "r-1", RequestSizeBytes: 2048, '
                    f"Objectives: scheduling.RequestObjectives{{Priority: {priority}}}}}",
                    "want": direction,
                    "warmups": "nil",
                    "spacing": 0,
                }
            )
            continue
        pair = {
            "waiting": (
                'testEndpoint("pod-a", &fwkdl.Metrics{})',
                'testEndpoint("pod-b", &fwkdl.Metrics{WaitingQueueSize: 8})',
            ),
            "running": (
                'testEndpoint("pod-a", &fwkdl.Metrics{})',
                'testEndpoint("pod-b", &fwkdl.Metrics{RunningRequestsSize: 16})',
            ),
            "kv": (
                'testEndpoint("pod-a", &fwkdl.Metrics{KVCacheUsagePercent: 0.2})',
                'testEndpoint("pod-b", &fwkdl.Metrics{KVCacheUsagePercent: 0.95})',
            ),
            "prefix": (
                'prefixEndpoint("pod-a", &fwkdl.Metrics{}, 0, 32)',
                'prefixEndpoint("pod-b", &fwkdl.Metrics{}, 24, 32)',
            ),
        }[label]
        verb = {"lower": "scores lower", "higher": "scores higher", "same": "scores the same"}[direction]
        behaviour_rows.append(
            {"name": f"{_BEHAVIOUR_NAMES[label]} {verb}", "endpoints": ", ".join(pair), "want": direction}
        )
    tenants = "TenantID" in an.signal_names
    behaviour_rows += [_sequence_row(state, want, gen, tenants) for state, want in sequence_rows or []]
    behaviour_rows = [_wrapped(b) for b in behaviour_rows]
    case_rows = [_wrapped(_case_ctx(c, gen.consumes_prefix, fields_read(gen))) for c in cases]
    warmups = " ".join(r.get("warmups", "") for r in behaviour_rows + case_rows)
    imports = {
        '"encoding/json"',
        '"testing"',
        '"time"',
        '"github.com/google/go-cmp/cmp"',
        'k8stypes "k8s.io/apimachinery/pkg/types"',
        f'fwkdl "{IMPORT_DL}"',
        f'"{IMPORT_PLUGIN}"',
        f'"{IMPORT_SCHED}"',
        f'"{MODULE}/test/utils"',
    }
    if "burst(" in warmups:
        imports |= {'"fmt"', '"maps"'}
    if "slices.Concat(" in warmups:
        imports.add('"slices"')
    if gen.consumes_prefix:
        imports.add(f'attrprefix "{IMPORT_ATTRPREFIX}"')
    if inflight_check:
        imports.add(f'"{IMPORT_CONCURRENCY}"')
    if kind == PolicyKind.ADMISSION:
        imports |= {f'"{IMPORT_RC}"', f'errcommon "{IMPORT_ERR}"'}
    if kind == PolicyKind.SCHEDULING:
        imports |= {'"context"', '"fmt"'}
    recency_caps = [c for c in gen.state_caps if c.keys and c.key_type == "string"]  # state_recency_test.go.j2
    if recency_caps:
        imports.add('"fmt"')
    return render(
        "plugin_test.go.j2",
        pkg=gen.package,
        imports=sort_imports(imports),
        plugin_type=plugin_type,
        kind=kind.value,
        factory=gen.factory,
        ctor=gen.ctor,
        recency_caps=recency_caps,
        type_const=gen.type_const,
        struct=gen.struct,
        defaults_json=_params_json(gen.params, {}),
        # what gate 1 deployed, decoded and validated as the EndpointPickerConfig sets it (none: no such case)
        deployed_json=_params_json(gen.params, gen.deployed) if gen.deployed else "",
        deployed_names=", ".join(sorted(gen.deployed)),
        bad=[b | {"json": _json_lines(b["json"], 3, 3 * TAB + len("params:  "))} for b in bad],
        params=want_params,
        metrics_literal=", ".join(f"{k}: {v}" for k, v in _TEST_METRICS.items()),
        adapter_checks=adapter_checks,
        inflight_check=inflight_check,
        uses_clock=gen.uses_clock,
        adapter=gen.adapter,
        stateful=gen.stateful,  # only a stateful admitter's tests replay warm-up requests
        draws=gen.draws,  # the evolved code draws from an rng the plugin seeds (drawSeeds): tests fix its base
        draw_base=TEST_DRAW_BASE,
        inflight_fallback=_TEST_METRICS["WaitingQueueSize"] + _TEST_METRICS["RunningRequestsSize"],
        request_checks=request_checks,
        consumes_prefix=gen.consumes_prefix,
        data_keys=gen.data_keys,
        clock=CLOCK,
        cases=case_rows,
        burst="burst(" in warmups,
        loads=any(r.get("before") for r in behaviour_rows + case_rows),  # a walk's earlier pools (``earlier``)
        behaviours=behaviour_rows,
        queue=_queue_ctx(queue_rows or [], fields_read(gen)),
        queue_by=_queue_by(fields_read(gen)),
    )


def _params_json(params, values: dict) -> str:
    """Every parameter as a JSON object literal for a Go raw string, ``values`` in place of the defaults, each in
    its default's JSON type as the EndpointPickerConfig writes it (``plugin_docs.as_default_type``)."""
    rows = (f"{json.dumps(p.name)}: {json.dumps(as_default_type(p.json_default, values.get(p.name)))}" for p in params)
    return "{\n" + ",\n".join("\t" + _json_lines(row, 1, TAB) for row in rows) + "\n}"
