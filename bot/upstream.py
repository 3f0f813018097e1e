"""The minimal upstream change: what an llm-d-router PR would carry when a fork's promotion goes upstream.

The promotion branch carries the whole design's evidence (reports, hypotheses, plots, benchmark
plans); an upstream PR carries only the plugin: its package (code, tests, README), the one
registration line in ``cmd/epp/runner/runner.go`` and a sample EndpointPickerConfig. This module
cuts that change out of a finished promotion's branch, writes it as a ``git format-patch`` mail
against the llm-d-router tree the bot builds with (``gomirror/llm-d-router``), and applies it to
a fresh copy of that tree so the caller can run ``go vet`` and ``go test`` on exactly what the
patch produces (through the execution port: the plugin is generated code). Its only hunk against an
existing file, in runner.go, is cut against llm-d-router v0.10.0's own runner.go, kept verbatim in
``gomirror/upstream/`` (``UPSTREAM_RUNNER``): the registration goes in the section of its kind and the
import into the sorted group, as a maintainer would put them, and ``git am`` applies it to v0.10.0 exactly.
The tree the patch is cut against and checked on is the mirror with that runner.go (``CHECKED_AGAINST``);
the Go checks compile the registration in the mirror's own runner.go. No llm-d-router checkout is used here.

Git runs here on trusted data only (a copy of the mirror, the bot's own commit); no Go runs here.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from bot import PROJECT_ROOT
from bot.escape import commit_body
from bot.forge.git import ForgeError, GitRepo
from bot.golang.dead_code import CHECK_DEAD_CODE
from bot.golang.plugin_summary import (
    DEFAULT_TRAFFIC,
    below_reference,
    fidelity_line,
    reference_sentence,
    shipped_findings,
    what_it_does,
)
from bot.golang.registration import insert_registration
from bot.model import Fidelity, RequestError, TranslationSummary, counted_noun

MIRROR = PROJECT_ROOT / "gomirror" / "llm-d-router"
RUNNER_GO = "cmd/epp/runner/runner.go"
#: llm-d-router v0.10.0's runner.go byte for byte (not compiled: the mirror has few of its imports).
UPSTREAM_RUNNER = PROJECT_ROOT / "gomirror" / "upstream" / "runner-v0.10.0.go.txt"

#: What ``apply_to_mirror`` applies the patch to, in the words ``promote upstream-patch`` prints: the mirror, not an
#: llm-d-router checkout, with v0.10.0's own runner.go, so the runner.go hunk applies to v0.10.0 as it is.
CHECKED_AGAINST = (
    "gomirror/llm-d-router, the bot's stand-in for llm-d-router v0.10.0 (not an llm-d-router checkout), with "
    f"v0.10.0's own {RUNNER_GO} (gomirror/upstream/)"
)


def upstream_runner() -> str:
    """v0.10.0's runner.go, which a registration is inserted into for an upstream patch."""
    try:
        return UPSTREAM_RUNNER.read_text(encoding="utf-8")
    except OSError as exc:
        raise UpstreamError(
            f"{UPSTREAM_RUNNER}: {exc.strerror}; restore gomirror/upstream/ from the repository"
        ) from None


class UpstreamError(RequestError):
    """The promotion branch cannot give an upstream change, or the change does not apply."""


SIGN_OFF = (
    "Sign off before you submit it, if the repository requires DCO: apply it with `git am -s` (or commit with "
    "`git commit -s`) so the commit carries your Signed-off-by; a bot cannot sign off for a person."
)


@dataclass(frozen=True)
class UpstreamChange:
    plugin_type: str
    files: dict[str, str]  # upstream path -> text: the package, the sample config, runner.go with the registration
    subject: str
    message: str  # the commit message body
    notes: tuple[str, ...] = ()  # for the submitter, below the mail's `---`: `git am` leaves them out of the commit

    @property
    def paths(self) -> list[str]:
        return sorted(self.files)


