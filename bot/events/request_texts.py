"""What a person reads when their edit or command meets the request as it stands: why it changed, why it waits.

Pure texts from the state and the request, apart from the handler that shows them (``bot.events.promotion``), so
the label and comment handlers share one wording.
"""

from __future__ import annotations

from bot.model import PipelineState, PromotionRequest, request_parts

#: The request's parts the repository's configuration (.github/promotion-bot.yml) gives, not the issue.
CONFIG_PARTS = frozenset({"stack", "fidelity_floor"})


def needs_fixing(problems: list[str]) -> str:
    """Why a person's decision or command was not applied while the issue needs information, naming what."""
    from bot.escape import md

    named = "; ".join(problems)
    named = named if len(named) <= 600 else f"{named[:600]}…"
    return (
        f"the request needs fixing first ({md(named)}; the needs-info comment says how), and the bot "
        "acts only on a request it can read"
    )


def changed_under(state: PipelineState, request: PromotionRequest) -> str:
    """Why the request changed when no edit event said so, as the restart notice's first words.

    A run other than the edit's own may be the first to read an edited issue (the edit's run was still queued,
    or GitHub's concurrency group dropped it for a later pending run): then the issue changed, not the
    configuration. ``pipeline.restart`` adds what changed ("the evolved program changed").
    """
    changed = set(request_parts.request_change(state, request.parts()).changed)
    if changed and changed <= CONFIG_PARTS:
        return "the repository's configuration (`.github/promotion-bot.yml`) changed the request"
    if changed:
        return "the issue changed since the bot last read it (an edit, or a bot upgrade that reads it differently)"
    return "the request as the bot reads it changed: the issue, the repository's configuration, or a bot upgrade"


def branch_change(branch: str, request: PromotionRequest) -> str | None:
    """Why an edit that renames the promotion's branch is refused (None: the branch stays), and how to go on.

    The branch, and so the pull request, is named after the plugin type (``promotion/<n>-<plugin-type>``): an
    edit that changes it would leave the work, the gate decisions and the PR on the old branch while the bot looks
    for them on a new one, and the branch guard would halt the run. The edit is refused instead, and the promotion
    stays where it is."""
    if branch == request.branch:
        return None
    prefix = f"promotion/{request.id}-"
    old = branch[len(prefix) :] if branch.startswith(prefix) else branch
    return (
        f"Plugin name: this promotion runs on the branch `{branch}`, named after its plugin type `{old}`. This edit "
        f"makes the plugin type `{request.plugin_type}` (the plugin name, or the title when the name is empty), "
        "which would need another branch, and a promotion does not move between branches, so the edit was not "
        f"applied and the promotion stays where it was. To go on with it, set the plugin name to `{old}` again; "
        f"to promote the program as `{request.plugin_type}`, file a new issue (and `/cancel` this one)."
    )


def waiting_line(held: list[tuple[str, str]]) -> str:
    """The status comment's line (markdown) for the commands a run left for a later one, as (login, body), oldest
    first: how many, whose and which, so a person whose command waits sees it was read, and in what order it comes.

    The run answers a bounded number of commands (``comments.LATE_ACTS``, ``LATE_PEOPLE``) and dispatches the run
    that answers the rest; if GitHub drops that one too, any later event of the issue takes them up. The line is
    drawn before that dispatch is sent and stays when GitHub refuses it (then only a notice is posted), so it
    says what is true either way rather than that the run was dispatched."""
    from bot.escape import md
    from bot.github import commands

    def which(login: str, body: str) -> str:
        try:
            command = commands.parse(body)
        except commands.CommandError:
            command = None
        what = md(f"`/{command.name}`") if command is not None else "a malformed command"
        return f"{md('@' + login)}'s {what}"

    n = len(held)
    head = f"{n} commands wait" if n > 1 else "1 command waits"
    return (
        f"**{head} for the next run:** {', '.join(which(login, body) for login, body in held)} (oldest first: one "
        "run answers a few commands at a time; the bot asks GitHub for the next run, and if GitHub does not start "
        "it, a notice below says so and any later comment on this issue (`/status` is enough) takes them up)."
    )
