"""The BLIS → llm-d translation dictionary (stage 1: Maps A, B and C).

The dictionary is data, not code: it lives as YAML under ``dictionary/`` so a
reviewer can correct a mapping without touching Python, and every promotion
reads the same, versioned answer. This module only validates that data (so a
typo fails loudly instead of silently mistranslating a signal), answers
lookups, and renders the human-readable copy committed to the fork as
``docs/promotion/translation-dictionary.md``.

Run ``python -m bot.dictionary`` to regenerate ``dictionary/schema.json`` after
changing the models; a test fails if the committed schema drifts.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from bot.model import (
    VVUQ,
    Family,
    HypothesisType,
    PolicyKind,
    RequestError,
    describe_validation_error,
    read_yaml_mapping,
)
from bot.yaml_safe import YamlInputError, read_yaml_text

#: Files that make up the dictionary, in load order; the key is the section each holds.
FILES: dict[str, str] = {
    "dictionary.yaml": "meta",
    "map-a-interfaces.yaml": "interfaces",
    "map-b-signals.yaml": "signals",
    "map-c-gaps.yaml": "gaps",
}

#: Pins every dictionary must carry: the versions the mappings were checked against.
REQUIRED_PINS = ("blis", "llm_d_router", "go", "llm_d_benchmark")

#: Variables an ``LlmdSource.expr`` may use, as bound by the generated signal adapter.
EXPR_VARS = {
    "m": "*fwkdl.Metrics (ep.GetMetrics()) of the endpoint being scored",
    "ep": "scheduling.Endpoint being scored",
    "req": "*scheduling.InferenceRequest being scheduled or admitted",
    "endpoints": "[]scheduling.Endpoint passed to Score / Admit",
}

SCOPE_ORDER = {"snapshot": 0, "request": 1, "state": 2, "method": 3}


class DictionaryError(RequestError):
    """The dictionary data is malformed: the message names the file and the field to fix."""


class _Strict(BaseModel):
    """Unknown keys are errors: a misspelt field in the YAML must not be ignored."""

    model_config = ConfigDict(extra="forbid")


# --------------------------------------------------------------------------
# Map A — interfaces
# --------------------------------------------------------------------------


class InterfaceMapping(_Strict):
    kind: PolicyKind
    blis_interface: str = Field(description="BLIS interface in package sim, e.g. RoutingPolicy")
    blis_method: str = Field(description="real Go signature at the pinned BLIS commit")
    blis_file: str = Field(default="", description="file that declares the interface")
    llmd_extension_point: str = Field(description="llm-d extension point, e.g. scheduling.Scorer")
    llmd_interface: str = Field(description="Go method set the generated plugin implements")
    llmd_import: str = Field(default="", description="Go import path of the llm-d interface package")
    target_dir: str = Field(description="branch-relative package dir, with {package} placeholder")
    reference_plugin: str = Field(default="", description="upstream plugin to model the generated code on")
    seed_said: str = Field(description="what the design doc (seed) said")
    why_changed: str | None = Field(default=None, description="None when the seed was right")
    notes: str = ""


# --------------------------------------------------------------------------
# Map B — signals
# --------------------------------------------------------------------------


class LlmdSource(_Strict):
    expr: str = Field(description="Go expression over m, ep, req (and endpoints) returning llmd_type")
    source: str = Field(description="where the value comes from in llm-d, for people")
    imports: list[str] = Field(default_factory=list, description="extra Go imports the expression needs")
    llmd_type: str | None = Field(default=None, description="Go type of expr when it differs from blis_type")
    replaces: str | None = Field(
        default=None, description="BLIS expression expr stands for when not the plain field, e.g. len(req.InputTokens)"
    )


class Freshness(_Strict):
    blis: str
    llmd: str
    gap: str | None = Field(default=None, description="non-None => the generated line needs an annotation")


class SignalEntry(_Strict):
    name: str = Field(description="canonical BLIS name at the pinned commit")
    aliases: list[str] = Field(default_factory=list, description="older names, e.g. PendingRequests")
    scope: Literal["snapshot", "request", "state", "method"]
    blis_type: str
    blis_access: str = Field(default="", description="how evolved code reads it, e.g. snap.QueueDepth")
    blis_scale: str | None = None
    llmd: LlmdSource | None = Field(description="None = untranslatable")
    fidelity: Literal["high", "medium", "low", "none"]
    freshness: Freshness
    gaps: list[str] = Field(default_factory=list, description="Map C ids this signal touches")
    expands_to: list[str] = Field(default_factory=list)
    fallback: str | None = None
    identifier_only: bool = False
    removed: str | None = None
    oracle: bool = False
    notes: str = ""

    @property
    def untranslatable(self) -> bool:
        return self.llmd is None

    @property
    def go_type(self) -> str:
        """The Go type the llm-d expression yields."""
        if self.llmd is not None and self.llmd.llmd_type:
            return self.llmd.llmd_type
        return self.blis_type

    @model_validator(mode="after")
    def _coherent(self) -> SignalEntry:
        if self.llmd is None and not self.fallback:
            raise ValueError(f"signal {self.name}: llmd is null, so 'fallback' must say what to do instead and why")
        if self.llmd is None and self.fidelity != "none":
            raise ValueError(f"signal {self.name}: llmd is null, so 'fidelity' must be 'none'")
        if self.llmd is not None and self.fidelity == "none":
            raise ValueError(f"signal {self.name}: fidelity 'none' requires llmd: null")
        if self.oracle and self.llmd is not None:
            raise ValueError(f"signal {self.name}: oracle signals (INV-9) cannot have an llm-d source")
        if self.expands_to and self.scope != "method":
            raise ValueError(f"signal {self.name}: only scope 'method' entries may set expands_to")
        return self


# --------------------------------------------------------------------------
# Map C — gaps
# --------------------------------------------------------------------------


class KindWording(_Strict):
    """A Track B sentence pair for one policy kind, where the default words (pods, spreading, herding) are a
    router's and would mislead a reviewer of, say, an admitter that never picks a pod."""

    statement: str = Field(description="BLIS family sentence pattern; may use {plugin} and {pods}")
    diagnostic: str = Field(description='"If this fails, it would indicate ..."')

    def filled(self, plugin: str, replicas: int | None = None) -> KindWording:
        """The wording with ``{plugin}`` and ``{pods}`` filled in: ``{pods}`` is "1 of N model-server pods" from the
        request's stack (the runner deletes one pod whatever the stack's size), or "one model-server pod" where
        the stack is not known (the gate-1 translation report), never a count the stack does not have."""
        pods = f"1 of {replicas} model-server pods" if replicas else "one model-server pod"

        def fill(text: str) -> str:
            return text.replace("{plugin}", plugin).replace("{pods}", pods)

        return KindWording(statement=fill(self.statement), diagnostic=fill(self.diagnostic))

    @model_validator(mode="after")
    def _diagnostic_clause(self) -> KindWording:
        if not self.diagnostic.startswith("If this fails, it would indicate"):
            raise ValueError('track_b.by_kind.*.diagnostic must begin "If this fails, it would indicate"')
        return self


