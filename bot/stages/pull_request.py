"""Stage 7, pull request: the PR on the fork, its description, and review comments on file and line.

The description is what a maintainer reviews in five minutes (at most 80 lines): what the plugin
does, how to enable and roll back, the claims table, the known issues (every finding still open,
each also a review comment on its line), then the seed's Track A/B/C summaries and BLIS feedback
with numbers, then links that resolve on GitHub (absolute, pinned to the commit holding the
artifacts). The stage also commits the description, an artifact manifest (path and SHA-256 of
everything the promotion wrote, so the PR is reproducible from the branch alone) and a
``.gitattributes`` block marking the machine-written files generated, so GitHub collapses them.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from bot.escape import md
from bot.forge.base import ReviewComment
from bot.golang.plugin_summary import fidelity_line, what_it_does
from bot.model import (
    HOW_NOT_RECORDED,
    DecidedVia,
    Decision,
    ReviewRound,
    Stage,
    Status,
    Track,
    TranslationSummary,
    Verdict,
    VerdictStatus,
    status_counts,
)
from bot.model.better import differ_count
from bot.render import render
from bot.render.claims import ci_level, claim_rows, transfer_words
from bot.render.lost import lost_summary
from bot.stages import pr_parts
from bot.stages.context import StageContext, StageOutput
from bot.stages.hypothesize import load_hypotheses
from bot.stages.paths import PromotionPaths
from bot.stats.unjudged import UNJUDGED_REASONS as UNJUDGED
from bot.stats.unjudged import rule_caveats, unjudged_reason


def pr_title(ctx: StageContext) -> str:
    """``[promotion] <plugin_type>: <title>`` in at most 72 characters, cut on a word."""
    return pr_parts.title(ctx.request.plugin_type, ctx.request.title)


def track_counts(hypotheses, verdicts: dict[str, Verdict]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for t in Track:
        hs = [h for h in hypotheses if h.track is t]
        out[t.value] = (
            {"total": len(hs)}
            | {s.value: sum(1 for h in hs if h.id in verdicts and verdicts[h.id].status is s) for s in VerdictStatus}
            # set aside because the cells send only traffic the plugin does not act on (gate 2 said so)
            # why no report decides it, per reason (NOT_EXERCISED among them: set aside for the cells' traffic)
            | {r: sum(1 for h in hs if h.id in verdicts and unjudged_reason(verdicts[h.id]) == r) for r in UNJUDGED}
        )
    return out


def transfer_count(a: dict[str, int], verdicts=()) -> str:
    """Track A's count in a few words (``bot.render.claims.transfer_words``): never "transferred" when no claim
    was judged, nor bare when the ``verdicts`` carry a rule the cells never exercised (``rule_caveats``)."""
    return transfer_words(a["total"], a["confirmed"], {r: a[r] for r in UNJUDGED if a.get(r)}, rule_caveats(verdicts))


def _claim_verdicts(hypotheses, verdicts: dict[str, Verdict]) -> list[Verdict]:
    """Track A's verdicts, the ones its count is of."""
    return [verdicts[h.id] for h in hypotheses if h.track is Track.A and h.id in verdicts]


def finding_comments(
    review: ReviewRound, read: Callable[[str], str | None] | None = None
) -> tuple[list[ReviewComment], list[str]]:
    """A review round's findings: comments anchored where a finding names a file and line, and one line
    each for the findings that name no line (they go into the review's body). With ``read`` (a branch
    file's text), a finding that names only its file gets the line it is about (``pr_parts.anchor``)."""
    comments, unanchored = [], []
    for found, ref in zip(review.findings, review.ids(), strict=True):  # ids as the report shows them: before anchoring
        f = pr_parts.anchor(found, read) if read is not None else found
        text = f"**{f.severity.value}** `{md(ref)}`: {md(f.message)}"
        if f.file and f.line:  # a comment of its own: the fix and the round in paragraphs of their own
            fix = f"\n\n**Suggested fix:** {md(f.fix)}" if f.fix else ""
            origin = f"; from line {f.source_line} of the evolved program" if f.source_line else ""
            comments.append(
                ReviewComment(f.file, f.line, f"{text}{fix}\n\n_Gate {review.gate}, round {review.round}{origin}._")
            )
        else:  # one line of the review's body
            fix = f" — **suggested fix:** {md(f.fix)}" if f.fix else ""
            where = f" (`{f.file}`)" if f.file else ""
            unanchored.append(f"{text}{where}{fix}")
    return comments, unanchored


