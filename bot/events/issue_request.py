"""The promotion request an issue files: whether an issue is a promotion at all (``is_promotion``), and its request
read from the issue form, sanitized and checked (``read_request``), or every problem to fix (``NeedsInfo``).

Apart from the handler that drives the promotion (``bot.events.promotion``) because every event module asks it: the
router and the session whether an issue is one, the issue, comment and dispatch handlers what to do when it cannot
be read, and ``same_plugin`` reads the form's template too.
"""

from __future__ import annotations

from bot import PROJECT_ROOT
from bot.events.env import EventEnv
from bot.github.client import GitHub, IssueInfo
from bot.github.config import BotConfig
from bot.github.labels import Label
from bot.model import PromotionRequest, RequestError

TEMPLATE = PROJECT_ROOT / ".github" / "ISSUE_TEMPLATE" / "promotion.yml"


class NeedsInfo(RequestError):
    """The issue cannot become a promotion as filed; ``problems`` say what to fix."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


def is_promotion(issue: IssueInfo) -> bool:
    """A promotion issue: labelled so by the form, or carrying the form's sections."""
    return not issue.is_pull_request and (
        Label.PROMOTION in issue.labels or ("### Evolved program" in issue.body and "### Policy kind" in issue.body)
    )


def read_request(env: EventEnv, client: GitHub, config: BotConfig, issue: IssueInfo) -> PromotionRequest:
    """The issue's body, sanitized, parsed and checked; NeedsInfo with every problem found."""
    from bot.github.issue_form import FormError, parse_sections, request_from_form, source_reference
    from bot.github.sanitize import UnsafeText, clean
    from bot.stages.preflight import check_magnitudes, check_metrics, check_program
    from bot.yaml_safe import load_yaml

    try:
        body = clean(issue.body, what="the issue").text
        clean(issue.title, what="the title", limit=256)
    except UnsafeText as exc:
        raise NeedsInfo(exc.problems) from None
    template = load_yaml(TEMPLATE.read_text(encoding="utf-8"))
    fields = parse_sections(body, template)
    try:
        ref = source_reference(fields)
    except FormError as exc:
        raise NeedsInfo(exc.problems) from None
    source_text = source_name = None
    if ref is not None:
        try:
            source_text = client.file_at(ref.repo, ref.sha, ref.path)
            clean(source_text, what=f"{ref.path}", limit=1_000_000)
        except UnsafeText as exc:
            raise NeedsInfo(exc.problems) from None
        except RequestError as exc:
            raise NeedsInfo([f"Evolved program reference: could not read {ref}: {exc}"]) from None
        source_name = ref.path
    try:
        request = request_from_form(
            fields,
            number=issue.number,
            title=issue.title,
            repository=env.repository,  # parse_config refuses a `fork:` elsewhere (not supported yet)
            source_text=source_text,
            source_name=source_name,
            stack=config.stack.model_dump(mode="json") if config.stack else None,
            fidelity_floor=config.fidelity_floor,
        )
    except FormError as exc:
        raise NeedsInfo(exc.problems) from None
    if request.fork.repo.lower() != env.repository.lower():
        raise NeedsInfo(
            [
                (
                    f"Target fork: the bot promotes only into {env.repository}, the repository it runs in (another "
                    "fork is not supported yet); leave it empty"
                )
            ]
        )
    try:
        check_metrics(request)
        check_magnitudes(request)
    except RequestError as exc:
        raise NeedsInfo([f"BLIS claims: {exc}"]) from None
    try:
        check_program(request, where=request.source)
    except RequestError as exc:
        raise NeedsInfo([f"Evolved program: {exc}"]) from None
    return request
