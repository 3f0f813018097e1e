"""The Claude author: what the deterministic stages cannot carry over, answered as structured data.

The deterministic translator, generator and templates always run first; the
author is called for what they report as untranslatable or hazardous, for
the review's blocking findings, and for wording. Its answer is data (edits,
responses, wording, narratives) that deterministic code checks and applies
(``bot.agents.guard``): a patch that fails is returned once with the errors,
then dropped and recorded so the gate raises it. The author's reasoning
(``rationale``) is read by nobody.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.agents.client import LLMClient, describe
from bot.agents.guard import Allowed, apply_edits, go_errors, go_logic_changed
from bot.agents.prompts import PromptRequest, artifacts_block, as_data, load
from bot.agents.record import AuthorRecord, DroppedPatch, FindingRef, Response
from bot.agents.schemas import HypothesisSet, Narrative, TranslationPatch
from bot.model import Finding


@dataclass
class FindingsToAnswer:
    """The findings an author call must answer, with the ids it answers by (F1, F2, ...)."""

    findings: list[Finding] = field(default_factory=list)

    @classmethod
    def merge(cls, *groups: list[Finding]) -> FindingsToAnswer:
        out: list[Finding] = []
        for group in groups:
            for f in group:
                if f.severity.blocking and not any(FindingRef.of(g).refers_to(f) for g in out):
                    out.append(f)
        return cls(out)

    def as_json(self) -> str:
        return as_data(
            "findings to answer",
            [
                {
                    "id": f"F{i}",
                    "severity": f.severity.value,
                    "check": f.check,
                    "file": f.file,
                    "line": f.line,
                    "evolved_line": f.source_line,
                    "message": f.message,
                    "suggested_fix": f.fix,
                }
                for i, f in enumerate(self.findings, 1)
            ],
        )

    def ids(self) -> set[str]:
        return {f"F{i}" for i in range(1, len(self.findings) + 1)}

    def by_id(self, fid: str) -> Finding:
        return self.findings[int(fid[1:]) - 1]

    def validator(self):
        def check(answer) -> list[str]:
            given = [r.finding_id for r in answer.responses]
            errors = []
            unknown = sorted(set(given) - self.ids())
            if unknown:
                errors.append(f"responses: unknown finding ids {unknown}")
            missing = sorted(self.ids() - set(given), key=lambda s: int(s[1:]))
            if missing:
                errors.append(f"responses: answer every finding; missing {missing}")
            dupes = sorted({g for g in given if given.count(g) > 1})
            if dupes:
                errors.append(f"responses: answer each finding once; repeated {dupes}")
            return errors

        return check


def _responses(todo: FindingsToAnswer, answer, *, keep_fixed: bool) -> list[Response]:
    out = []
    for r in answer.responses:
        if r.action == "fixed" and not keep_fixed:
            continue
        out.append(
            Response(
                id=f"A{len(out) + 1}", finding=FindingRef.of(todo.by_id(r.finding_id)), action=r.action, note=r.note
            )
        )
    return out


# --------------------------------------------------------------------------
# Stage 2: translate
# --------------------------------------------------------------------------


@dataclass
class TranslationJob:
    """What stage 2 hands the author: the generated files and how to check them."""

    files: dict[str, str]  # branch path -> text the stage will commit (editable ones among them)
    tests: dict[str, str]  # the generated unit tests (read-only; the Go checks run them)
    package_dir: str
    allowed: Allowed
    registration_import: str
    registration_line: str
    source_name: str
    source_text: str
    review_round: int | None = None


def translate(llm: LLMClient, job: TranslationJob, todo: FindingsToAnswer, *, executor, stage: int = 2, gate: int = 1):
    """(files with the accepted edits, the record to commit); no call when nothing needs an answer."""
    if not todo.findings:
        return job.files, None
    prompt = load("author/translate.md.j2")
    shown = {
        p: t
        for p, t in {**job.files, **job.tests}.items()
        if p.startswith(job.package_dir + "/") or p.endswith((".md", ".yaml"))
    }
    context = artifacts_block(
        "Stage 2: the generated translation (not yet committed)",
        shown,
        {f"evolved program {job.source_name}": job.source_text},
    )
    common = {"review_round": job.review_round, "allowed": sorted(job.allowed.paths), "findings_json": todo.as_json()}

    def ask(errors: str) -> TranslationPatch:
        return llm.ask(
            PromptRequest(
                prompt=prompt.tag,
                role="author",
                role_text=prompt.render_block("system"),
                context=context,
                task=prompt.render_block("task", errors=errors, **common),
                output=TranslationPatch,
                stage=stage,
                label="stage 2 author" + (" (second try)" if errors else ""),
            ),
            todo.validator(),
        )

    def attempt(patch: TranslationPatch) -> tuple[dict[str, str], list[str], list[str]]:
        applied = apply_edits(job.files, patch.edits, job.allowed)
        if applied.errors:
            return job.files, [], applied.errors
        go_changed = [p for p in applied.changed if p.endswith(".go")]
        logic = go_logic_changed(job.files, applied.files, go_changed)
        if logic:
            return job.files, [], logic
        if go_changed:
            package = {
                p: t for p, t in applied.files.items() if p.startswith(job.package_dir + "/") and p.endswith(".go")
            }
            errors = go_errors(
                {**package, **job.tests},
                registration_import=job.registration_import,
                registration_line=job.registration_line,
                executor=executor,
            )
            if errors:
                return job.files, [], errors
        return applied.files, applied.changed, []

    patch = ask("")
    files, changed, errors = attempt(patch)
    if errors:
        patch = ask("\n".join(f"- {e}" for e in errors))
        files, changed, errors = attempt(patch)
    record = AuthorRecord(
        stage=stage,
        gate=gate,
        prompt=prompt.tag,
        responses=_responses(todo, patch, keep_fixed=not errors),
        applied=changed,
        dropped=[DroppedPatch(paths=sorted({e.path for e in patch.edits}), errors=errors)] if errors else [],
        notes=[] if errors else [n.strip() for n in patch.report_notes if n.strip()],
    )
    return files, record


# --------------------------------------------------------------------------
# Stage 3: hypothesize
# --------------------------------------------------------------------------


def hypothesize(
    llm: LLMClient,
    hypotheses,
    todo: FindingsToAnswer,
    *,
    context_files: dict[str, str],
    untrusted: dict[str, str],
    render,
    parse,
    claim_kept=lambda old, new: [],
    review_round: int | None = None,
):
    """(hypotheses with the accepted wording, the record); ``render``/``parse`` are the document functions,
    ``claim_kept(old, new)`` says why a rewording no longer states the fixed prediction (bot.hypotheses.wording)."""
    prompt = load("author/hypothesize.md.j2")
    context = artifacts_block("Stage 3: the generated hypotheses (not yet committed)", context_files, untrusted)
    by_id = {h.id: h for h in hypotheses}

    def ask(errors: str) -> HypothesisSet:
        def check(answer: HypothesisSet) -> list[str]:
            errs = todo.validator()(answer)
            unknown = sorted({w.id for w in answer.hypotheses} - set(by_id))
            if unknown:
                errs.append(f"hypotheses: unknown ids {unknown}")
            return errs

        return llm.ask(
            PromptRequest(
                prompt=prompt.tag,
                role="author",
                role_text=prompt.render_block("system"),
                context=context,
                task=prompt.render_block(
                    "task", review_round=review_round, findings_json=todo.as_json(), errors=errors
                ),
                output=HypothesisSet,
                stage=3,
                label="stage 3 author" + (" (second try)" if errors else ""),
            ),
            check,
        )

    def attempt(answer: HypothesisSet):
        from pydantic import ValidationError

        updated = dict(by_id)
        errors = []
        for w in answer.hypotheses:
            change = {k: v.strip() for k, v in w.model_dump(exclude={"id"}).items() if v is not None and v.strip()}
            if not change:
                continue
            try:
                h = type(by_id[w.id]).model_validate(by_id[w.id].model_dump() | change)
                wrong = claim_kept(by_id[w.id], h)
                if wrong:
                    errors.extend(e[:400] for e in wrong)
                    continue
                doc = render(h)
                back = parse(doc, f"{h.id}.md")
                if back != h:
                    raise ValueError("the document does not read back as written")
            except ValidationError as exc:
                errors.append(f"{w.id}: {describe(exc)}"[:400])
                continue
            except ValueError as exc:
                errors.append(f"{w.id}: {exc}"[:400])
                continue
            updated[w.id] = h
        return [updated[h.id] for h in hypotheses], errors

    answer = ask("")
    result, errors = attempt(answer)
    if errors:
        answer = ask("\n".join(f"- {e}" for e in errors))
        result, errors = attempt(answer)
    changed = sorted(h.id for h, old in zip(result, hypotheses, strict=True) if h != old)
    record = AuthorRecord(
        stage=3,
        gate=2,
        prompt=prompt.tag,
        responses=_responses(todo, answer, keep_fixed=not errors),
        applied=changed,
        dropped=[DroppedPatch(paths=sorted({w.id for w in answer.hypotheses}), errors=errors)] if errors else [],
    )
    return (hypotheses if errors else result), record


# --------------------------------------------------------------------------
# Stage 6: document
# --------------------------------------------------------------------------


def narratives(
    llm: LLMClient, targets: list[tuple[str, str]], *, context_files: dict[str, str]
) -> dict[str, Narrative]:
    """hypothesis id -> narrative, for each (id, status) in ``targets``; one call each over one cached context."""
    if not targets:
        return {}
    prompt = load("author/document.md.j2")
    context = artifacts_block("Stage 6: hypotheses and verdicts (as committed)", context_files)
    out = {}
    for hid, status in targets:
        answer = llm.ask(
            PromptRequest(
                prompt=prompt.tag,
                role="author",
                role_text=prompt.render_block("system"),
                context=context,
                task=prompt.render_block("task", hypothesis_id=hid, status=status),
                output=Narrative,
                stage=6,
                label=f"stage 6 author ({hid})",
            )
        )
        out[hid] = answer.model_copy(
            update={k: _plain(getattr(answer, k)) for k in ("root_cause", "devils_advocate", "scope_and_limitations")}
        )
    return out


def _plain(text: str, limit: int = 4000) -> str:
    """Model prose placed under the template's headings: no headings of its own, bounded."""
    lines = [line.lstrip("#").lstrip() if line.lstrip().startswith("#") else line for line in text.strip().splitlines()]
    text = "\n".join(lines)
    return text[:limit] + (" [...]" if len(text) > limit else "")
