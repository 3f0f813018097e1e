"""Evidence belongs to this promotion: a report counts for an arm only if it measured that arm.

A report filed under ``evolved/`` says nothing about this promotion unless what it
records is what this plan ran for that arm: its EndpointPickerConfig (plugin types, their parameters, the
profiles, and every other top-level key but ``apiVersion``: ``flowControl``, ``featureGates``, ...), the model and the number of model-server replicas, the load it ran (``bot.bench.load_binding``) and
the Track B condition its directory names (``bot.bench.conditions.condition_reason``), and, when the runner recorded
them, the promotion id, the arm and the EPP image digest (``run.keywords``
``promotion:<id>``, ``arm:<arm>``, ``epp-image:<ref>@sha256:<digest>``), and the
EPP image tag the plan pins for both arms (``image_difference``), or, for results without the runner's
``manifest.json``, the tag the runner gives this promotion's own build (``runner_build_problem``). Anything else
is rejected with the reason, so another program's reports cannot confirm this plugin's hypotheses.

Where the EndpointPickerConfig is recorded: llm-d-benchmark's converter puts it in
``scenario.stack[].native.config`` only from ``LLMDBENCH_VLLM_MODELSERVICE_GAIE_PRESETS_CONFIG``, which nothing in
llm-d-benchmark sets (8bc9f1dd), and ``run --analyze`` re-converts on the driver with no ``scenario.stack`` at all.
What does survive is ``--run-keywords`` / a setup treatment's ``description.keywords``: the harness writes them to
``run_metadata.yaml`` (``description_keywords``) and both conversions copy them to ``run.keywords``. So the
runner and the plan's ``experiment.yaml`` record the config as ``epp-config:<config_digest>`` there, and a report
binds by the config it records in the stack when it has one (bundled samples, hand-made reports), by that keyword
when it has one (both must match when both are there), and is refused when it has neither (``config_hint``).

Sample and synthetic data (``run.keywords`` ``synthetic`` / ``sample-data``, or a
description that says so) is never evidence unless the person asks for a rehearsal
with ``--allow-sample-data``; then every verdict, the report and the PR say so.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.bench.conditions import Condition, condition_files, condition_reason, conditions_for
from bot.bench.custody import Custody
from bot.bench.fault_runs import RUN_FAULTS, unrecorded_fault
from bot.bench.layout import split_condition
from bot.bench.load_binding import PlannedLoad, planned_loads, workload_reason
from bot.bench.reports import Candidate, ReportSet, load_results
from bot.bench.run.manifest import MANIFEST
from bot.yaml_safe import load_yaml

SAMPLE_KEYWORDS = frozenset({"synthetic", "sample-data", "sample", "not-a-measurement"})
SAMPLE_FLAG = "SAMPLE DATA (--allow-sample-data): synthetic reports, not a measurement"
ALLOW_HINT = "pass --allow-sample-data to rehearse with it"


def keywords(doc: dict) -> list[str]:
    kws = (doc.get("run") or {}).get("keywords") or []
    return [str(k) for k in kws] if isinstance(kws, list) else []


def keyword_value(doc: dict, name: str) -> str | None:
    prefix = f"{name}:"
    return next((k[len(prefix) :] for k in keywords(doc) if k.startswith(prefix)), None)


def is_sample(doc: dict) -> bool:
    kws = {k.lower() for k in keywords(doc)}
    description = str((doc.get("run") or {}).get("description") or "").lower()
    return bool(kws & SAMPLE_KEYWORDS) or "synthetic sample data" in description or "not a measurement" in description


def epp_component(doc: dict) -> dict | None:
    """The stack component that carries the EndpointPickerConfig (upstream: 'Inference Scheduler (EPP)')."""
    for comp in (doc.get("scenario") or {}).get("stack") or []:
        config = ((comp or {}).get("native") or {}).get("config")
        if isinstance(config, dict) and config.get("kind") == "EndpointPickerConfig":
            return comp
    return None


def config_digest(config: Any) -> str:
    """``sha256:<hex>`` of an EndpointPickerConfig as parsed (key order, YAML layout and comments do not count):
    the ``epp-config:`` keyword that records which config a run deployed, where llm-d-benchmark records none."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def arm_keywords(promotion: str, arm: str, config: Any) -> list[str]:
    """The run keywords that bind a run to one arm of a promotion: what the runner passes with ``--run-keywords``
    and the plan's ``experiment.yaml`` sets as each setup treatment's ``description.keywords``."""
    return [f"promotion:{promotion}", f"arm:{arm}", f"epp-config:{config_digest(config)}"]


