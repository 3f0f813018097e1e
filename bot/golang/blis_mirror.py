"""Composing BLIS's package ``sim`` for one evolved program: the program as written plus the mirror.

An evolved program embeds its own copy of ``routing.go`` (or ``admission.go``, ``scheduler.go``) from
the BLIS version it was evolved on, or is a single method. It must compile *as it was written*, so the
program wins every name it declares: the mirror's declaration of that name (and the methods of a type
it redeclares) are dropped. What the copy's era needs is adapted in the mirror, never in the program:
``InFlightRequests`` is named ``PendingRequests`` in copies older than 9a603bca, tokens are ``[]int``
where the copy uses them that way, ``newScorerWithObserver`` takes the arity the copy calls it with,
and a method whose receiver type is declared nowhere gets a struct with exactly the fields it uses.
Pure text processing (tree-sitter), no I/O beyond reading the mirror files.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from bot import PROJECT_ROOT
from bot.golang import counter_era
from bot.golang.analysis_types import Analysis
from bot.golang.gotree import norm_type, walk
from bot.golang.safety import IMPLICIT_IMPORTS
from bot.golang.source import EvolvedSource, parse_go

MIRROR_SIM = PROJECT_ROOT / "gomirror" / "blis" / "sim"
VARIANTS = PROJECT_ROOT / "gomirror" / "blis" / "_variants"


@dataclass
class Declared:
    """Top-level names a Go file declares."""

    types: dict[str, str] = field(default_factory=dict)  # name -> type text (struct bodies included)
    funcs: set[str] = field(default_factory=set)
    methods: set[str] = field(default_factory=set)  # "Type.name"
    values: set[str] = field(default_factory=set)  # vars and consts


def declared(text: str) -> Declared:
    tree = parse_go(text)
    out = Declared()
    for node in tree.root_node.children:
        for name, kind, _ in _decls(node, text):
            if kind == "types":
                out.types[name] = _type_text(node, name, text)
            else:
                getattr(out, kind).add(name)
    return out


def _decls(node, text: str) -> list[tuple[str, str, object]]:
    """(name, kind, spec node) for one top-level declaration."""
    src = text.encode("utf-8")

    def t(n) -> str:
        return src[n.start_byte : n.end_byte].decode("utf-8")

    if node.type == "function_declaration":
        return [(t(node.child_by_field_name("name")), "funcs", node)]
    if node.type == "method_declaration":
        recv = node.child_by_field_name("receiver")
        decl = next((c for c in recv.children if c.type == "parameter_declaration"), None) if recv else None
        rtype = re.sub(r"\[.*\]$", "", t(decl.child_by_field_name("type")).lstrip("*").strip()) if decl else ""
        return [(f"{rtype}.{t(node.child_by_field_name('name'))}", "methods", node)]
    out = []
    if node.type == "type_declaration":
        for spec in node.children:
            if spec.type in ("type_spec", "type_alias"):
                out.append((t(spec.child_by_field_name("name")), "types", spec))
    elif node.type in ("var_declaration", "const_declaration"):
        for spec in walk(node):
            if spec.type in ("var_spec", "const_spec"):
                out += [(t(n), "values", spec) for n in spec.children if n.type == "identifier"]
    return out


def _type_text(node, name: str, text: str) -> str:
    src = text.encode("utf-8")
    for spec in node.children:
        if spec.type in ("type_spec", "type_alias"):
            n = spec.child_by_field_name("name")
            if src[n.start_byte : n.end_byte].decode() == name:
                typ = spec.child_by_field_name("type")
                return src[typ.start_byte : typ.end_byte].decode("utf-8") if typ is not None else ""
    return ""


def struct_fields(type_text: str) -> dict[str, str]:
    """Field name -> type of a struct type's text (`struct { A int; B, C string }`)."""
    tree = parse_go(f"package p\ntype T {type_text}\n")
    out: dict[str, str] = {}
    src = f"package p\ntype T {type_text}\n".encode()
    for fd in walk(tree.root_node):
        if fd.type == "field_declaration":
            ftype = fd.child_by_field_name("type")
            typ = norm_type(src[ftype.start_byte : ftype.end_byte].decode()) if ftype is not None else ""
            for n in fd.children:
                if n.type == "field_identifier":
                    out[src[n.start_byte : n.end_byte].decode()] = typ
    return out