def config_path(plugin_type: str) -> str:
    return f"deploy/config/{plugin_type}-epp-config.yaml"


def upstream_change(
    summary: TranslationSummary,
    branch_files: dict[str, str],
    runner_go: str,
    *,
    origin: dict | None = None,
    title: str = "",
    fork_repo: str = "",
    branch: str = "",
    commit: str = "",
    not_ready: list[str] | tuple[str, ...] = (),
) -> UpstreamChange:
    """The change from the branch's files (path -> text, as ``read_promotion`` gives them) and upstream's
    runner.go. Pure. Only the package, the sample config and the registration: nothing else of the branch.

    ``not_ready`` are the reasons the promotion's PR stays a draft (``draft_reasons``): the commit message
    and the notes say them, so a patch cut from sample evidence or unreviewed gates is not sent upstream
    as if it were ready. ``title`` (the request's) and ``fork_repo`` (owner/name of the fork holding ``branch``)
    let the message say what the plugin does and where its evidence is."""
    package = {p: t for p, t in branch_files.items() if p.startswith(summary.package_dir.rstrip("/") + "/")}
    if not any(p.endswith(".go") and not p.endswith("_test.go") for p in package):
        raise UpstreamError(
            f"the promotion branch has no Go code under {summary.package_dir}; run the promotion through stage 2 first"
        )
    if not summary.registration_line:
        raise UpstreamError("translation.json names no registration line; rerun stage 2 of the promotion")
    files = dict(package)
    config = config_path(summary.plugin_type)
    if config in branch_files:
        files[config] = branch_files[config]
    files[RUNNER_GO] = insert_registration(runner_go, summary.registration_import, summary.registration_line)
    subject = f"Add the {summary.plugin_type} {summary.kind.value} plugin (Alpha)"
    enable = (
        "Registered as StabilityAlpha: the EPP runs it only with --allow-experimental-plugins and an "
        f"EndpointPickerConfig that names it (sample: {config})."
    )
    paragraphs = (*about(summary, title), enable, source_paragraph(summary, origin, fork_repo, branch, commit))
    message = "\n\n".join(_fill(p) for p in paragraphs if p)
    cautions = []
    if not_ready:
        cautions.append(
            f"Not ready for upstream review: the promotion's PR stays a draft because {'; '.join(not_ready)}."
        )
    if below_reference(summary.fidelity):
        cautions.append(below_reference_caution(summary.fidelity))
    message += "".join(f"\n\n{_fill(c)}" for c in cautions)
    return UpstreamChange(summary.plugin_type, files, subject, message, (SIGN_OFF, *cautions))


def below_reference_caution(f: Fidelity | None) -> str:
    """Why a plugin that decides like the evolved program less often than an in-tree scorer is not one to propose
    upstream as it is (found by an llm-d maintainer: such a patch read as ready). It is still written: the gates'
    people saw the finding and passed them, and the patch is theirs to read."""
    assert f is not None and f.reference_agreement is not None
    return (
        f"Not ready for upstream review: on the sampled states the plugin decides like the BLIS original in "
        f"{f.agreement:.1%} of them and {f.reference}, already in llm-d-router, in {f.reference_agreement:.1%}. "
        "Propose it once it carries more of the program than that scorer does."
    )


def _fill(paragraph: str) -> str:
    """A commit message paragraph in lines of at most 72 columns (upstream's commit style), none of which `git am`
    takes for the start of the patch or, with --scissors, for a cut line (``commit_body``: the request's title is
    wrapped in here). The escape adds spaces (one in front, one inside each broken scissors mark), so a paragraph
    it changes is wrapped a column narrower at a time until the escaped lines fit in 72 again (a word longer than
    that stays as long as it is)."""
    first = ""
    for width in range(72, 56, -1):
        wrapped = textwrap.fill(paragraph, width, break_long_words=False, break_on_hyphens=False)
        text = commit_body(wrapped)
        if all(len(ln) <= 72 or ln == raw for ln, raw in zip(text.split("\n"), wrapped.split("\n"), strict=True)):
            return text
        first = first or text
    return first