class ProfileWording(KindWording):
    """A Track B sentence pair for a deployed profile that runs a given plugin, with its own per-kind words."""

    by_kind: dict[PolicyKind, KindWording] = Field(
        default_factory=dict, description="statement and diagnostic for a policy kind the profile's words do not fit"
    )


class TrackBTemplate(_Strict):
    family: Family
    vvuq: VVUQ = VVUQ.VALIDATION
    type: HypothesisType = HypothesisType.EQUIVALENCE
    statement: str = Field(description="BLIS family sentence pattern; may use {plugin} and {pods}")
    diagnostic: str = Field(description='"If this fails, it would indicate ..."')
    metric: str = Field(description="short metric name (bot.model.metrics)")
    direction: Literal["decrease", "increase", "equivalent", "no-worse"]
    workloads: str = Field(description="hint for the workloads / conditions to run it under")
    by_kind: dict[PolicyKind, KindWording] = Field(
        default_factory=dict, description="statement and diagnostic for a policy kind the default words do not fit"
    )
    by_profile: dict[str, ProfileWording] = Field(
        default_factory=dict,
        description=(
            "statement and diagnostic when the deployed EndpointPickerConfig runs the named plugin beside the evolved "
            "one (the first listed it runs wins, over by_kind): what carries a term depends on the profile"
        ),
    )

    @model_validator(mode="after")
    def _diagnostic_clause(self) -> TrackBTemplate:
        if not self.diagnostic.startswith("If this fails, it would indicate"):
            raise ValueError('track_b.diagnostic must begin "If this fails, it would indicate"')
        return self

    def worded_for(self, kind: PolicyKind | str | None, epp_plugins: list[str] | None = None) -> KindWording:
        """The (statement, diagnostic) a promotion of this kind reads, for a deployed config running
        ``epp_plugins`` (None: not known): the first matching profile's wording (its kind's, else its own), else
        the kind's, else the default. A sentence naming a scorer the profile does not run ("carried by
        prefix-cache-scorer"), or advice to add what it runs already, would send a reader to change a config
        that is right."""
        words: TrackBTemplate | ProfileWording = self
        for plugin, wording in self.by_profile.items():
            if epp_plugins is not None and plugin in epp_plugins:
                words = wording
                break
        if kind is not None and PolicyKind(kind) in words.by_kind:
            return words.by_kind[PolicyKind(kind)]
        return KindWording(statement=words.statement, diagnostic=words.diagnostic)


