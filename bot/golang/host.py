"""Finding the evolved policy function (the host) among the functions of an evolved file.

Check ids raised here (``SourceError.check``, stable; part of the contract with
``examples/corpus/manifest.yaml``):

- ``source.no-policy-function``  no Route / Admit / OrderQueue with a BLIS signature (the message names them)
- ``source.kind-mismatch``       ``--kind`` contradicts the host function
- ``source.ambiguous-host``      several evolved policy functions and no EVOLVE markers
- ``source.removed-interface``   a PriorityPolicy.Compute program (interface removed from BLIS)
"""

from __future__ import annotations

import re

from bot.golang.analysis_types import BUILTIN_RECEIVERS, SIGNATURES, FuncInfo
from bot.golang.gotree import norm_type as _norm_type
from bot.golang.gotree import strip_ptr as _strip_ptr
from bot.golang.gotree import text_of
from bot.golang.source import EvolvedSource, SourceError
from bot.model import PolicyKind

CHECK_NO_POLICY = "source.no-policy-function"
CHECK_KIND_MISMATCH = "source.kind-mismatch"
CHECK_AMBIGUOUS_HOST = "source.ambiguous-host"
CHECK_LEGACY_SIGNATURE = "source.legacy-signature"
CHECK_REMOVED_INTERFACE = "source.removed-interface"


def collect_functions(src: EvolvedSource) -> list[FuncInfo]:
    out: list[FuncInfo] = []
    for node in src.tree.root_node.children:
        if node.type not in ("function_declaration", "method_declaration"):
            continue
        name = text_of(src, node.child_by_field_name("name"))
        rtype = rvar = None
        rptr = False
        if node.type == "method_declaration":
            recv = node.child_by_field_name("receiver")
            decls = [c for c in recv.children if c.type == "parameter_declaration"] if recv else []
            if decls:
                t = decls[0].child_by_field_name("type")
                ttext = text_of(src, t)
                rptr = ttext.strip().startswith("*")
                rtype = re.sub(r"\[.*\]$", "", _strip_ptr(ttext))
                n = decls[0].child_by_field_name("name")
                rvar = text_of(src, n) if n is not None else None
                if rvar == "_":
                    rvar = None
        params: list[tuple[str, str]] = []
        plist = node.child_by_field_name("parameters")
        for p in plist.children if plist else []:
            if p.type not in ("parameter_declaration", "variadic_parameter_declaration"):
                continue
            ptype = text_of(src, p.child_by_field_name("type"))
            names = [c for c in p.children if c.type == "identifier"]
            if names:
                params.extend((text_of(src, n), ptype) for n in names)
            else:
                params.append(("", ptype))
        result = text_of(src, node.child_by_field_name("result"))
        info = FuncInfo(node, name, rtype, rvar, rptr, params, result)
        _classify(info)
        out.append(info)
    return out


def _classify(f: FuncInfo) -> None:
    types = [_norm_type(t) for _, t in f.params]
    if f.name == "Route" and "*RouterState" in types:
        f.kind = PolicyKind.ROUTING
        f.legacy = "*Request" not in types
    elif f.name == "Admit" and "*RouterState" in types and "*Request" in types:
        f.kind = PolicyKind.ADMISSION
        f.legacy = types.index("*RouterState") < types.index("*Request") or _norm_type(f.result) == "bool"
    elif f.name == "Admit" and "*RouterState" in types:
        f.kind = PolicyKind.ADMISSION
        f.legacy = True
    elif f.name == "OrderQueue" and any(t in ("[]*Request", "[]Request") for t in types):
        f.kind = PolicyKind.SCHEDULING


def find_host(src: EvolvedSource, funcs: list[FuncInfo], kind: PolicyKind | None) -> FuncInfo:
    """The function holding the EVOLVE block, else the one non-built-in policy function (of --kind)."""
    policies = [f for f in funcs if f.kind is not None]
    block = src.evolve_block_go
    if block is not None:
        start_byte = _line_start_byte(src, block[0])
        enclosing = [f for f in funcs if f.node.start_byte <= start_byte < f.node.end_byte]
        if enclosing:
            host = enclosing[0]
            if host.kind is None:
                raise SourceError(
                    f"{src.path}:{src.evolve_block[0]}: the EVOLVE block is inside {host.label}, which is not a policy "
                    f"function; expected one of: {'; '.join(SIGNATURES.values())}",
                    check=CHECK_NO_POLICY,
                    line=src.evolve_block[0],
                )
            if kind is not None and host.kind != kind:
                raise SourceError(
                    f"{src.path}: --kind {kind.value}, but the EVOLVE block is inside {host.label} ({host.kind.value}); "
                    f"drop --kind or pass --kind {host.kind.value}",
                    check=CHECK_KIND_MISMATCH,
                    line=src.to_original_line(host.node.start_point[0] + 1),
                )
            return host
    if (
        any(f.name == "Compute" and any(_norm_type(t) == "*Request" for _, t in f.params) for f in funcs)
        and not policies
    ):
        raise SourceError(
            f"{src.path}: PriorityPolicy.Compute was removed from BLIS in ce85515e (2026-05-06) and has no llm-d "
            "counterpart; re-express the ordering as an InstanceScheduler OrderQueue(requests []*Request, clock int64)",
            check=CHECK_REMOVED_INTERFACE,
        )
    cands = [f for f in policies if kind is None or f.kind == kind]
    if not cands:
        expected = [SIGNATURES[kind]] if kind is not None else list(SIGNATURES.values())
        found = f" (found {', '.join(sorted({f.label for f in policies}))})" if policies else ""
        raise SourceError(
            f"{src.path}: no recognizable policy function{found}; expected one of: {'; '.join(expected)}",
            check=CHECK_NO_POLICY if not policies else CHECK_KIND_MISMATCH,
        )
    if len(cands) > 1:
        evolved = [f for f in cands if f.receiver_type not in BUILTIN_RECEIVERS]
        if len(evolved) == 1:
            return evolved[0]
        ws = [f for f in evolved if f.receiver_type == "WeightedScoring"]
        if len(ws) == 1:
            return ws[0]
        raise SourceError(
            f"{src.path}: several policy functions ({', '.join(f.label for f in cands)}) and no EVOLVE-BLOCK markers; "
            "add the markers around the evolved code or pass --kind",
            check=CHECK_AMBIGUOUS_HOST,
        )
    return cands[0]


def _line_start_byte(src: EvolvedSource, go_line: int) -> int:
    lines = src.go_text.split("\n")
    return len("\n".join(lines[: go_line - 1]).encode("utf-8")) + (1 if go_line > 1 else 0)


def host_call_args(an) -> str:
    """The arguments the harness passes the evolved host method, by its parameter types."""
    from bot.golang.adapter import zero_value

    args = []
    for _, ptype in an.host_info.params:
        t = re.sub(r"\s+", "", ptype)
        if t in ("*Request", "Request"):
            args.append("req" if t.startswith("*") else "*req")
        elif t in ("*RouterState", "RouterState"):
            args.append("state" if t.startswith("*") else "*state")
        elif t == "[]*Request":
            args.append("queue")
        elif t == "int64":
            args.append("clock")
        else:
            args.append(zero_value(t))
    return ", ".join(args)
