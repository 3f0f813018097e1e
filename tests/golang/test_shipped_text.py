"""What ships speaks to someone who has only the llm-d-router repository.

Found by an llm-d maintainer reviewing the bundled example's rehearsal: the shipped Go comments, the package
README and the fork PR named things only the promotion bot knows. The Parameters comment sent the reader to "the
translation report" (the upstream patch ships none) under a check id; comments named BLIS's internals
(``ws.scorers``, ``normalizeScorerWeights``) and shouted "ALREADY a 0-1 fraction ... do not divide by 100"; the
README said it was "translated by the promotion bot", listed open findings by check id ("IMPORTANT
`hazard.recalibration-inverts`"), said "Fallback:" twice in one caveat and "(also line 195)" of the evolved program
beside a link to evolved.go line 139, and its parameter table repeated each Go doc comment with "about twice its
concurrent requests" five times; the PR said the plugin reads CacheHitRate, which it cannot; the CLI printed
"1 parameters".
"""

from __future__ import annotations

import re

import yaml

from bot.golang.plugin_summary import what_it_does
from bot.model import PolicyKind

from .conftest import EXAMPLE, translate_path

PLUGIN = "evolved-adaptive-scorer"


def _file(tr, suffix: str) -> str:
    return next(t for p, t in tr.files.items() if p.endswith(suffix))


def _shipped(tr) -> dict[str, str]:
    """The files of the upstream patch: the package (tests included) and the sample config."""
    return {p: t for p, t in tr.files.items() if p.startswith((tr.summary.package_dir, "deploy/"))}


def test_no_shipped_file_names_the_bot_its_report_its_check_ids_or_blis_internals(dictionary):
    _, _, tr = translate_path(EXAMPLE, dictionary, PLUGIN)
    shipped = _shipped(tr)
    assert any(p.endswith("/README.md") for p in shipped) and any(p.startswith("deploy/") for p in shipped)
    for path, text in shipped.items():
        for bot_word in ("promotion bot", "translation report", "translate.unlisted-literal", "Track B"):
            assert bot_word not in text, (path, bot_word)
        for blis_internal in ("ws.scorers and ws.weights", "normalizeScorerWeights", "ALREADY", "do not divide"):
            assert blis_internal not in text, (path, blis_internal)
        assert not re.search(r"`(hazard|translate|G\d)\.[\w-]+`", text), path
    main = _file(tr, "/evolved_adaptive_scorer.go").replace("\n// ", " ")
    assert "stays a literal in evolved.go where the evolved logic writes it" in main
    assert "a 0-1 fraction despite its name" in _file(tr, "/adapter.go").replace("\n\t// ", " ")


def test_the_readme_says_where_the_plugin_came_from_and_its_caveats_in_words(dictionary):
    _, _, tr = translate_path(EXAMPLE, dictionary, PLUGIN)
    readme = _file(tr, "/README.md")
    head = " ".join(readme.split("\n## ", 1)[0].split())
    assert "generated from `WeightedScoring.Route`, a routing policy evolved in the BLIS simulator" in head
    caveats = readme.split("\n## Caveats\n", 1)[1]
    assert "Open translator finding" not in caveats and "IMPORTANT" not in caveats
    [cache] = [ln for ln in caveats.splitlines() if "CacheHitRate has no llm-d source" in ln]
    assert cache.count("Fallback:") == 1 and "(untranslatable)" not in cache, cache
    evolved = _file(tr, "/evolved.go").splitlines()
    lines = [int(n) for n in re.findall(r"evolved\.go line (\d+)", cache)]
    assert len(lines) == 2 and all("CacheHitRate" in evolved[n - 1] for n in lines), cache
    assert not re.search(r"\(also lines? \d", cache), cache


def test_the_parameter_table_says_a_shared_explanation_once_above_it_and_keeps_rows_short(dictionary):
    _, _, tr = translate_path(EXAMPLE, dictionary, PLUGIN)
    readme = _file(tr, "/README.md")
    section = readme.split("\n## Parameters\n", 1)[1].split("\n## ", 1)[0]
    above, table = section.split("| Parameter |", 1)
    assert readme.count("about twice its concurrent requests") == 1
    assert "about twice its concurrent requests" in above
    assert "Defaults are the evolved values" in above
    rows = [ln for ln in table.splitlines() if ln.startswith("| `")]
    load = next(r for r in rows if r.startswith("| `loadHighThreshold` "))
    assert "| The threshold `load` is compared with" in load and "(default 7, the evolved value)" not in load
    assert max(len(r) for r in rows) < 400, max(rows, key=len)