class GapEntry(_Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9-]*$")
    title: str = ""
    concern: str
    why_blis_cannot_model: str
    llmd_mechanism: str = Field(default="", description="what llm-d does about it today")
    risk: Literal["high", "medium", "low"]
    touched_by_kinds: list[PolicyKind]
    touched_by_signals: list[str] = Field(default_factory=list)
    in_seed: bool = Field(default=False, description="listed in the design doc's Map C")
    concern_by_kind: dict[PolicyKind, str] = Field(
        default_factory=dict, description="the concern for a policy kind the default words do not fit"
    )
    track_b: TrackBTemplate

    def concern_for(self, kind: PolicyKind | str | None) -> str:
        """The concern as a promotion of this kind reads it (an admitter's caveats do not talk of favouring a pod)."""
        if kind is not None and PolicyKind(kind) in self.concern_by_kind:
            return self.concern_by_kind[PolicyKind(kind)]
        return self.concern


# --------------------------------------------------------------------------
# The dictionary
# --------------------------------------------------------------------------


class Dictionary(_Strict):
    version: str = Field(pattern=r"^\d+\.\d+\.\d+$")
    pins: dict[str, str]
    seed_corrections: list[str] = Field(default_factory=list, description="'What changed since the design doc' notes")
    interfaces: list[InterfaceMapping]
    signals: list[SignalEntry]
    gaps: list[GapEntry]

    @model_validator(mode="after")
    def _cross_references(self) -> Dictionary:
        missing = [p for p in REQUIRED_PINS if p not in self.pins]
        if missing:
            raise ValueError(f"pins: missing {missing}")
        kinds = [i.kind for i in self.interfaces]
        if sorted(kinds) != sorted(PolicyKind):
            raise ValueError(
                f"interfaces: need exactly one mapping per kind {sorted(k.value for k in PolicyKind)}, got {sorted(k.value for k in kinds)}"
            )
        seen: dict[tuple[str, str], str] = {}
        for s in self.signals:
            for n in [s.name, *s.aliases]:
                key = (s.scope, n)
                if key in seen:
                    raise ValueError(f"signals: {s.scope} name {n!r} is used twice ({seen[key]} and {s.name})")
                seen[key] = s.name
        names = {s.name for s in self.signals}
        gap_ids = [g.id for g in self.gaps]
        if len(set(gap_ids)) != len(gap_ids):
            raise ValueError("gaps: ids must be unique")
        gaps = {g.id: g for g in self.gaps}
        for s in self.signals:
            for e in s.expands_to:
                if e not in names:
                    raise ValueError(f"signals[{s.name}].expands_to: {e!r} is not a signal")
            for gid in s.gaps:
                if gid not in gaps:
                    raise ValueError(f"signals[{s.name}].gaps: {gid!r} is not a Map C gap id")
                if s.name not in gaps[gid].touched_by_signals:
                    raise ValueError(
                        f"gaps[{gid}].touched_by_signals: must list {s.name} (signals[{s.name}].gaps names it)"
                    )
        for g in self.gaps:
            for sig in g.touched_by_signals:
                if sig not in names:
                    raise ValueError(f"gaps[{g.id}].touched_by_signals: {sig!r} is not a signal")
                if not any(g.id in s.gaps for s in self.signals if s.name == sig):
                    raise ValueError(f"signals[{sig}].gaps: must list {g.id} (gaps[{g.id}] names the signal)")
        return self

    # ---- lookups ---------------------------------------------------------

    def signal(self, name_or_alias: str, scope: str | None = None) -> SignalEntry | None:
        """Canonical entry for a name or older alias; snapshot scope wins when a name exists in several."""
        hits = [
            s
            for s in self.signals
            if (scope is None or s.scope == scope) and (s.name == name_or_alias or name_or_alias in s.aliases)
        ]
        if not hits:
            return None
        return min(hits, key=lambda s: (s.name != name_or_alias, SCOPE_ORDER[s.scope]))

    def interface(self, kind: PolicyKind | str) -> InterfaceMapping:
        kind = PolicyKind(kind)
        return next(i for i in self.interfaces if i.kind == kind)

    def gap(self, id: str) -> GapEntry:
        for g in self.gaps:
            if g.id == id:
                return g
        raise KeyError(id)

    def expand(self, signals: Iterable[str]) -> list[str]:
        """Canonical names, with aliases resolved and methods expanded (the method is kept), sorted; unknown names dropped."""
        out: set[str] = set()
        for name in signals:
            s = self.signal(name)
            if s is None:
                continue
            out.add(s.name)
            out.update(s.expands_to)
        return sorted(out)

    def touched_gaps(self, kind: PolicyKind | str, signals: Iterable[str]) -> list[str]:
        """Map C gaps a policy of this kind reading these signals must answer for (sorted ids).

        A gap is touched when it applies to the policy kind as a whole, or when
        any signal read (after alias resolution and method expansion) is one of
        its signals. Unknown signal names are ignored here; the translator
        reports them as unmapped.
        """
        kind = PolicyKind(kind)
        used = set(self.expand(signals))
        return sorted(g.id for g in self.gaps if kind in g.touched_by_kinds or used.intersection(g.touched_by_signals))