@functools.lru_cache(maxsize=1)
def mirror_files() -> dict[str, str]:
    return {
        p.name: p.read_text(encoding="utf-8")
        for p in sorted(MIRROR_SIM.glob("*.go"))
        if not p.name.endswith("_test.go")
    }


def _drop(text: str, keep) -> str:
    """Remove the top-level declarations (with their doc comments) ``keep(name, kind)`` rejects."""
    tree = parse_go(text)
    data = text.encode("utf-8")
    cuts: list[tuple[int, int]] = []
    for node in tree.root_node.children:
        decls = _decls(node, text)
        if not decls:
            continue
        dropped = [d for d in decls if not keep(d[0], d[1])]
        if not dropped:
            continue
        if len(dropped) < len(decls):  # a group keeps some specs: cut only the dropped specs
            cuts += [(spec.start_byte, spec.end_byte) for _, _, spec in dropped]
            continue
        start = node
        prev = node.prev_sibling
        while prev is not None and prev.type == "comment" and prev.end_point[0] + 1 >= start.start_point[0]:
            start, prev = prev, prev.prev_sibling
        cuts.append((start.start_byte, node.end_byte))
    for a, b in sorted(cuts, reverse=True):
        data = data[:a] + data[b:]
    return _prune_imports(data.decode("utf-8"))


def _prune_imports(text: str) -> str:
    """Drop import specs whose package the remaining code no longer uses."""
    tree = parse_go(text)
    data = text.encode("utf-8")
    cuts = []
    for spec in walk(tree.root_node):
        if spec.type != "import_spec":
            continue
        path = data[spec.child_by_field_name("path").start_byte : spec.child_by_field_name("path").end_byte].decode()
        alias = spec.child_by_field_name("name")
        name = (
            data[alias.start_byte : alias.end_byte].decode()
            if alias is not None
            else path.strip('"').rsplit("/", 1)[-1]
        )
        if name == "_":
            continue
        if not re.search(rf"\b{re.escape(name)}\.", _without_imports(text)):
            # `import "sort"` alone: the declaration goes with its only spec (a bare `import` does not parse)
            node = spec.parent if spec.parent is not None and spec.parent.type == "import_declaration" else spec
            cuts.append((node.start_byte, node.end_byte))
    for a, b in sorted(cuts, reverse=True):
        data = data[:a] + data[b:]
    out = data.decode("utf-8")
    return re.sub(r"import \(\s*\)\n", "", out)


def _without_imports(text: str) -> str:
    return re.sub(r"^import\s*(\([^)]*\)|\"[^\"]*\")", "", text, flags=re.M)


def _program_text(src: EvolvedSource) -> str:
    """The evolved Go as package sim, with the standard imports a pasted function leaves out."""
    text = re.sub(r"^(\s*)package\s+\w+", r"\1package sim", src.go_text, count=1, flags=re.M)
    if re.search(r"^import\b", text, re.M):
        return text
    used = sorted({IMPLICIT_IMPORTS[p] for p in IMPLICIT_IMPORTS if re.search(rf"\b{p}\.[A-Z]", text)})
    if not used:
        return text
    block = "import (\n" + "".join(f'\t"{u}"\n' for u in used) + ")\n"
    return re.sub(r"^(package sim[^\n]*\n)", lambda m: m.group(1) + "\n" + block, text, count=1, flags=re.M)


#: The name the evolved program has in BLIS's composed package ``sim`` (a panic's stack names it).
PROGRAM_FILE = "evolved_program.go"