def draft_body(ctx: StageContext) -> str:
    """The PR description while the promotion runs: what it is, where it is decided, what is on the branch;
    once a person rejected it, who did and why instead of the promise of a full description at stage 7."""
    rejected = cancelled = None
    if ctx.state.status is Status.REJECTED:
        rejected = next((d for d in reversed(ctx.state.decisions) if d.decision is Decision.REJECT), None)
    if ctx.state.status is Status.CANCELLED:  # closed until a retry continues it: say who stopped it and why
        cancelled = next((a for a in reversed(ctx.state.audit) if a.event == "cancelled"), None)
    return render(
        "pr_draft.md.j2", request=ctx.request, state=ctx.state, paths=ctx.paths, rejected=rejected, cancelled=cancelled
    )


#: Machine-written files of a promotion, collapsed in the PR's diff on GitHub (linguist-generated):
#: JSON records, the copy of the PR text, the copied translation dictionary and the plots.
GENERATED = (
    "{docs}/**/*.json",
    "{docs}/validation/plots/**",
    "docs/promotion/translation-dictionary.md",
    "{benchmarks}/**/*.json",
)


def gitattributes(existing: str | None, paths: PromotionPaths) -> str:
    """The branch's ``.gitattributes`` with this promotion's block (replaced, never duplicated; other
    lines, the fork's own included, stay as they are)."""
    begin = f"# >>> promotion-bot {paths.slug}: machine-written files, collapsed in the PR diff"
    end = f"# <<< promotion-bot {paths.slug}"
    kept, inside = [], False
    for ln in (existing or "").splitlines():
        if ln == begin:
            inside = True
        elif ln == end:
            inside = False
        elif not inside:
            kept.append(ln)
    while kept and not kept[-1].strip():
        kept.pop()
    block = [
        begin,
        *(f"{p.format(docs=paths.docs, benchmarks=paths.benchmarks)} linguist-generated=true" for p in GENERATED),
        end,
    ]
    return "\n".join([*kept, *([""] if kept else []), *block]) + "\n"


def key_links(paths: PromotionPaths, summary: TranslationSummary, present: set[str]) -> list[tuple[str, str]]:
    """(label, branch path) of what a reviewer opens, in reading order; only files the branch holds."""
    wanted = [
        ("translation report", paths.translation_report),
        ("promotion report", f"{paths.docs}/report.md"),
        ("verdicts and evidence", paths.verdicts_md),
        ("hypotheses", f"{paths.hypotheses_dir}/README.md"),
        ("benchmark plan", f"{paths.benchmarks}/README.md"),
        ("plugin README", f"{summary.package_dir}/README.md"),
        ("EndpointPickerConfig", f"deploy/config/{summary.plugin_type}-epp-config.yaml"),
    ]
    return [(label, p) for label, p in wanted if p in present]


def decided_by(d) -> str:
    """Who decided a gate: a person, or the ``--approve`` flag of an unattended run (no one read the review)."""
    if d.via is DecidedVia.APPROVE_FLAG:
        return f"{md(d.actor)} via `--approve` (not a person at the open gate)"
    if d.via is None:
        return f"{md(d.actor)}; {HOW_NOT_RECORDED}"
    return md(d.actor)


def sample_evidence(flag_lists) -> bool:
    """Whether any verdict (given by its flags) was reached on the bundled sample reports: stage 6 flags it."""
    return any(str(f).startswith("SAMPLE DATA") for flags in flag_lists for f in flags)


def draft_reasons(sample: bool, state) -> list[str]:
    """Why the PR must stay a draft: a maintainer is asked to review only what a person approved on evidence
    that was measured, at gates whose review converged."""
    reasons = ["its benchmark evidence is sample data"] if sample else []
    unconverged = sorted(set(state.unconverged))
    if unconverged:  # one clause: "gates 1, 2 and 3's reviews did not converge", not the sentence three times
        gates = ", ".join(map(str, unconverged[:-1])) + f" and {unconverged[-1]}" if len(unconverged) > 1 else ""
        reasons.append(
            f"gates {gates}'s reviews did not converge" if gates else f"gate {unconverged[0]}'s review did not converge"
        )
    flagged = sorted({d.gate for d in state.decisions if d.via is DecidedVia.APPROVE_FLAG})
    if flagged:
        reasons.append(f"gate {', '.join(map(str, flagged))} passed by --approve, not by a person")
    unknown = sorted(
        {d.gate for d in state.decisions if d.via is None and d.decision is Decision.APPROVE} - set(flagged)
    )
    if unknown:
        reasons.append(
            f"gate {', '.join(map(str, unknown))}: {HOW_NOT_RECORDED}, so no person is known to have passed it"
        )
    return reasons