# --------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------


class _MetaFile(_Strict):
    version: str = Field(pattern=r"^\d+\.\d+\.\d+$")
    pins: dict[str, str]
    seed_corrections: list[str] = Field(default_factory=list)


class _InterfacesFile(_Strict):
    interfaces: list[InterfaceMapping]


class _SignalsFile(_Strict):
    signals: list[SignalEntry]


class _GapsFile(_Strict):
    gaps: list[GapEntry]


_FILE_MODELS: dict[str, type[_Strict]] = {
    "meta": _MetaFile,
    "interfaces": _InterfacesFile,
    "signals": _SignalsFile,
    "gaps": _GapsFile,
}


def dictionary_dir(root: Path | None = None) -> Path:
    if root is None:
        from bot import PROJECT_ROOT

        root = PROJECT_ROOT
    return Path(root) / "dictionary"


def _read_yaml(path: Path) -> dict:
    """The file's mapping, parsed once per path and text in a process (a private copy every time): every stage's
    context loads the dictionary, and parsing its YAML is nearly all of loading it."""
    try:
        text = read_yaml_text(path)  # refuses an oversized file before reading it
    except (OSError, UnicodeDecodeError, YamlInputError):
        return _parse(path, None)  # raises, naming the file and the problem
    return copy.deepcopy(_parsed(str(path), text))