def _engines(doc: dict) -> list[dict]:
    return [
        c.get("standardized") or {}
        for c in (doc.get("scenario") or {}).get("stack") or []
        if isinstance(c, dict) and (c.get("standardized") or {}).get("kind") == "inference_engine"
    ]


def _plugins(config: dict) -> dict[str, tuple[str, Any]]:
    """name -> (type, parameters) of an EndpointPickerConfig's plugins (name defaults to type)."""
    out = {}
    for p in config.get("plugins") or []:
        if isinstance(p, dict):
            out[str(p.get("name") or p.get("type"))] = (str(p.get("type")), p.get("parameters") or {})
    return out


def config_difference(recorded: dict, expected: dict) -> str | None:
    """Every way ``recorded`` differs from ``expected``, joined with "; " (None when they are the same config):
    after gate 1 changed a value and the scorers, naming only the first left the others to be found by re-running."""
    got, want = _plugins(recorded), _plugins(expected)
    out = []
    got_types, want_types = {t for t, _ in got.values()}, {t for t, _ in want.values()}
    if got_types != want_types:
        out.append(f"plugins {sorted(got_types)} instead of {sorted(want_types)}")
    for name in sorted(want):
        if name not in got:
            if got_types == want_types:  # the same types under other names; a missing type is said above
                out.append(f"no plugin named {name!r}")
            continue
        mine, plans = got[name][1], want[name][1]
        for key in sorted(set(mine) | set(plans), key=str):
            if mine.get(key) != plans.get(key):
                out.append(f"plugin {name!r} parameter {key!r} is {mine.get(key)!r}, the plan's is {plans.get(key)!r}")
    if _canon(recorded.get("schedulingProfiles")) != _canon(expected.get("schedulingProfiles")):
        out.append("schedulingProfiles differ (plugin weights or order)")
    for key in sorted((set(recorded) | set(expected)) - _COMPARED_APART - _NO_DECISION, key=str):
        out.extend(_value_differences(str(key), recorded.get(key, _ABSENT), expected.get(key, _ABSENT)))
    return "; ".join(out) or None


#: Top-level keys compared above, in their own terms.
_COMPARED_APART = frozenset({"plugins", "schedulingProfiles"})
#: Top-level keys that cannot change what the EPP decides: the schema's spelling (``llm-d.ai/v1alpha1`` or the
#: older ``inference.networking.x-k8s.io/v1alpha1``) and the kind (``epp_component`` already required it).
#: Every other key does (``flowControl`` decides who owns admission, ``featureGates`` turns code paths on, the
#: data and saturation sections feed the scorers), so a config that differs there measured another arm.
_NO_DECISION = frozenset({"apiVersion", "kind"})
_ABSENT = object()


def _value_differences(path: str, got: Any, want: Any) -> list[str]:
    """Each place a value differs from the plan's, named by its dotted path down to the leaf that differs."""
    if got is not _ABSENT and want is not _ABSENT and _canon(got) == _canon(want):
        return []
    if isinstance(got, dict) and isinstance(want, dict):
        return [
            diff
            for key in sorted(set(got) | set(want), key=str)
            for diff in _value_differences(f"{path}.{key}", got.get(key, _ABSENT), want.get(key, _ABSENT))
        ]
    return [f"{path} is {_say(got)}, the plan's is {_say(want)}"]


def _say(value: Any) -> str:
    return "absent" if value is _ABSENT else json.dumps(value, sort_keys=True, default=str)


def _canon(x: Any) -> str:
    return json.dumps(x, sort_keys=True, default=str)


def image_tag(ref: str) -> str | None:
    """The tag of ``[registry/]repository:tag[@sha256:...]``; None when there is none (a registry port is not one)."""
    name = ref.strip().split("@", 1)[0]
    _, sep, tag = name.rpartition(":")
    return tag if sep and tag and "/" not in tag else None


def runner_tag(promotion: str, commit: str) -> str:
    """The tag ``promote bench run`` gives the EPP image it builds (``bot.bench.run.image.image_ref``): the
    promotion and the commit it was built from, so the tag itself says which promotion and commit it holds."""
    return f"promotion-{promotion}-{commit[:12]}"


