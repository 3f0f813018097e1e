"""The values an example disagreement hangs on: the signals its cause names, as BLIS and as the plugin read them.

An example state of the Fidelity section (``differential.describe``) lists every endpoint's queue, batch and KV on
both sides. A cause often turns on another signal: ``untranslatable:CacheHitRate`` on a hit rate the plugin reads
as 0, ``kv-block-counts`` on free blocks derived from a CacheNumBlocks an engine left at 0,
``prompt-length-estimate`` on RequestSizeBytes / 4. Without those values the line cannot be checked by hand, so
this module words them: the BLIS side as the view holds it, the plugin's side computed from the llm-d view the
way the adapter does (dictionary/map-b-signals.yaml: the same expressions, in Python). The cause's own signals come
first, then the other signals the program reads (a decision hangs on them too). Bounded: at most ``SHOWN``
signals per endpoint and per request, numbers rounded, text clipped. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.golang import harness_world as world
from bot.golang.fidelity_classes import class_of_priority

#: At most this many of a cause's signals are shown: a line stays one a person reads.
SHOWN = 4
#: A text value (a session id, a model name) is clipped to this many characters.
TEXT_CHARS = 24
#: Already on every example line (q, b/r, kv, inflight): not repeated. The plugin's InFlightRequests is not.
ON_THE_LINE = frozenset({"QueueDepth", "BatchSize", "KVUtilization", "WaitingRequests"})
UNTRANSLATABLE = "untranslatable:"
EMPTY_CLASS = '""'  # the empty SLO class as a line shows it


def cause_signals(mapping: str, info: dict) -> list[str]:
    """The signals cause ``mapping`` names: ``info["signals"]`` (``harness_build.run_plan``: the ones the program
    reads), else what its id names (a request built before they were sent)."""
    named = info.get("signals")
    if isinstance(named, list):
        return [str(s) for s in named]
    if ":" in mapping:
        return [mapping.split(":", 1)[1]]
    found = world.MAPPINGS.get(mapping)
    return sorted(found.signals) if found else []


def no_source(mappings: dict) -> frozenset[str]:
    """The signals llm-d has no source for (the plugin reads the fallback, 0), from the run's mappings."""
    return frozenset(m[len(UNTRANSLATABLE) :] for m in mappings if m.startswith(UNTRANSLATABLE))


def read_signals(mappings: dict) -> list[str]:
    """Every signal the run's mappings name (``harness_build.run_plan`` sends the ones the program reads): shown after
    a cause's own, since a decision hangs on them too (p2's long-prompt penalty needs the token estimate and each
    endpoint's free blocks whichever of the two explains it). A request built before mappings carried their
    signals names only the ones in an id (``untranslatable:X``)."""
    out: list[str] = []
    for m, info in mappings.items():
        named = info.get("signals") if isinstance(info, dict) else None
        found = [str(x) for x in named] if isinstance(named, list) else [m.split(":", 1)[1]] if ":" in m else []
        out += [x for x in found if x not in out]
    return out


def example_signals(mapping: str, info: dict, mappings: dict) -> list[str]:
    """What an example of cause ``mapping`` shows the values of: its own signals first, then the others read."""
    own = cause_signals(mapping, info)
    return own + [s for s in read_signals(mappings) if s not in own]


def _number(v) -> str:
    if isinstance(v, bool) or not isinstance(v, int | float):
        text = str(v)
        return text if len(text) <= TEXT_CHARS else text[:TEXT_CHARS] + "..."
    if isinstance(v, float) and not v.is_integer():
        text = f"{v:.3f}".rstrip("0").rstrip(".")
        return text if text not in ("0", "-0") else f"{v:.2g}"
    return str(int(v))


def _inflight(ep: dict) -> int:
    """inflight-load-producer's count, else queued + running as scraped (the dictionary's InFlightRequests)."""
    m = ep.get("metrics") or {}
    got = ep.get("inflight")
    return int(got) if got is not None else int(m.get("WaitingQueueSize") or 0) + int(m.get("RunningRequestsSize") or 0)


#: Snapshot signals whose plugin value this module derives from the llm-d view (map-b-signals.yaml's expressions).
DERIVED = frozenset(
    {"InFlightRequests", "EffectiveLoad", "FreeKVBlocks", "TotalKvCapacityTokens", "KvTokensInUse", "ResidentAdapters"}
)


def _set(names) -> str:
    """A set of names (resident adapters) as a line shows it: {a,b}, clipped."""
    return "{" + _number(",".join(sorted(names))) + "}"


