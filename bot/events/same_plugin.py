"""Other open promotions of the same plugin: two issues naming one plugin get two PRs adding the same files.

The plugin's package directory and its EndpointPickerConfig file (``deploy/config/<plugin>-epp-config.yaml``)
follow the plugin name, and each promotion has its own branch: two issues filed with the same ``Plugin name``
(the bundled example twice, two researchers) run side by side until both PRs add the same files, and gate 2
approves the GPU benchmark twice for one plugin. Nothing else tells either issue about the other.

Found with one REST call (the open issues labelled ``promotion``: their bodies name the plugin, their labels say
where each stands, as ``bot.github.labels`` mirrors the state), said when a promotion starts (a notice on the
issue, and one on each other issue), and repeated by gate 2's review as an IMPORTANT finding that only a person settles
(``bot.model.findings.PEOPLE_SETTLE``): it goes to no author's round.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.forge import markers
from bot.github.client import IssueInfo
from bot.github.issue_form import filed_plugin_type, parse_sections
from bot.github.labels import Label
from bot.golang.gonames import package_name
from bot.model import Finding, Severity, Stage
from bot.model.findings import SAME_PLUGIN_CHECK

#: The notice's key on the issue (one per issue, updated: a rename that resolves it says so in place).
NOTICE = "same-plugin"


@dataclass(frozen=True)
class Other:
    """Another open promotion issue of the same plugin, and where it stands (from its labels)."""

    number: int
    where: str


def where(labels) -> str:
    """Where a promotion stands, as its bot labels show it: "at gate 2", "at stage 3 (hypothesize)", "done"."""
    names = {str(n) for n in labels}
    if str(Label.NEEDS_INFO) in names:
        return "waiting for its request to be fixed"
    for label, said in ((Label.DONE, "done"), (Label.CANCELLED, "cancelled"), (Label.FAILED, "failed")):
        if str(label) in names:
            stage = _stage(names)
            return f"{said} at stage {stage}" if stage and label is Label.FAILED else said
    gate = Label.pending_gate(names)
    if gate is not None:
        return f"at gate {gate}"
    stage = _stage(names)
    return f"at stage {stage} ({Stage(stage).title})" if stage else "not started yet"


def _stage(names: set[str]) -> int | None:
    return next((int(s) for s in Stage if str(Label.stage(s)) in names), None)


def same_plugin(issues: list[IssueInfo], number: int, plugin: str, template: dict) -> list[Other]:
    """The open promotion issues other than ``number`` that name ``plugin`` (or a name with the same Go package),
    oldest first. A rejected one is left out: its PR is closed and adds nothing."""
    found = []
    for issue in issues:
        if issue.number == number or issue.is_pull_request or issue.state != "open":
            continue
        if str(Label.PROMOTION) not in issue.labels or str(Label.REJECTED) in issue.labels:
            continue
        theirs = filed_plugin_type(parse_sections(issue.body, template), number=issue.number, title=issue.title)
        if theirs == plugin or package_name(theirs) == package_name(plugin):
            found.append(Other(issue.number, where(issue.labels)))
    return sorted(found, key=lambda o: o.number)


def lines(others: list[Other], plugin: str) -> list[str]:
    """One sentence per other promotion: which, where it stands, and what to do. Nothing in it needs escaping, in
    the notice or in a finding's message (which the review report escapes): the plugin type is kebab-case (the
    request's pattern, or a slug) and where it stands is one of ``where``'s own phrases."""
    return [
        f"#{o.number} already promotes `{plugin}` (open, {o.where}); the two PRs will add the same files "
        "(the plugin's package and its EndpointPickerConfig): close one, or close this one and file it again "
        "under another Plugin name (a started promotion keeps its name: its branch is named after it)"
        for o in others
    ]


def notice(others: list[Other], plugin: str) -> str:
    """The issue's notice: the other promotions of the plugin."""
    said = "\n".join(f"- {line}." for line in lines(others, plugin))
    return f"**Another promotion of the same plugin is open.**\n\n{said}"


def findings(others: list[Other], plugin: str) -> list[Finding]:
    """Gate 2's finding per other promotion: approving the benchmark spends GPU time on the same plugin twice."""
    return [
        Finding(
            severity=Severity.IMPORTANT,
            check=SAME_PLUGIN_CHECK,
            message=f"{line}. Approving this gate spends GPU time benchmarking the same plugin twice.",
            fix="close one of the two issues, or close this one and file it again under another Plugin name",
        )
        for line in lines(others, plugin)
    ]


# ------------------------------------------------------------- on the issue
def others(promotion) -> list[Other]:
    """The other open promotions of this one's plugin: asked once per run (one call), kept on the promotion."""
    if promotion.plugin_others is None:
        from bot.events.issue_request import TEMPLATE
        from bot.yaml_safe import load_yaml

        issues = promotion.client.open_issues(str(Label.PROMOTION))
        template = load_yaml(TEMPLATE.read_text(encoding="utf-8"))
        plugin = promotion.request().plugin_type
        promotion.plugin_others = same_plugin(issues, promotion.issue.number, plugin, template)
    return promotion.plugin_others


def say(promotion) -> None:
    """Say the other open promotions of this plugin on the issue, as the promotion starts, and this one on each of
    theirs: the one filed first used to learn of the newer one only from its gate-2 review, after gate 1 and its
    review rounds. Only then: its name is fixed from here on (the branch is named after it,
    ``request_texts.branch_change``)."""
    found, plugin = others(promotion), promotion.request().plugin_type
    if not found:
        return
    promotion.notice(NOTICE, notice(found, plugin))
    me = promotion.issue.number
    for other in found:  # keyed by this issue: a third promotion adds its own notice instead of replacing this one
        promotion.client.upsert_comment(other.number, markers.notice(f"{NOTICE}-{me}"), newer_notice(me, plugin))


def newer_notice(number: int, plugin: str) -> str:
    """The notice on an open promotion of ``plugin`` when promotion ``number`` of the same plugin starts."""
    return (
        "**Another promotion of the same plugin is open.**\n\n"
        f"- #{number}, filed after this one, also promotes `{plugin}`; the two PRs will add the same files (the "
        "plugin's package and its EndpointPickerConfig): close one of the two issues, or have the newer one filed "
        "again under another Plugin name."
    )


def gate_findings(promotion, gate: int) -> list[Finding]:
    """Gate 2's findings about the other open promotions of this plugin (before its GPU time is approved)."""
    return findings(others(promotion), promotion.request().plugin_type) if gate == 2 else []