def test_the_pr_lists_the_signals_the_plugin_reads_and_names_the_unreadable_ones_apart():
    signals = ["BatchSize", "CacheHitRate", "InFlightRequests", "KVUtilization", "QueueDepth", "SessionID"]
    text = what_it_does(PolicyKind.ROUTING, PLUGIN, "", signals, unreadable=["CacheHitRate"])
    assert "from 5 signals (BatchSize, InFlightRequests, KVUtilization, QueueDepth, SessionID)" in text
    assert "CacheHitRate" in text.split("SessionID)", 1)[1]
    assert "no llm-d source" in text
    one = what_it_does(PolicyKind.ROUTING, PLUGIN, "", ["QueueDepth"])
    assert "from 1 signal (QueueDepth)" in one


def test_a_caveat_says_the_other_evolved_lines_as_shipped_lines_or_not_at_all():
    from bot.golang.plugin_summary import caveat_of
    from bot.model import Finding, Severity

    f = Finding(
        severity=Severity.IMPORTANT,
        check="hazard.unmapped-signal",
        message="X has no llm-d source (also lines 8, 9). Omit it.",
        file="pkg/p/evolved.go",
        line=3,
    )
    carried = {8: ("pkg/p/evolved.go", 20), 9: ("pkg/p/adapter.go", 4)}
    said = caveat_of(f, carried)
    assert (
        said
        == "Known limitation (evolved.go line 3): X has no llm-d source (also evolved.go line 20, adapter.go line 4). Omit it."
    )
    assert caveat_of(f, {8: carried[8]}) == "Known limitation (evolved.go line 3): X has no llm-d source. Omit it."


def _comment_above(config: str, key: str) -> str:
    """The YAML comment lines right above ``key:`` in the config, joined into one line."""
    lines = config.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.strip().startswith(f"{key}:"))
    note = []
    while lines[at - 1 - len(note)].strip().startswith("#"):
        note.insert(0, lines[at - 1 - len(note)].strip().lstrip("#").strip())
    return " ".join(note)


def test_the_scorers_parameter_says_its_names_are_blis_terms_computed_here_not_llm_d_plugins(dictionary):
    """llm-d maintainer: `scorers: [{name: queue-depth, ...}]` in an EndpointPickerConfig reads like references to
    llm-d's queue-scorer and friends, which would then have to be declared. The config line, the field's Go doc,
    the README's Parameters section and the Validate errors say what the names are; the names stay BLIS's."""
    _, _, tr = translate_path(EXAMPLE, dictionary, PLUGIN)
    said = (
        "Each entry is a term this plugin computes itself, named as in BLIS (prefix-affinity, queue-depth, "
        "kv-utilization), not an llm-d plugin: llm-d's scorers of similar name (prefix-cache-scorer, queue-scorer, "
        "kv-cache-utilization-scorer) need not be declared or put in the profile for them."
    )
    assert _comment_above(tr.epp_config, "scorers") == "scorers: " + said[:1].lower() + said[1:]
    go = _file(tr, "/evolved_adaptive_scorer.go")
    main = " ".join(ln.strip().removeprefix("//").strip() for ln in go.splitlines())
    assert "depends on. " + said + " Scorers []ScorerConfig" in main
    assert (
        "ScorerConfig is one weighted-scoring term this plugin computes: its BLIS scorer name (not an llm-d plugin"
        in main
    )
    messages = re.sub(r'"\s*\+\s*"', "", go)  # a long Go message is cut into quoted pieces joined by +
    assert (
        '"scorers: unknown BLIS scorer %q (known: prefix-affinity, queue-depth, kv-utilization; these are terms this '
        'plugin computes, named as in BLIS, not llm-d plugin types)"' in messages
    )
    assert '"scorers must name at least one BLIS scorer this plugin computes (prefix-affinity, ' in messages
    readme = _file(tr, "/README.md")
    above = " ".join(readme.split("\n## Parameters\n", 1)[1].split("| Parameter |", 1)[0].split())
    assert "In `scorers`, " + said[:1].lower() + said[1:] in above
    # the names are BLIS's (researchers map them from their BLIS configuration) and no llm-d scorer is declared
    plugins = yaml.safe_load(tr.epp_config)["plugins"]
    assert [s["name"] for s in plugins[0]["parameters"]["scorers"]] == [
        "prefix-affinity",
        "queue-depth",
        "kv-utilization",
    ]
    assert not {"prefix-cache-scorer", "queue-scorer", "kv-cache-utilization-scorer"} & {p["type"] for p in plugins}