_RUNNER_TAG = re.compile(r"promotion-(?P<promotion>[0-9A-Za-z][0-9A-Za-z-]*)-(?P<commit>[0-9a-f]{12})")
_COMMIT = re.compile(r"[0-9a-f]{40}")


def runner_build(ref: str) -> tuple[str, str] | None:
    """(promotion, 12-digit commit) of an image ``promote bench run`` built (``runner_tag``); None for any other."""
    match = _RUNNER_TAG.fullmatch(image_tag(ref) or "")
    return (match["promotion"], match["commit"]) if match else None


def runner_build_problem(doc: dict, ref: str, promotion: str | None) -> str | None:
    """Why the runner-built image ``ref`` a report records is not this promotion's runner build (None: it is).

    Without the run's manifest nothing records which image the runner built, but its tag does: this promotion's
    id and the commit it was built from, which the runner also passes as the ``commit:`` keyword of every run.
    So the report counts when the tag names this promotion and the commit its own ``commit:`` keyword records;
    another promotion's build, or a tag that names another commit than the run says it measured, does not.
    """
    built = runner_build(ref)
    if built is None:
        return "its tag is not the one `promote bench run` gives the image it builds (promotion-<id>-<commit>)"
    tag_promotion, tag_commit = built
    if promotion is None:
        return f"it is promotion {tag_promotion}'s runner build, and nothing says which promotion these results are for"
    if tag_promotion != promotion:
        return f"it is promotion {tag_promotion}'s runner build, not promotion {promotion}'s"
    commit = keyword_value(doc, "commit")
    if commit is None:
        return "the report records no commit: keyword, so nothing shows which commit that tag's build holds"
    if not _COMMIT.fullmatch(commit) or not commit.startswith(tag_commit):
        return f"its tag names commit {tag_commit}, but the run records commit:{commit}"
    return None


def image_difference(recorded: str, pinned: str) -> str | None:
    """How the image a report records differs from the one pinned for it (None: the same build, as far as shown).

    Only the tags are compared. The tag names the build (``promotion-<id>-<slug>`` from the experiment,
    ``promotion-<id>-<commit>`` from ``promote bench run``), while the registry and repository come from
    configuration and differ between the two ways of running one plan (``ghcr.io/<fork>`` in experiment.yaml,
    ``--image-repo`` / the config's ``image_repo`` for the runner), so they say nothing about which plugin ran.
    The digest, when the runner recorded one, is checked apart (``EvidencePolicy._image``). A recorded value
    with no tag (a bare version) cannot be compared and is not held against the report. The runner's tag is
    compared with the one its manifest records; results without their manifest are bound to this promotion's
    runner build by ``runner_build_problem`` instead (``EvidencePolicy.no_manifest``).
    """
    got, want = image_tag(recorded), image_tag(pinned)
    if got is None or want is None or got == want:
        return None
    return f"tag {got!r}, the plan's is {want!r}"