def _llmd_snapshot(signal: str, ep: dict) -> str:
    """The plugin's value of a snapshot signal, as the adapter derives it; the derived KV counts show
    CacheNumBlocks too: an engine that does not publish it makes them 0."""
    m = ep.get("metrics") or {}
    blocks, size = int(m.get("CacheNumBlocks") or 0), int(m.get("CacheBlockSize") or 0)
    usage = float(m.get("KVCacheUsagePercent") or 0.0)
    if signal == "InFlightRequests":
        return f"inflight={_inflight(ep)}"
    if signal == "EffectiveLoad":
        queued, running = int(m.get("WaitingQueueSize") or 0), int(m.get("RunningRequestsSize") or 0)
        return f"EffectiveLoad={queued + running + _inflight(ep)}"
    if signal == "FreeKVBlocks":
        return f"CacheNumBlocks={blocks} FreeKVBlocks={int(blocks * (1 - usage))}"
    if signal == "TotalKvCapacityTokens":
        return f"TotalKvCapacityTokens={blocks * size}"
    if signal == "KvTokensInUse":
        return f"KvTokensInUse={int(blocks * size * usage)}"
    if signal == "ResidentAdapters":
        return f"ActiveModels={_set(m.get('ActiveModels') or {})}"
    return ""


def _blis_snapshot(signal: str, snap: dict) -> str:
    if signal == "EffectiveLoad":
        load = sum(int(snap.get(k) or 0) for k in ("QueueDepth", "BatchSize", "InFlightRequests"))
        return f"EffectiveLoad={load}"
    if signal == "InFlightRequests":  # already on the line as inflight=
        return ""
    if signal == "ResidentAdapters":
        return f"ResidentAdapters={_set(k for k, v in (snap.get(signal) or {}).items() if v)}"
    return f"{signal}={_number(snap[signal])}" if signal in snap else ""


def endpoint_values(signals: Sequence[str], snap: dict, ep: dict, missing: frozenset[str]) -> tuple[str, str]:
    """(" X=…" for BLIS, " X=…" for llm-d) of the snapshot signals in ``signals`` on one endpoint: BLIS's from its
    snapshot, the plugin's as its adapter derives it; a signal in ``missing`` reads 0 (no llm-d source)."""
    blis, llmd = [], []
    for signal in _snapshot_signals(signals, snap):
        blis.append(_blis_snapshot(signal, snap))
        if signal in missing:  # ``no_source_note`` says why, once per line
            llmd.append(f"{signal}=0")
        else:
            llmd.append(_llmd_snapshot(signal, ep))
    return "".join(f" {b}" for b in blis if b), "".join(f" {v}" for v in llmd if v)


def no_source_note(signals: Sequence[str], missing: frozenset[str], snap: dict) -> str:
    """The phrase "X has no llm-d source: the plugin reads 0" (after "; ") for the snapshot signals shown that
    llm-d cannot provide: said once, not at every endpoint."""
    absent = [s for s in _snapshot_signals(signals, snap) if s in missing]
    have = "has" if len(absent) == 1 else "have"
    return f"; {' and '.join(absent)} {have} no llm-d source: the plugin reads 0" if absent else ""


def _snapshot_signals(signals: Sequence[str], snap: dict) -> list[str]:
    shown = [s for s in signals if s not in ON_THE_LINE and (s in snap or s in DERIVED)]
    return shown[:SHOWN]


def request_values(
    signals: Sequence[str], blis_req: dict, llmd_req: dict, missing: frozenset[str], class_shown: bool = False
) -> str:
    """The request signals in ``signals`` on both sides, each after "; " (BLIS's token count, and with
    ``class_shown`` its class, are on the line already): the plugin's prompt-length estimate with its arithmetic,
    the class it reads back from llm-d's priority."""
    out = []
    wanted = [s for s in dict.fromkeys(signals) if s in blis_req or s in ("SLOClass", "Priority", "Adapter")]
    for signal in wanted[:SHOWN]:
        if signal == "InputTokens":
            size = int(llmd_req.get("RequestSizeBytes") or 0)
            out.append(f"llm-d estimates {size} bytes / 4 = {size // 4} tokens")
        elif signal in ("SLOClass", "Priority"):
            if any("llm-d priority" in v for v in out):
                continue
            priority = int(llmd_req.get("Priority") or 0)
            cls = "" if class_shown else f"class {blis_req.get('SLOClass') or EMPTY_CLASS}, "
            out.append(f"{cls}llm-d priority {priority} read as {class_of_priority(priority)}")
        elif signal == "TenantID":
            out.append(
                f"TenantID {_number(blis_req.get('TenantID') or '-')}, llm-d {_number(llmd_req.get('FairnessID') or '-')}"
            )
        elif signal == "SessionID":
            token = (llmd_req.get("Headers") or {}).get("x-session-token", "")
            out.append(f"SessionID {_number(blis_req.get('SessionID') or '-')}, llm-d {_number(token or '-')}")
        elif signal in ("Adapter", "Model"):  # the plugin reads both from TargetModel
            target = _number(llmd_req.get("TargetModel") or "-")
            out.append(f"{signal} BLIS {_number(blis_req.get(signal) or EMPTY_CLASS)}, llm-d TargetModel {target}")
        elif signal in missing:
            out.append(f"{signal} BLIS {_number(blis_req.get(signal))}, llm-d 0 (no llm-d source)")
        else:
            out.append(f"{signal} BLIS {_number(blis_req.get(signal))}")
    return "".join(f"; {v}" for v in out)
