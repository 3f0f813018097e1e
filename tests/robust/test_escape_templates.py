"""Every interpolation in a template goes through its format's escaping filter, or is on a reviewed list.

A new ``{{ value }}`` in a markdown template fails here until it is escaped (``| md``, ``| sh``) or
added below with the reason it needs none. In Go templates, text in a ``//`` comment must go through
``gocomment`` and text inside a string literal through ``goquote``.
"""

from __future__ import annotations

import re
from pathlib import Path

from bot import PROJECT_ROOT

MARKDOWN = PROJECT_ROOT / "bot" / "render" / "templates"
GO = PROJECT_ROOT / "bot" / "golang" / "templates"

_ESCAPED = re.compile(r"\|\s*(md|sh|pct|gocomment|goquote|goraw)(\(.*\))?\s*$")

#: Interpolations that need no escaping: numbers, enum values, the bot's own names and prebuilt markdown.
SAFE = {
    "_directives.md.j2": {  # the registry's own words (bot.directives), and a gate number
        '" (`/request-changes` and the lines after it)" if github | default(false) else " (`promote request-changes " ~ gate ~ " --reason`, or `/request-changes` and the lines after it on GitHub)"',
        "d.effect_in(github | default(false))",
        "d.example",
        "d.syntax",
        "stuck",  # directives.none_clears: its own words and check ids from NO_DIRECTIVE_CLEARS only
    },
    "_gpu_time.md.j2": {  # numbers from the run manifest
        "gpu_time.budget | gpumin",
        "gpu_time.cell_runs",
        "gpu_time.mix_runs",
        "gpu_time.planned | gpumin",
        "gpu_time.rounds",
        "gpu_time.sequential_expected | gpumin",
        "gpu_time.set_aside",
        "gpu_time.unmatched",
        "gpu_time.spent | gpumin",
    },
    "_llm_cost.md.j2": {
        '"{:,}".format(t.cache_read_tokens)',
        '"{:,}".format(t.cache_write_tokens)',
        '"{:,}".format(t.input_tokens)',
        '"{:,}".format(t.output_tokens)',
        '"{:,}".format(total.tokens)',
        '("$%.2f" % total.usd) if total.usd is not none else "cost n/a"',
        '("$%.4f" % t.usd) if t.usd is not none else "n/a"',
        '("%.0f%%" % (t.cache_share * 100)) if t.cache_share is not none else "n/a"',
        '("%.0f%%" % (total.cache_share * 100)) if total.cache_share is not none else "n/a"',
        "label",  # a stage or gate name
        'row("**promotion**", total)',  # the macro's markdown
        "row(step, t)",
        "t.calls",
        "total.calls",
    },
    "feedback_issue.md.j2": {
        "findings",  # a branch path the bot wrote
        "h.id",
        "h.track.value",
        "r.kind",
        "request.branch",  # promotion/<id>-<slug>
        "request.id",
        "request.origin.iteration",
        "request.plugin_type",
    },
    "findings.md.j2": {
        "p_adjusted(e.p_adjusted, e.held_by)",  # bot.stats.explain.p_adjusted_text: a number and the bot's words
        "mean(e.baseline_mean)",  # bot.stats.explain.mean_text: a number
        "mean(e.evolved_mean)",
        '", " if not loop.last',
        "e",  # an experiment path the bot builds from the slug and a condition it knows (experiment_files)
        '"Confirmation" if v.status.value == "confirmed" else ("Surprise" if v.status.value == "refuted" else "Open question")',
        "action",  # bot.stages.document.action: the bot's own words
        "(h.prediction.margin * 100) | round(1)",
        "e.n_baseline",
        "e.n_evolved",
        "e.rate",
        'e.status.value if e.status else "—"',
        "h.family.value",
        "h.id",
        "h.prediction.direction.value",
        'h.rates | join(", ")',  # numbers
        "h.track.value",
        "h.type.value",
        "h.vvuq.value",
        "narrative_prompt",  # a prompt file name of ours
        "paths.hypotheses_dir",  # built from the slug: [a-z0-9-]
        "paths.evaluation_spec",  # the Reproducing command: built from the slug too
        "paths.request_json",
        "paths.translation_json",
        "paths.slug",
        "request.plugin_type",  # pattern [a-z][a-z0-9-]*
        "resolution",
        "status",
        "status | lower",
        "v.effects | length",
        'v.effects | map(attribute="n_baseline") | list | join(", ")',
    },
    "pr_draft.md.j2": {
        '(rec.commit or "")[:12]',
        "n",
        "rejected.gate",  # an int 1-3 (GateDecision)
        "request.id",
        "request.kind.value",
        '"an" if request.kind.value[:1] in "aeiou" else "a"',  # the article of a PolicyKind value
        "request.origin.iteration",
        "request.plugin_type",
    },
    "_claims_table.md.j2": {  # bot.render.claims: the bot's own numbers and marks (the claim text is escaped)
        "c.id",
        "c.measured",
        "c.predicted",
        "c.verdict",
        "ci_level",
    },
    "pr_body.md.j2": {
        "request.id",
        '" · " if not loop.last',
        '"did not converge" if d.gate in state.unconverged else "converged"',
        "artifact_count",
        "by",  # pull_request.decided_by: the actor already escaped
        "config_url",  # forge.blob_url of a path the stages write
        'counts["A"][not_testable]',
        "transferred",  # pull_request.transfer_count: numbers and the bot's own words
        "status_b",  # bot.model.status_counts: numbers and status names
        "status_c",
        "regressed_c",  # a count
        "indicated_c | length",  # a count
        "d.decision.value",
        "d.gate",
        "i.evolved_line",
        "i.gate",
        "i.severity",  # a Severity value
        "i.url",  # forge.blob_url of a finding's file (a path on the branch) and line
        "issues_left",  # pr_parts.issues_left: a number
        "label",  # pull_request.key_links' own labels
        "manifest_path",
        "pin",  # a commit sha
        "request.origin.baseline_fitness",
        "request.origin.fitness",
        "request.origin.iteration",
        "request.plugin_type",
        "url",  # forge.blob_url of a path the stages write
    },
    "report.md.j2": {
        '"; " if not loop.first else ""',
        "d.decision.value",
        "d.gate",
        '"pass" if checks.test_ok else "FAIL"',
        '"pass" if checks.vet_ok else "FAIL"',
        "checks.tests_lost",
        "checks.tests_passed",
        # markdown blocks built by bot.render.outcome and bot.bench.testbed, which escape every value
        'guards_b or "No Track B gap was tested."',
        'guards_c or "No Track C guard was tested."',
        "block",
        "claims",
        "headline",
        "how_to_read",
        "testbed",
        "untested",
        "forest_plot",  # bot.stats.plots.forest_markdown: a branch path the bot chose and fixed text
        "paths.benchmarks",
        "paths.findings_dir",
        "paths.hypotheses_dir",
        "paths.translation_report",
        "paths.verdicts_md",
        "r.hypothesis",
        "r.kind",
        "r.link",
        "request.origin.baseline_fitness",
        "request.origin.fitness",
        "request.origin.iteration",
        "summary.plugin_type",
    },
    "review_report.md.j2": {
        '"; " if not loop.first else ""',
        "h.id",  # pattern [ABC][0-9]+
        "h.track",  # A, B or C
        "review.tally()",  # counts and severity names
        '" (Claude)" if f.by and f.by != "author" else ""',
        '" (recurring)" if f.recurring else ""',
        '":" ~ f.line if f.line else ""',
        "branch",  # promotion/<id>-<slug>, both patterned
        'checklist | join("; ")',
        "f.severity.value",
        "f.source_line",
        "gate_name",
        "review.gate",
        "review.reviewer",
        "review.round",
        "verdict",  # the review's own sentence
        "decided",  # decided_line(): prebuilt markdown, the actor and the reason escaped with md
    },
    "needs_info.md.j2": {
        '"by the bot " if benchmark else ""',
        "benchmark",  # bot.events.benchmark / still_running(): prebuilt markdown (hex commit, time, our links; md)
    },
    "status_comment.md.j2": {
        "waiting",  # prebuilt markdown: bot.events.comments.waiting_line escapes the logins
        '" (the review did not converge: the blocking ones are open)" if state.open_gate in state.unconverged else ""',
        '"; " if not loop.first else ""',
        '"the comment below (and a review on the PR)" if github else "the next comment in this thread"',
        'tree if path.endswith("/") else blob',  # the GitHub home's own branch links
        "pr_files",  # the GitHub home's own PR link + "/files"
        "last_review.tally()",  # counts and severity names
        "path",  # a branch path the stages write (bot.stages.paths, from the patterned slug)
        '"review did not converge; " if gate in state.unconverged else ""',
        '" with its review\'s findings open (unconverged)" if gate in state.unconverged else ""',
        '"· " if not loop.first else ""',
        "failed.stage.value",
        "gate",
        "request.id",  # pattern [0-9A-Za-z-]
        "run_url",  # the GitHub home's own run link
        "state.benchmark.link()",  # the GitHub home's own link to the benchmark's run (or its workflow's runs)
        "state.benchmark.still_running()",  # prebuilt markdown: a hex commit, a time and the bot's own link
        "stage.title",
        "stage.value",
        "state.open_gate",
        "state.review_round + 1",
        "url",
    },
    "verdicts.md.j2": {
        '":" ~ f.line if f.line else ""',
        '"pass" if checks.build_ok else "FAIL"',
        '"pass" if checks.gofmt_ok else "FAIL"',
        '"pass" if checks.test_ok else "FAIL"',
        '"pass" if checks.vet_ok else "FAIL"',
        "block",  # evidence tables built by bot.stats.evidence
        "checks.tests_failed",
        "checks.tests_lost",
        "checks.tests_passed",
        "f.severity.value",
        "summary",
        "testbed",  # built by bot.bench.testbed.testbed_markdown, which escapes every value
        "headline",  # bot.render.outcome: counts and hypothesis ids
        "claims",  # bot.render.outcome.claims_table: the shared claims table, escaped there
        "priority_mix",  # bot.stages.run_validate.mix_markdown / bot.stats.shedding: every value through md
        "queues",  # bot.bench.waiting.queues_markdown: workload names through md, numbers and hypothesis ids
    },
}