@lru_cache(maxsize=2 * len(FILES))
def _parsed(path: str, text: str) -> dict:
    """Keyed by the whole text (not a digest of it); a file that fails raises every time, it is not kept."""
    return _parse(Path(path), text)


def _parse(path: Path, text: str | None) -> dict:
    missing = f"missing dictionary file; restore it from git (dictionary/ must hold {sorted(FILES)})"
    return read_yaml_mapping(path, DictionaryError, missing=missing, text=text)


def parse_cache_info():
    """Parses kept and reused (``functools.lru_cache``'s ``cache_info``): how often the files were really parsed."""
    return _parsed.cache_info()


def load_raw(root: Path | None = None) -> dict:
    """The four YAML files merged into one Dictionary-shaped mapping, each file validated on its own."""
    base = dictionary_dir(root)
    merged: dict = {}
    for fname, section in FILES.items():
        path = base / fname
        raw = _read_yaml(path)
        try:
            _FILE_MODELS[section].model_validate(raw)
        except ValidationError as exc:
            raise DictionaryError(f"{path}: {_describe(exc, raw)}") from None
        merged.update(raw)
    return merged


def content_digest(raw: dict) -> str:
    """sha256 of the merged YAML data except ``version``: what a version number stands for.

    ``dictionary/VERSIONS`` records one digest per version, and a test fails when
    the content changes under an unchanged version (the version is the only
    provenance stamped into generated code). Parsed data, not bytes, so comments
    and spacing are free to change.
    """
    body = {k: v for k, v in raw.items() if k != "version"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def load_dictionary(root: Path | None = None) -> Dictionary:
    """Read ``<root>/dictionary/*.yaml`` (root defaults to the project root) and validate it."""
    merged = load_raw(root)
    try:
        return Dictionary.model_validate(merged)
    except ValidationError as exc:
        # Each file validated on its own, so what is left is a cross-reference;
        # its message starts with the section it is about, which names the file.
        msg = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
        section = re.match(r"[a-z_]*", msg).group(0)
        fname = next((f for f, sec in FILES.items() if sec == section), "dictionary.yaml")
        if section == "pins":
            fname = "dictionary.yaml"
        raise DictionaryError(f"{dictionary_dir(root) / fname}: {msg}; fix the cross-reference") from None


def _describe(exc: ValidationError, raw: dict) -> str:
    """Like describe_validation_error, but list indices become the entry's name/id so people can find it."""
    err = exc.errors()[0]
    loc = list(err["loc"])
    node = raw
    pretty: list[str] = []
    for part in loc:
        if isinstance(part, int) and isinstance(node, list) and part < len(node):
            node = node[part]
            label = (node.get("name") or node.get("id") or node.get("kind")) if isinstance(node, dict) else None
            head = pretty.pop() if pretty else ""
            pretty.append(f"{head}[{label if label is not None else part}]")
            continue
        pretty.append(str(part))
        node = node.get(part) if isinstance(node, dict) else None
    text = describe_validation_error(exc).replace(
        "check the spelling against examples/", "check the spelling against dictionary/schema.json"
    )
    old = ".".join(str(p) for p in loc) or "(top level)"
    return text.replace(f"'{old}'", f"'{'.'.join(pretty) or '(top level)'}'", 1)


def schema_json() -> str:
    """The JSON schema of the Dictionary model, as committed in dictionary/schema.json."""
    return json.dumps(Dictionary.model_json_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":  # pragma: no cover - maintenance entry point
    target = dictionary_dir() / "schema.json"
    target.write_text(schema_json(), encoding="utf-8")
    print(f"wrote {target}")