def program_line(src: EvolvedSource, at: str) -> int | None:
    """The evolved source's line for ``FILE:LINE`` of the composed package (None outside the program): the
    program is the source as written, plus any import block _program_text inserted after its package clause."""
    name, _, line = at.rpartition(":")
    if name != PROGRAM_FILE or not line.isdigit():
        return None
    program = _program_text(src).splitlines()
    added = len(program) - len(src.go_text.splitlines())
    package = next((i for i, ln in enumerate(program, 1) if ln.lstrip().startswith("package ")), 0)
    go_line = int(line) - added if int(line) > package + added else int(line)
    return src.to_original_line(go_line) if go_line >= 1 else None


@dataclass
class Composed:
    files: dict[str, str]  # file name -> text, package sim
    snapshot_fields: dict[str, str]  # RoutingSnapshot field -> type, as the program sees it
    request_fields: dict[str, str]
    receiver_fields: dict[str, str]
    notes: list[str] = field(default_factory=list)


def compose(src: EvolvedSource, an: Analysis) -> Composed:
    program = _program_text(src)
    mine = declared(program)
    files = dict(mirror_files())
    notes: list[str] = []
    two_arg = re.search(r"newScorerWithObserver\(\s*[^,()]+,\s*[^,()]+(\([^()]*\))?\s*\)", program)
    if two_arg:
        files["routing_scorer_new.go"] = (VARIANTS / "routing_scorer_new_2arg.go").read_text(encoding="utf-8")
        notes.append("the copy calls newScorerWithObserver(name, blockSize): the mirror's two-argument form")
    snapshot_type = mine.types.get("RoutingSnapshot")
    snap_fields = struct_fields(snapshot_type) if snapshot_type else struct_fields(_mirror_type("RoutingSnapshot"))
    request_type = mine.types.get("Request")
    req_fields = struct_fields(request_type) if request_type else struct_fields(_mirror_type("Request"))

    def keep(name: str, kind: str) -> bool:
        if kind == "types":
            return name not in mine.types
        if kind == "funcs":
            if name == "NewRoutingPolicy" and ("WeightedScoring" in mine.types or two_arg):
                return False
            return name not in mine.funcs
        if kind == "methods":
            return name.split(".")[0] not in mine.types and name not in mine.methods
        return name not in mine.values

    out: dict[str, str] = {}
    for name, text in files.items():
        if name == "routing_lora_scorer.go" and ("ResidentAdapters" not in snap_fields or "Adapter" not in req_fields):
            notes.append(
                "the copy's RoutingSnapshot has no ResidentAdapters: the mirror's lora-affinity scorer is left out"
            )
            continue
        text = _drop(text, keep)
        if "PendingRequests" in snap_fields and "InFlightRequests" not in snap_fields:
            text = re.sub(r"\.InFlightRequests\b", ".PendingRequests", text)
        if an.token_elem == "int":
            text = text.replace("type TokenID = int32", "type TokenID = int")
        out[name] = text
    if "PendingRequests" in snap_fields and "InFlightRequests" not in snap_fields:
        notes.append(counter_era.HARNESS_NOTE)
    elif an.dated_before:
        notes.append(counter_era.DATED_HARNESS_NOTE)
    host = an.host_info
    recv_fields: dict[str, str] = {}
    if host is not None and host.receiver_type:
        rtype = host.receiver_type
        if rtype in mine.types:
            recv_fields = struct_fields(mine.types[rtype])
        elif _mirror_type(rtype):
            recv_fields = struct_fields(_mirror_type(rtype))
        else:
            recv_fields = {f: t or "float64" for f, t in sorted(an.receiver_fields.items())}
            body = "".join(f"\t{f} {t}\n" for f, t in recv_fields.items())
            out["zz_promotion_receiver.go"] = (
                "// Generated by the promotion bot: the evolved method's receiver, declared nowhere in the program.\n"
                f"package sim\n\ntype {rtype} struct {{\n{body}}}\n"
            )
    out[PROGRAM_FILE] = program
    return Composed(out, snap_fields, req_fields, recv_fields, notes)


def _mirror_type(name: str) -> str:
    for text in mirror_files().values():
        d = declared(text)
        if name in d.types:
            return d.types[name]
    return ""