def about(summary: TranslationSummary, title: str = "") -> list[str]:
    """What a maintainer reads first, in the fork PR's words (``bot.golang.plugin_summary``): what the plugin does
    in llm-d terms; how often it decides like the BLIS original, beside the in-tree scorer it must beat (and, when
    it does not, what its weight then adds in a profile); the translator's open findings on the shipped code, which
    the plugin's README carries in its Caveats, and the dead code evolved.go carries, which they name too. The
    translation report itself stays on the fork."""
    f = summary.fidelity
    fidelity = fidelity_line(f) + (reference_sentence(f) if f is not None and f.measured else "")
    if below_reference(f):
        fidelity += f" {DEFAULT_TRAFFIC}; the sample config says so at its weight."
    what = what_it_does(
        summary.kind, summary.plugin_type, title, summary.signals, summary.thresholds, summary.untranslatable
    )
    out = [what, fidelity]
    pkg = summary.package_dir.rstrip("/") + "/"
    found = shipped_findings(summary.findings, [pkg, config_path(summary.plugin_type)])
    if found:  # said by number: a check id names the translator's checklist, which upstream does not have
        out.append(f"The plugin's README names {counted_noun(len(found), 'known limitation')} in its Caveats.")
    dead = {f.line for f in summary.findings if f.check == CHECK_DEAD_CODE and f.file and f.file.startswith(pkg)}
    if dead:  # code that looks live in evolved.go: said here too, so the patch's reader is not surprised by it
        out.append(
            f"The plugin's README also names {counted_noun(len(dead), 'carried line')} of evolved.go that change no "
            "decision in the plugin, kept so the file reads line for line like the BLIS original."
        )
    return out


def source_paragraph(summary: TranslationSummary, origin: dict | None, fork_repo: str, branch: str, commit: str) -> str:
    """Where the plugin comes from and where its evidence is: the fork's owner/name, branch and commit, so the
    pointer resolves for someone upstream (a branch name alone names nothing outside the fork)."""
    where = (
        f" ({origin.get('framework')} run {origin.get('run')}, iteration {origin.get('iteration')})" if origin else ""
    )
    article = "an" if summary.kind.value[:1] in "aeiou" else "a"  # "an admission policy", as the PR draft says
    out = f"Translated by the promotion bot from {article} {summary.kind.value} policy evolved in the BLIS simulator{where}."
    if branch:
        fork = f" of the fork {fork_repo}" if fork_repo else ""
        at = f" at {commit[:12]}" if commit else ""
        out += f" Evidence (translation report, hypotheses, benchmark verdicts): branch {branch}{fork}{at}."
    return out


class Promotion(NamedTuple):
    summary: TranslationSummary
    files: dict[str, str]  # the text of the files the change may take
    origin: dict | None  # the request's origin
    head: str  # the branch head
    verdicts: list[dict]  # validation/verdicts.json: whether the evidence was sample data
    request: dict | None = None  # request.json as committed: its title and fork name the commit message's


def read_promotion(fork: Path, branch: str) -> Promotion:
    """What ``upstream_change`` is cut from, read from the promotion branch."""
    repo = GitRepo(fork)
    head = repo.rev(branch)
    if head is None:
        raise UpstreamError(f"{branch!r} is not a branch of the fork; pass the promotion's branch (promote status)")
    found = [p for p in repo.list_files(branch, "docs/promotion") if p.endswith("/translation.json")]
    if len(found) != 1:
        raise UpstreamError(
            f"{branch}: {'no' if not found else 'more than one'} docs/promotion/*/translation.json; "
            "pass the branch of one promotion that finished stage 2"
        )
    summary = TranslationSummary.model_validate_json(repo.read_file(branch, found[0]) or b"{}")
    wanted = [*repo.list_files(branch, summary.package_dir), config_path(summary.plugin_type)]
    files = {}
    for path in wanted:
        data = repo.read_file(branch, path)
        if data is not None:
            files[path] = data.decode("utf-8")
    slug = found[0].split("/")[2]
    request = _json(repo.read_file(branch, f"benchmarks/promotion/{slug}/request.json"))
    request = request if isinstance(request, dict) else None
    origin = request.get("origin") if request else None
    listed = _json(repo.read_file(branch, f"docs/promotion/{slug}/validation/verdicts.json")) or []
    verdicts = [v for v in listed if isinstance(v, dict)] if isinstance(listed, list) else []
    return Promotion(summary, files, origin, head, verdicts, request)