#: Values in Go comments and strings that are Go identifiers, kebab-case names or the bot's constants.
GO_NAMES = {
    "dict_version",
    "h.helper",
    "h.signal",
    "struct",
    "blis_method",
    "queue_signal",
    "category",
    "c.field",
    "p.field",
    "p.go_type",
    "p.name",
    "plugin_type",
    "known_scorers",
    "factory",  # the factory function's Go name, built from struct_name like `struct`
    "r",  # the plugin's receiver name: "a" or "s", chosen by the generator from the policy kind
}


def _expressions(path: Path) -> list[str]:
    text = re.sub(r"{#.*?#}", "", path.read_text(), flags=re.S)
    return [m.group(1).strip() for m in re.finditer(r"{{-?(.*?)-?}}", text, re.S)]


def test_markdown_templates_escape_every_interpolation():
    unreviewed = {
        p.name: sorted({e for e in _expressions(p) if not _ESCAPED.search(e)} - SAFE.get(p.name, set()))
        for p in sorted(MARKDOWN.glob("*.j2"))
    }
    assert {k: v for k, v in unreviewed.items() if v} == {}


def test_go_templates_escape_text_in_comments_and_strings():
    problems = []
    for p in sorted(GO.glob("*.go.j2")):
        for n, line in enumerate(p.read_text().splitlines(), 1):
            comment = line.find("//")
            for m in re.finditer(r"{{-?(.*?)-?}}", line):
                expr = m.group(1).strip()
                if expr in GO_NAMES:
                    continue
                in_comment = 0 <= comment < m.start()
                in_string = line[: m.start()].count('"') % 2 == 1
                if in_comment and not expr.endswith("| gocomment"):
                    problems.append(f"{p.name}:{n}: {{{{ {expr} }}}} in a comment without gocomment")
                if in_string and not expr.endswith("| goquote"):
                    problems.append(f"{p.name}:{n}: {{{{ {expr} }}}} inside a string literal; use | goquote")
    assert problems == []


def test_the_pr_draft_names_an_admission_policy_with_its_article():
    # found by a new user: the PR body said "a admission policy".
    from types import SimpleNamespace as NS

    from bot.render import environment

    first = (MARKDOWN / "pr_draft.md.j2").read_text(encoding="utf-8").splitlines()[0]
    for kind, want in (("admission", "an admission policy"), ("routing", "a routing policy")):
        req = NS(title="T", kind=NS(value=kind), origin=NS(run="r", iteration=1), plugin_type="p")
        assert want in environment().from_string(first).render(request=req)
