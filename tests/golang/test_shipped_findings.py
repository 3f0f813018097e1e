"""What ships says what the translation found (upstream2 #2, #3): an upstream maintainer reads the package and the
sample config, never the translation report on the fork.

Found by a maintainer review: a01's admitter keeps a map keyed by a client-chosen header that grows with every
distinct fairness id, and the translator knew (an IMPORTANT finding), but the shipped README's Caveats said
nothing (the plugin now caps that map, a parameter the README's table documents); s01's scorer decides like the BLIS original less often than queue-scorer alone and, on llm-d's default
priority-0 traffic, scores like queue-scorer, but its sample config sets its weight with no word of it.
"""

from __future__ import annotations

from types import SimpleNamespace

import yaml

from bot.escape import md
from bot.golang.plugin_summary import DEFAULT_TRAFFIC, ship, with_caveats
from bot.model import Fidelity, Finding, Severity

from .conftest import CORPUS, translate_path


def _file(tr, suffix: str) -> str:
    return next(t for p, t in tr.files.items() if p.endswith(suffix))


def _caveats(tr) -> str:
    return _file(tr, "/README.md").split("\n## Caveats\n", 1)[1]


def _says(caveats: str, f: Finding) -> bool:
    """The caveats say the finding in its own words (its check id names the translator's checklist, which an
    upstream reader does not have, so they never show it)."""
    return md(" ".join(f.message.split()))[:60] in " ".join(caveats.split()) and f"`{f.check}`" not in caveats


def test_a01s_readme_names_the_cap_on_the_client_keyed_map_and_every_open_important_finding(dictionary):
    """The map keyed by the fairness id is capped now (state_caps): the README's parameter table says so beside
    the cap, and the finding, a SUGGESTION since the memory is bounded, is no caveat claiming unbounded growth."""
    _, _, tr = translate_path(CORPUS / "a01_pattern_c_adaptive_admission.go", dictionary)
    caveats = _caveats(tr)
    assert "`hazard.unbounded-client-keyed-state`" not in caveats and "without limit" not in caveats
    readme = _file(tr, "/README.md")
    assert "| `maxTrackedTenantCounts` | `10000` | Caps the evolved map `tenantCounts`" in readme
    shipped = [f for f in tr.findings if f.severity in (Severity.CRITICAL, Severity.IMPORTANT)]
    assert shipped and all(_says(caveats, f) for f in shipped)
    for f in tr.findings:
        if f.severity is Severity.SUGGESTION:
            assert not _says(caveats, f)
    said = [ln for ln in caveats.splitlines() if ln.startswith("- Known limitation")]
    assert len(said) == len(set(said)) == len({(f.check, f.message) for f in shipped})


def test_s01s_config_says_at_its_weight_that_it_scores_like_queue_scorer_on_default_traffic(dictionary):
    _, _, tr = translate_path(CORPUS / "s01_slo_aging_scheduler.go", dictionary)
    f = tr.summary.fidelity
    assert f.reference_agreement is not None and f.agreement + 0.005 < f.reference_agreement  # below the reference
    config = next(t for p, t in tr.files.items() if p.startswith("deploy/config/"))
    assert tr.epp_config == config
    lines = config.splitlines()
    at = lines.index(f"  - pluginRef: {tr.summary.plugin_type}")
    note = []
    for ln in reversed(lines[:at]):
        if not ln.startswith("  # "):
            break
        note.insert(0, ln[4:])
    text = " ".join(note)
    assert f"{f.agreement:.1%}" in text and f"{f.reference_agreement:.1%}" in text
    assert "priority 0" in text and "adds weight to queue length" in text
    assert yaml.safe_load(config)["schedulingProfiles"]  # still YAML
    assert config in _file(tr, "/README.md")  # the README's Configuration block is the shipped config
    caveats = _caveats(tr)
    for check in ("translate.fidelity-below-reference", "hazard.unreachable-slo-branch"):
        assert any(f.check == check and _says(caveats, f) for f in tr.findings), check


def test_an_admitters_reference_is_always_admit_and_its_config_gets_no_note(dictionary):
    from bot.golang.fidelity_admit import ALWAYS_ADMIT

    _, _, tr = translate_path(CORPUS / "a02_gaie_saturation_shedder.go", dictionary, "evolved-saturation-shedder")
    assert tr.summary.fidelity.reference == ALWAYS_ADMIT and tr.summary.fidelity.reference_agreement is not None
    assert DEFAULT_TRAFFIC not in tr.epp_config
    assert "translate.fidelity-below-reference" not in {f.check for f in tr.findings}


def test_findings_anchored_below_the_note_move_with_their_line_and_a_caveat_is_never_said_twice():
    config = "plugins:\n- type: p\nschedulingProfiles:\n- name: default\n  plugins:\n  - pluginRef: p\n    weight: 2\n"
    readme = f"# p\n\n```yaml\n{config}```\n\n## Caveats\n\n- One thing.\n"
    gen = SimpleNamespace(package_dir="pkg/p", config_path="deploy/config/p-epp-config.yaml")
    files = {gen.config_path: config, "pkg/p/README.md": readme, "pkg/p/p.go": "package p\n"}
    below = Fidelity(states=10, agreement=0.5, floor=0.9, reference="queue-scorer alone", reference_agreement=0.9)
    weight = Finding(severity=Severity.IMPORTANT, check="x.weight", message="the weight", file=gen.config_path, line=7)
    kind = Finding(severity=Severity.IMPORTANT, check="x.kind", message="the type", file=gen.config_path, line=2)
    small = Finding(severity=Severity.SUGGESTION, check="x.small", message="minor", file="pkg/p/p.go", line=1)
    out, moved = ship(files, [weight, kind, small, kind], below, "p", gen)
    lines = out[gen.config_path].splitlines()
    assert lines[moved[0].line - 1] == "    weight: 2" and lines[moved[1].line - 1] == "- type: p"
    assert config not in out["pkg/p/README.md"] and out[gen.config_path] in out["pkg/p/README.md"]
    caveats = out["pkg/p/README.md"].split("## Caveats")[1]
    assert caveats.count("the type") == 1 and "line 11): the weight." in caveats and "minor" not in caveats
    assert with_caveats(out["pkg/p/README.md"], ["One thing."]) == out["pkg/p/README.md"]
    unchanged, same = ship(files, [kind], None, "p", gen)
    assert unchanged[gen.config_path] == config and same == [kind]