@dataclass
class EvidencePolicy:
    """What a report must record to count as evidence for one arm of this promotion's plan.

    ``arms`` maps arm -> EndpointPickerConfig (parsed); None fields are not checked (a local
    ``promote evaluate`` without the plan's evaluation spec can only check sample data).
    """

    promotion: str | None = None
    arms: Mapping[str, dict] | None = None
    model: str | None = None
    replicas: int | None = None
    condition_replicas: Mapping[str, int] = field(default_factory=dict)
    image_digest: str | None = None
    evolved_image: str | None = None  # registry/repository:tag pinned for both arms (image_difference)
    allow_sample_data: bool = False
    sample_used: int = 0
    #: workload -> the load the plan runs for it (``bot.bench.load_binding``); empty: checked against labels only
    workloads: Mapping[str, PlannedLoad] = field(default_factory=dict)
    #: results-relative report -> why it is no evidence although it is valid (a run whose fault never happened)
    not_evidence: Mapping[str, str] = field(default_factory=dict)
    #: the run manifest's record of the reports (``bot.bench.custody``); None: no manifest, nothing to hold them to
    custody: Custody | None = None
    #: the results have no run manifest (``bot.bench.run_evidence``): a report of an image the runner built,
    #: which no manifest names, binds by its tag and commit keyword (``runner_build_problem``) instead of the pin
    no_manifest: bool = False
    #: why the plugin code at a runner build's commit is not this branch's (None: it is the same); given by stage 5,
    #: which can read the fork at that commit: what a manifest's ``plugin_files`` vouch for, checked at the source
    plugin_commit: Callable[[str], str | None] | None = None
    #: results-relative report -> the commit of the runner build it was bound to by its tag (``no_manifest``)
    runner_commits: dict[str, str] = field(default_factory=dict)
    #: Track B condition -> the plan's committed experiment files that run its cells (``condition_files``): what
    #: ``config_hint`` names for a cell under it; empty: not known (no spec, or one that records no stack)
    condition_files: Mapping[str, list[str]] = field(default_factory=dict)
    _plugin_checked: dict[str, str | None] = field(default_factory=dict, repr=False)

    def bind(self, c: Candidate) -> str | None:
        if problem := self.held(c.rel, c.sha256):
            return problem
        if c.rel in self.not_evidence:
            return self.not_evidence[c.rel]
        doc = c.doc
        reason = self._keywords(doc, c.key.treatment)
        reason = reason or condition_reason(doc, c.rel, split_condition(c.key.workload)[1])
        reason = reason or workload_reason(doc, c.key, self.workloads)
        reason = reason or self._epp(doc, c.key.treatment, c.key.workload) or self._stack(doc, c.key.workload)
        reason = reason or self._image(doc) or self._pinned_image(doc, c.key.treatment, c.rel)
        return reason or self._fault_unrecorded(doc, split_condition(c.key.workload)[1])

    def _fault_unrecorded(self, doc: dict, condition: str | None) -> str | None:
        """Why a report under a run fault (``RUN_FAULTS``) is no evidence about it when its results have no
        manifest, whatever image it records: only the manifest records whether each run's fault happened
        (``fault_runs``). The runner's build bound by its tag, the image the plan pins (``--image <pin>``, or a
        run from the plan's own files) and a report that records no image are alike in that: nothing else says
        a pod was ever deleted, so none of them decides a claim about pod failure. Sample data (a rehearsal with
        ``--allow-sample-data``, as the bundled example's) measured no run at all, and every verdict on it says so."""
        if self.no_manifest and condition in RUN_FAULTS and not is_sample(doc):
            return unrecorded_fault(str(condition))
        return None

    def held(self, rel: str, sha256: str) -> str | None:
        """Why the result at ``rel`` with these bytes is not the one the run manifest recorded (None: it is, or there
        is no manifest): one custody rule for v0.2 reports and priority-mix results alike."""
        return self.custody.problem(rel, sha256) if self.custody is not None else None

    def bind_recorded(self, doc: dict, arm: str, rel: str = "") -> str | None:
        """The rules a result that records only ``run.keywords`` / ``run.description`` can be held to (sample
        data, promotion, arm, EPP config, EPP image): what ``bot.bench.priority_mix`` binds its runs by."""
        return (
            self._keywords(doc, arm)
            or self._keyword_config(doc, arm)
            or self._image(doc)
            or self._pinned_image(doc, arm, rel)
        )

    def _keyword_config(self, doc: dict, arm: str) -> str | None:
        """The ``epp-config:`` keyword of a result with no stack, checked as a report's is (``_config_keyword``):
        the runner and the plan's priority-mix/experiment.yaml pass it for priority-mix runs too, so a run recorded
        for the other arm's config, or for a config the plan has since changed, is refused. A run without one is
        refused by ``bot.bench.priority_mix.bind_with``, in a priority-mix run's own words."""
        recorded = keyword_value(doc, "epp-config")
        if recorded is None or not self.arms:
            return None
        expected = self.arms.get(arm)
        if expected is None:
            return f"arm {arm!r} is not in this plan ({', '.join(sorted(self.arms))})"
        return self._config_keyword(recorded, expected, arm)

    def _keywords(self, doc: dict, arm: str) -> str | None:
        if is_sample(doc):
            if not self.allow_sample_data:
                return f"sample data, not a measurement (run.keywords / run.description say so); {ALLOW_HINT}"
            self.sample_used += 1
        promotion = keyword_value(doc, "promotion")
        if self.promotion is not None and promotion is not None and promotion != self.promotion:
            return f"belongs to promotion {promotion!r} (run.keywords), not {self.promotion!r}"
        recorded = keyword_value(doc, "arm")
        if recorded is not None and recorded != arm:
            return f"run.keywords says arm {recorded!r}, but it is filed under {arm!r}"
        return None

    def _epp(self, doc: dict, arm: str, workload: str = "") -> str | None:
        if not self.arms:
            return None
        expected = self.arms.get(arm)
        if expected is None:
            return f"arm {arm!r} is not in this plan ({', '.join(sorted(self.arms))})"
        comp = epp_component(doc)
        recorded = keyword_value(doc, "epp-config")
        if comp is None and recorded is None:
            return self.config_hint(arm, expected, split_condition(workload)[1])
        if comp is not None and (problem := self._recorded_config(comp["native"]["config"], expected, arm)):
            return problem
        return self._config_keyword(recorded, expected, arm) if recorded is not None else None

    def _recorded_config(self, recorded: dict, expected: dict, arm: str) -> str | None:
        diff = config_difference(recorded, expected)
        if diff is None:
            return None
        other = next(
            (a for a, cfg in sorted(self.arms.items()) if a != arm and config_difference(recorded, cfg) is None), None
        )
        if other is not None:
            return f"its EPP config is the {other} arm's, but it is filed under {arm}"
        return f"EPP config differs from the {arm} arm's in this plan: {diff}"

    def _config_keyword(self, recorded: str, expected: dict, arm: str) -> str | None:
        """The ``epp-config:`` keyword against the arm's config: a digest says only *whether* it is the same."""
        if recorded == config_digest(expected):
            return None
        other = next((a for a, cfg in sorted(self.arms.items()) if a != arm and config_digest(cfg) == recorded), None)
        if other is not None:
            return f"run.keywords epp-config:{recorded} is the {other} arm's EPP config, but it is filed under {arm}"
        return (
            f"run.keywords epp-config:{recorded} is not the {arm} arm's EPP config in this plan "
            f"({config_digest(expected)}): it ran another config (the plan changed since, or another program's)"
        )

    def config_hint(self, arm: str, expected: dict, condition: str | None = None) -> str:
        """Why a report with no config record is refused, and how to run so that it has one (true of
        llm-d-benchmark: it never fills scenario.stack[].native.config, but it keeps --run-keywords). A cell under
        a Track B condition is not in the main experiment.yaml: its own files are named (``_condition_hint``)."""
        head = (
            "records no EPP config: neither an EndpointPickerConfig in scenario.stack[].native.config (llm-d-benchmark "
            "leaves it empty) nor an epp-config: keyword in run.keywords, so it cannot show which arm it measured; "
        )
        if condition is not None:
            return head + self._condition_hint(arm, condition)
        kws = ",".join(arm_keywords(self.promotion or "<id>", arm, expected))
        return head + (
            "run the plan with `promote bench run` or from its experiment.yaml (both record it), or by hand one arm "
            f"at a time with `llmdbenchmark --run-keywords {kws} ...` for the {arm} arm"
        )

    def _condition_hint(self, arm: str, condition: str) -> str:
        """How to rerun a cell under ``condition`` so its reports record the config and the condition: from the
        condition's own committed file, which sets every keyword. Not ``--run-keywords``: a file's setup treatment
        keywords replace them (so a run-level condition has one file per arm, ``condition_files``)."""
        files = self.condition_files.get(condition, [])
        own = next((f for f in files if f.endswith(f"/{arm}.yaml")), None)
        if own is not None and condition in RUN_FAULTS:  # only the runner's manifest records that the fault happened
            return (
                f"run the cell with `promote bench run`, which runs it from the {arm} arm's own file {own}, applies "
                "the fault and records in manifest.json whether it happened (a by-hand run cannot show that)"
            )
        if own is not None:
            return (
                f"run the cell with `promote bench run` (it applies the fault and records it), or by hand from the "
                f"{arm} arm's own file {own} while applying the fault in every run as its header says: the file sets "
                f"every keyword the report needs, condition:{condition} too (add no --run-keywords: the file's "
                "replace them)"
            )
        if files:
            return (
                f"run the cell with `promote bench run` or from {files[0]} (both record it; the plan's main "
                f"experiment.yaml does not run cells under condition {condition!r})"
            )
        return (
            f"run the cell with `promote bench run` (it records it), or by hand from the plan's own file for "
            f"condition {condition!r} ({condition}/{arm}.yaml or {condition}/experiment.yaml beside its "
            "experiment.yaml, which sets every keyword the report needs); the main experiment.yaml does not run "
            "cells under a condition"
        )

    def _stack(self, doc: dict, workload: str) -> str | None:
        engines = _engines(doc)
        if not engines or (self.model is None and self.replicas is None):
            return None
        models = sorted({str((e.get("model") or {}).get("name")) for e in engines})
        if self.model is not None and models != [self.model]:
            return f"measured model {', '.join(models)}, but the plan's stack serves {self.model}"
        condition = split_condition(workload)[1]
        want = self.condition_replicas.get(condition or "", self.replicas)
        replicas = sum(int(e.get("replicas") or 0) for e in engines)
        if want is not None and replicas != want:
            return f"{replicas} model-server replicas, but the plan's stack has {want}"
        return None

    def _image(self, doc: dict) -> str | None:
        if self.image_digest is None:
            return None
        recorded = keyword_value(doc, "epp-image")
        comp = epp_component(doc) or {}
        version = str((comp.get("standardized") or {}).get("tool_version") or "")
        for ref in (recorded, version):
            if ref and "@sha256:" in ref and ref.split("@", 1)[1] != self.image_digest:
                return f"EPP image {ref} is not the one built for this promotion (@{self.image_digest})"
        return None

    def _pinned_image(self, doc: dict, arm: str, rel: str = "") -> str | None:
        """A report of either arm that ran another image measured another build, even when its plugin config
        matches: the plan runs *one* EPP image for both arms (``bot.bench.experiment``), so the config is the only
        difference between them, and a baseline on another router build confounds the router with the plugin. It
        is left out with both images named, like a config mismatch. (The field keeps its name, ``evolved_image``:
        it is what evaluation.yaml calls the pin.) Without a manifest, a report under a run fault is refused
        whatever its image (``_fault_unrecorded``)."""
        if self.evolved_image is None:
            return None
        comp = epp_component(doc) or {}
        version = str((comp.get("standardized") or {}).get("tool_version") or "")
        for ref in (keyword_value(doc, "epp-image"), version):
            diff = image_difference(ref, self.evolved_image) if ref else None
            if diff is None:
                continue
            if self.no_manifest and runner_build(ref) is not None:
                if (problem := runner_build_problem(doc, ref, self.promotion)) is None:
                    commit = str(keyword_value(doc, "commit"))
                    if other_code := self._plugin_problem(commit):
                        return f"its {arm} EPP image {ref} is `promote bench run`'s build, and these results have no {MANIFEST}: {other_code}"
                    self.runner_commits[rel] = commit
                    continue  # this promotion's runner build, named by its tag and commit
                return (
                    f"its {arm} EPP image {ref} is an image `promote bench run` built, and these results have no "
                    f"{MANIFEST} to say which: {problem}; put back the {MANIFEST} of the run that wrote it, or "
                    f"benchmark this promotion's commit again"
                )
            return (
                f"its {arm} EPP image {ref} is not the one this plan pins for both arms "
                f"({self.evolved_image}): {diff}, so it measured another build or plugin"
            )
        return None

    def _plugin_problem(self, commit: str) -> str | None:
        """Why ``commit`` holds other plugin code than this branch's (``plugin_commit``), asked once per commit."""
        if self.plugin_commit is None:
            return None
        if commit not in self._plugin_checked:
            self._plugin_checked[commit] = self.plugin_commit(commit)
        return self._plugin_checked[commit]

    def one_runner_commit(self, items: list, rejected: list[tuple[str, str]]) -> list:
        """``items`` (bound reports or runs) less those of runner builds bound by their tag, when those name more
        than one commit: a run measures one commit (the runner refuses to mix two in one results directory, and its
        manifest names the one), so reports of two are two runs' results merged, and nothing without the manifest
        says which is this branch's. A build whose plugin code differs from the branch's was refused already
        (``plugin_commit``), so what is left here is undecided; each is refused with the commits and the fix."""
        commits = {i.rel: self.runner_commits[i.rel] for i in items if i.rel in self.runner_commits}
        distinct = sorted(set(commits.values()))
        if len(distinct) < 2:
            return items
        reason = (
            f"these results have no {MANIFEST} and hold reports of runner builds of {len(distinct)} commits "
            f"({', '.join(c[:12] for c in distinct)}): one run measures one commit, and nothing here says which of "
            f"them is this branch's; keep only one run's results in the results directory, or put back the "
            f"{MANIFEST} of the run that wrote them"
        )
        rejected.extend((rel, reason) for rel in commits)
        return [i for i in items if i.rel not in commits]

    def notes(self, used: Iterable[str] = ()) -> list[str]:
        """What every verdict on the ``used`` reports must say: sample data, and reports bound without a manifest."""
        out = [SAMPLE_FLAG] if self.sample_used else []
        commits = sorted({self.runner_commits[rel] for rel in used if rel in self.runner_commits})
        if commits:  # one at most: reports of two were refused (one_runner_commit)
            checked = (
                "its plugin code is this branch's (read from the fork at that commit)"
                if self.plugin_commit is not None
                else "nothing checked that its plugin code is the branch's"
            )
            out.append(
                f"Reports bound without the run's {MANIFEST}: those of the runner's build of commit "
                f"{commits[0][:12]} count by its image tag ({runner_tag(self.promotion or '<id>', commits[0])}) and "
                f"their commit: keyword, and {checked}; no manifest held their bytes, faults or GPU time to the record "
                "of the run"
            )
        return out