def run(ctx: StageContext) -> StageOutput:
    from bot.stages.document import Recommendation

    hypotheses = load_hypotheses(ctx)  # in id order
    verdicts = {
        v.hypothesis_id: v
        for v in ctx.read_model(ctx.paths.verdicts_json, list[Verdict], written_by=Stage.RUN_VALIDATE)
    }
    manifest_path = f"{ctx.paths.docs}/artifacts.json"
    description_path = f"{ctx.paths.docs}/pull-request.md"  # committed by earlier versions; the PR holds it now
    artifacts = sorted(
        (a for a in ctx.state.artifact_index() if a.path not in (manifest_path, description_path)),
        key=lambda a: a.path,
    )
    summary = ctx.read_model(ctx.paths.translation_json, TranslationSummary, written_by=Stage.TRANSLATE)
    # Links pin the commit that holds every artifact the body names: the branch as stage 6 left it (this
    # stage's own commit cannot name itself).
    pin = ctx.forge.branch_head(ctx.branch) or ""

    def link(path: str, line_no: int | None = None) -> str:
        return ctx.forge.blob_url(pin, path) + (f"#L{line_no}" if line_no else "")

    sample = sample_evidence(v.flags for v in verdicts.values())
    counts = track_counts(hypotheses, verdicts)
    issues = pr_parts.known_issues(ctx.state.reviews, link, pr_parts.file_reader(ctx.read, ctx.list))
    body = render(
        "pr_body.md.j2",
        what=what_it_does(
            ctx.request.kind,
            ctx.request.plugin_type,
            ctx.request.title,
            summary.signals,
            summary.thresholds,
            unreadable=summary.untranslatable,
        ),
        fidelity_line=fidelity_line(summary.fidelity),
        request=ctx.request,
        state=ctx.state,
        sample=sample,
        draft_reasons=draft_reasons(sample, ctx.state),
        counts=counts,
        transferred=transfer_count(counts["A"], _claim_verdicts(hypotheses, verdicts)),
        claims=claim_rows(hypotheses, verdicts, Track.A),
        ci_level=ci_level(),
        issues=issues,
        max_issues=pr_parts.MAX_ISSUES,
        issues_left=pr_parts.issues_left(issues),
        track_b=pr_parts.track_line(hypotheses, verdicts, Track.B),
        status_b=status_counts(verdicts[h.id].status for h in hypotheses if h.track is Track.B and h.id in verdicts),
        status_c=status_counts(verdicts[h.id].status for h in hypotheses if h.track is Track.C and h.id in verdicts),
        not_testable=VerdictStatus.NOT_TESTABLE.value,
        track_c=pr_parts.track_line(hypotheses, verdicts, Track.C),
        indicated_c=pr_parts.indicated_ids(hypotheses, verdicts, Track.C),
        # an equivalence guard refuted by being better than its margin is no regression (bot.model.better)
        regressed_c=counts["C"]["refuted"] - len(better := pr_parts.better_ids(hypotheses, verdicts, Track.C)),
        better_c=differ_count(better) if better else "",
        lost_c=lost_summary(verdicts.values()),
        recs=ctx.read_model(
            f"{ctx.paths.docs}/feedback-for-blis.json", list[Recommendation], written_by=Stage.DOCUMENT
        ),
        gates=[(d, decided_by(d)) for d in ctx.state.decisions],
        links=[(label, link(p)) for label, p in key_links(ctx.paths, summary, {a.path for a in artifacts})],
        config_url=link(f"deploy/config/{summary.plugin_type}-epp-config.yaml"),
        pin=pin[:12],
        manifest_path=manifest_path,
        artifact_count=len(artifacts),
    )
    pr = ctx.forge.open_or_update_pr(ctx.branch, ctx.request.fork.base_branch, pr_title(ctx), body)
    reasons = draft_reasons(sample, ctx.state)
    if not reasons:
        ctx.forge.mark_ready(pr)
    manifest = [{"path": a.path, "sha256": a.sha256, "stage": int(a.stage)} for a in artifacts]
    files: dict[str, str | bytes] = {
        manifest_path: json.dumps(manifest, indent=2) + "\n",
        ".gitattributes": gitattributes(_text(ctx.forge.read_file(ctx.branch, ".gitattributes")), ctx.paths),
    }
    a = counts["A"]
    # The issue's status line repeats this (bot.pipeline.describe): "the PR is open" read as "ready to review".
    where = f"PR stays a draft because {'; '.join(reasons)}" if reasons else "PR ready for review"
    return StageOutput(
        files=files, summary=f"{where} (Track A {transfer_count(a, _claim_verdicts(hypotheses, verdicts))})"
    )


def _text(data: bytes | None) -> str | None:
    return data.decode("utf-8", errors="replace") if data is not None else None