def _json(data: bytes | None):
    """A branch file's JSON, or None when it is missing or not JSON (the message then leaves that part out)."""
    try:
        return json.loads(data) if data is not None else None
    except ValueError:
        return None


def _mirror_repo(dest: Path, mirror: Path) -> GitRepo:
    """A git repository of the llm-d-router tree, one commit: the base an upstream patch applies to, with
    v0.10.0's own runner.go in place of the mirror's (the one file the patch changes)."""
    if not (mirror / "go.mod").is_file():
        raise UpstreamError(f"{mirror / 'go.mod'} is missing; restore gomirror/ from the repository")
    shutil.copytree(mirror, dest, ignore=shutil.ignore_patterns(".git"))
    (dest / RUNNER_GO).write_text(upstream_runner(), encoding="utf-8")
    repo = GitRepo(dest)
    repo.git("init", "-q", "-b", "main")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "llm-d-router")
    return repo


def format_patch(change: UpstreamChange, mirror: Path = MIRROR) -> str:
    """The change as one ``git format-patch`` mail against the mirror (``git am`` applies it upstream)."""
    with tempfile.TemporaryDirectory(prefix="promote-upstream-") as tmp:
        repo = _mirror_repo(Path(tmp) / "llm-d-router", mirror)
        for path, text in change.files.items():
            target = repo.path / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        repo.git("add", "-A")
        repo.git("commit", "-q", "-F", "-", input=f"{change.subject}\n\n{change.message}\n".encode())
        mail = repo.git("format-patch", "-1", "--stdout", "--no-signature", "HEAD")
    return _with_notes(mail, change.notes)


def _with_notes(mail: str, notes: tuple[str, ...]) -> str:
    """The notes right after the mail's first ``---`` line, where `git am` ignores text (the commit keeps none)."""
    if not notes:
        return mail
    head, sep, rest = mail.partition("\n---\n")
    if not sep:
        return mail
    text = "".join(f"{textwrap.fill(n, 100, initial_indent='* ', subsequent_indent='  ')}\n" for n in notes)
    return f"{head}{sep}{text}\n{rest}"


def apply_to_mirror(patch: str, mirror: Path = MIRROR) -> dict[str, str]:
    """Apply ``patch`` with ``git am`` to a fresh repository of the mirror (with v0.10.0's runner.go); the files
    it added or changed (path -> text). UpstreamError, with git's reason, when it does not apply. Its runner.go
    is v0.10.0's, which does not compile against the mirror: the Go checks take the package and compile the
    registration in the mirror's own runner.go (``run_checks(..., registration_import=, registration_line=)``)."""
    with tempfile.TemporaryDirectory(prefix="promote-upstream-") as tmp:
        repo = _mirror_repo(Path(tmp) / "llm-d-router", mirror)
        try:
            repo.git("am", "-q", "--3way", input=patch.encode())
        except ForgeError as exc:
            raise UpstreamError(f"the patch does not apply to the mirror ({mirror.name}): {exc}") from None
        changed = repo.git("diff", "--name-only", "--diff-filter=AM", "HEAD~1", "HEAD").split()
        return {p: (repo.path / p).read_text(encoding="utf-8") for p in changed}