def load_evidence(results_dir, policy: EvidencePolicy) -> ReportSet:
    """``load_results`` with this promotion's evidence rules; the set's notes say when sample data was used."""
    from bot.bench.errors import NoUsableReports, ReportError

    try:
        reports = load_results(
            results_dir, binder=policy.bind, settle=policy.one_runner_commit, planned=policy.workloads
        )
    except ReportError as exc:
        if "sample data, not a measurement" in str(exc):
            raise NoUsableReports(
                results_dir,
                "every report there is sample data, not a measurement",
                f"{ALLOW_HINT} (every verdict, the report and the PR will say so)",
            ) from None
        raise
    reports.notes = policy.notes(reports.loaded)
    return reports


def policy_from_spec(
    spec: Any,
    *,
    allow_sample_data: bool,
    image_digest: str | None = None,
    image_ref: str | None = None,
    image_built: bool = True,
    request: Any = None,
) -> EvidencePolicy:
    """The evidence rules of an evaluation spec (``bot.bench.evaluation_spec.EvaluationSpec``).

    The evolved arm's image is the one the runner recorded (``image_ref``, from its manifest) when it built it
    from the approved commit, else the one experiment.yaml pins (``spec.evolved_image``). A manifest's digest
    without its ref binds the reports by digest alone: the runner's tag is not the experiment's. An image the
    runner was given (``image_built`` False: ``--image``) proves nothing about what it holds, so it stands for
    no pin of its own: its reports count only as reports of the plan's pinned image, like any other report.
    ``request`` (the promotion request) gives the plan's workloads, so each report's load is checked against them.
    """
    arms = {name: load_yaml(text) for name, text in (spec.arms or {}).items()} or None
    stack = spec.stack
    if not image_built:
        pinned = spec.evolved_image
    else:
        pinned = image_ref or (spec.evolved_image if image_digest is None else None)
    return EvidencePolicy(
        promotion=spec.promotion,
        arms=arms,
        model=stack.model if stack else None,
        replicas=stack.replicas if stack else None,
        condition_replicas=dict(spec.condition_replicas or {}),
        image_digest=image_digest,
        evolved_image=pinned,
        allow_sample_data=allow_sample_data,
        workloads=planned_loads(request) if request is not None else {},
        condition_files=_condition_files(spec),
    )


def _condition_files(spec: Any) -> dict[str, list[str]]:
    """Condition -> the committed files that run its cells (``condition_files``), for each condition the spec's
    stack can run; empty for a spec that records no stack (the cluster decides which conditions exist)."""
    if spec.stack is None:
        return {}
    root = f"benchmarks/promotion/{spec.slug}"  # where render_experiment commits them (bot.bench.experiment)
    found = conditions_for(spec.stack).items()
    return {name: condition_files(root, name, c) for name, c in found if isinstance(c, Condition)}


def mark_sample(verdicts: list, reports: ReportSet) -> list:
    """Every verdict built on sample data says so, in its flags and its first words."""
    if SAMPLE_FLAG not in reports.notes:
        return verdicts
    return [
        v.model_copy(update={"flags": [SAMPLE_FLAG, *v.flags], "summary": f"[SAMPLE DATA] {v.summary}"})
        for v in verdicts
    ]
