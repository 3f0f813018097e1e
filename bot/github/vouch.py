"""A gate decision in a saved state counts only when GitHub's own record shows it.

The status comment holds the promotion's state, its gates' decisions among them (``GateDecision``: who, when,
how). ``bot.github.state.trusted`` refuses a state a person saved last, but a workflow a write collaborator
pushes runs with a GITHUB_TOKEN that saves the comment *as the bot*, and could write "gate 2 approved by alice":
a bot would pass a gate in a person's name. So every approval in a loaded state that this run did not make is
checked against GitHub's own record before the bot acts on it (``check``):

- by label: the issue's events show `gate-N-approved` added by that person, at or before the recorded time
  (``TOLERANCE``: the recorded time is the runner's clock, the event's GitHub's);
- by command: the comment it answered is on the issue, written by that person, edited by nobody else, and holds
  `/approve` (for that gate, when it names one), written at or before the recorded time;
- by the --approve flag: never on GitHub (it is the local rehearsal's), so refused;

and the person must be one the one rule (``authz.authorize``, asked through ``may_decide``) lets decide: a bot
never passes a gate. Each label application and each comment vouches for one approval only, so a real approval
cannot be copied into a second one. An approval the record does not show is *confirmed* by the gate's label
applied, after the status comment was last saved, by a person the rule allows (what the issue is told to do):
the approval is then recorded as that person's. Any other stops the promotion (``bot.github.state.Unvouched``).

A change request or a rejection is checked the same way, by its command (a person gives neither by a label):
the comment it names is that person's, edited by nobody else, and holds `/request-changes` or `/reject`. Nothing
confirms one the record lacks: it reruns the gate's stages on a reason, or ends the promotion, in someone's name.
Its reason is the comment's as it reads now, parsed as when the command came in (``commands.parse``), never the
saved state's: a change request's reason is what the reruns act on (its `param` lines set the values the plugin
deploys, ``bot.directives``), and a state saved as the bot could keep alice's comment and write into its reason a
value she never asked for. Only its author can have changed the comment since (one someone else edited vouches for
nothing), so an author who fixed a typo has the fixed reason acted on (``Checked.restated`` names each reason
replaced). An approval's remark, which nothing acts on, is left as saved. A decision's ``key`` holds its reason, so
the run's cache of checked decisions lets no other reason through either.

Pure: the record (label events, comments, who edited them) and the rule come in; ``bot.github.state`` reads them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from bot.github import commands
from bot.github.authz import Verdict
from bot.github.labels import Label
from bot.github.records import Comment, LabelEvent
from bot.model import DecidedVia, Decision, GateDecision

#: How far a recorded time (the runner's clock) may be behind GitHub's time of the label or comment it records.
TOLERANCE = timedelta(minutes=2)

#: (login, GitHub user type) -> the one rule's verdict on that person deciding a gate (``authz.authorize``).
MayDecide = Callable[[str, str], Verdict]


@dataclass(frozen=True)
class Record:
    """What GitHub shows of an issue, as the check reads it."""

    labels: list[LabelEvent]  # the label events, oldest first
    comments: list[Comment]  # the comments
    #: comment id -> who saved its text last, for the comments approvals name that were edited ("" a deleted account)
    editors: dict[int, str] = field(default_factory=dict)
    saved_at: datetime | None = None  # when the status comment was last saved, by GitHub's clock


@dataclass(frozen=True)
class Refused:
    """A decision GitHub's record does not show: the gate, who it names, and what the record lacks; or (decision
    None, no actor) a gate the state stands past with no approval of it (``bot.model.gates``), ``lacks`` then
    saying what stands past it."""

    gate: int
    actor: str
    lacks: str
    decision: Decision | None = Decision.APPROVE


@dataclass(frozen=True)
class Checked:
    decisions: list[GateDecision]  # the state's, a confirmed approval recorded as its confirmer's
    confirmed: list[tuple[GateDecision, LabelEvent]] = field(default_factory=list)  # (the approval, the label)
    refused: list[Refused] = field(default_factory=list)
    #: (the decision as saved, the reason its comment holds now): each change request or rejection whose saved
    #: reason was not its comment's, and which ``decisions`` holds with the comment's
    restated: list[tuple[GateDecision, str]] = field(default_factory=list)


def check(decisions: list[GateDecision], record: Record, may_decide: MayDecide, *, skip=frozenset()) -> Checked:
    """Each decision in ``decisions`` (but those whose ``key`` is in ``skip``: made or checked in this run) against
    ``record``; an approval the record lacks may be confirmed (``_confirming``), any other is refused. A change
    request or a rejection its comment vouches for gets the reason that comment holds now (``said_reason``)."""
    out = list(decisions)
    used: set[tuple[str, int]] = set()  # ("label", event id) / ("comment", comment id) vouching for one already
    missing: list[tuple[int, str]] = []
    restated: list[tuple[GateDecision, str]] = []
    todo = [i for i, d in enumerate(decisions) if key(d) not in skip]
    for i in sorted(todo, key=lambda i: _aware(decisions[i].at)):
        d = decisions[i]
        proof, lacks = vouched_by(d, record, may_decide, used)
        if proof is None:
            missing.append((i, lacks))
            continue
        used.add(proof)
        said = said_reason(d, proof, record)
        if said is not None and said != d.reason:
            restated.append((d, said))
            out[i] = d.model_copy(update={"reason": said})
    confirmed, refused = [], []
    for i, lacks in missing:
        d = decisions[i]
        e = _confirming(d.gate, record, may_decide, used) if d.decision is Decision.APPROVE else None
        if e is None:
            refused.append(Refused(d.gate, d.actor, lacks, d.decision))
            continue
        used.add(("label", e.id))
        confirmed.append((d, e))
        out[i] = d.model_copy(update={"actor": e.login, "at": e.at, "via": DecidedVia.LABEL, "comment": None})
    return Checked(out, confirmed, refused, restated)


def key(d: GateDecision) -> tuple:
    """What tells one decision from another in a run's cache (``GitHub.vouched``): a change request or rejection
    saved over one checked before with another reason is checked again (its comment's reason is the one used). An
    approval's remark is not in it: nothing acts on it, and a state too large to save whole cuts it."""
    reason = d.reason if d.decision is not Decision.APPROVE else None
    return d.gate, d.decision, d.actor.lower(), _aware(d.at).isoformat(), d.via, reason


def said_reason(d: GateDecision, proof: tuple, record: Record) -> str | None:
    """The reason change request or rejection ``d`` has in the comment ``proof`` names (``vouched_by`` found it
    making ``d``), as it reads now and parsed as when the command came in; None for an approval, or a decision
    a label vouches for."""
    if d.decision is Decision.APPROVE or proof[0] != "comment":
        return None
    c = next(c for c in record.comments if c.id == proof[1])
    return commands.parse(c.body).argument  # it parsed to this decision's command in ``_decides``


def vouched_by(d: GateDecision, record: Record, may_decide: MayDecide, used=frozenset()) -> tuple[tuple | None, str]:
    """(what in GitHub's record shows decision ``d``, ""), or (None, what the record lacks). ``used``: what
    vouches for another decision already. An approval saved before ``via`` was kept may be either kind."""
    if d.via is DecidedVia.APPROVE_FLAG:
        return None, "it is recorded as made by the --approve flag, which no one gives on GitHub"
    if d.decision is not Decision.APPROVE:  # only a command makes one on GitHub
        if d.via is DecidedVia.LABEL:
            return None, f"it is recorded as made by a label, and no label {_VERB[d.decision]}"
        return _by_command(d, record, may_decide, used)
    if d.via is DecidedVia.LABEL:
        return _by_label(d, record, may_decide, used)
    if d.via is DecidedVia.COMMAND:
        return _by_command(d, record, may_decide, used)
    proof, by_label = _by_label(d, record, may_decide, used)
    if proof is not None:
        return proof, ""
    proof, by_command = _by_command(d, record, may_decide, used)
    return (proof, "") if proof is not None else (None, f"{by_label}; and {by_command}")


def command_of(d: GateDecision, comments: list[Comment]) -> Comment | None:
    """The comment decision ``d`` names (``GateDecision.comment``); for a state saved before that was kept, its
    writer's comment written at ``written_at`` that holds that decision of the gate; None when there is none."""
    if d.comment is not None:
        return next((c for c in comments if c.id == d.comment), None)
    if d.written_at is None:
        return None
    written = _aware(d.written_at)
    return next(
        (
            c
            for c in comments
            if c.login.lower() == d.actor.lower()
            and c.created_at is not None
            and abs(_aware(c.created_at) - written) <= timedelta(seconds=1)
            and _decides(c.body, d)
        ),
        None,
    )


def _by_label(d: GateDecision, record: Record, may_decide: MayDecide, used) -> tuple[tuple | None, str]:
    label = str(Label.approved(d.gate))
    theirs = [
        e
        for e in record.labels
        if e.event == "labeled"
        and e.label == label
        and e.login.lower() == d.actor.lower()
        and ("label", e.id) not in used
    ]
    if not theirs:
        return None, f"the issue's events show no `{label}` added by @{d.actor}" + (" not already counted" * bool(used))
    before = [e for e in theirs if e.at is None or _aware(e.at) <= _aware(d.at) + TOLERANCE]
    if not before:
        return None, f"@{d.actor} added `{label}` only after the recorded time ({_aware(d.at):%Y-%m-%d %H:%M:%S} UTC)"
    e = before[0]
    verdict = may_decide(e.login, e.type)
    if not verdict.allowed:
        return None, f"@{d.actor} added `{label}`, but may not decide: {verdict.why}"
    return ("label", e.id), ""


def _by_command(d: GateDecision, record: Record, may_decide: MayDecide, used) -> tuple[tuple | None, str]:
    c = command_of(d, record.comments)
    if c is None:
        if d.comment is not None:
            return None, f"comment {d.comment}, which the approval names, is not on the issue (deleted?)"
        if d.written_at is not None:
            return None, f"the issue holds no comment by @{d.actor} written at {_aware(d.written_at):%H:%M:%S} UTC"
        return None, "no comment is recorded for it"
    if ("comment", c.id) in used:
        return None, f"comment {c.id} vouches for another decision already"
    if c.login.lower() != d.actor.lower():
        return None, f"comment {c.id} was written by @{c.login or 'an account since deleted'}, not @{d.actor}"
    editor = record.editors.get(c.id)
    if editor is not None and editor.lower() != c.login.lower():
        return None, f"comment {c.id} was last edited by @{editor or 'an account since deleted'}, not its author"
    if not _decides(c.body, d):
        return None, f"comment {c.id} by @{d.actor} holds no {_COMMAND[d.decision].format(gate=d.gate)}"
    if c.created_at is not None and _aware(c.created_at) > _aware(d.at) + TOLERANCE:
        return None, f"comment {c.id} was written after the recorded time"
    verdict = may_decide(c.login, c.type or "User")
    if not verdict.allowed:
        return None, f"@{d.actor} wrote comment {c.id}, but may not decide: {verdict.why}"
    return ("comment", c.id), ""


def _confirming(gate: int, record: Record, may_decide: MayDecide, used) -> LabelEvent | None:
    """The gate's label applied after the status comment was last saved, by a person the rule allows, and not
    counted for another approval: the first such application, or None."""
    if record.saved_at is None:
        return None
    label = str(Label.approved(gate))
    for e in record.labels:
        if e.event != "labeled" or e.label != label or ("label", e.id) in used or e.at is None:
            continue
        if _aware(e.at) > _aware(record.saved_at) and may_decide(e.login, e.type).allowed:
            return e
    return None


#: The command that makes each decision on GitHub, and what the refusal says the comment lacks.
_NAME = {
    Decision.APPROVE: commands.Name.APPROVE,
    Decision.REQUEST_CHANGES: commands.Name.REQUEST_CHANGES,
    Decision.REJECT: commands.Name.REJECT,
}
_COMMAND = {
    Decision.APPROVE: "`/approve` of gate {gate}",
    Decision.REQUEST_CHANGES: "`/request-changes`",
    Decision.REJECT: "`/reject`",
}
_VERB = {Decision.REQUEST_CHANGES: "requests changes", Decision.REJECT: "rejects"}


def _decides(body: str, d: GateDecision) -> bool:
    """The comment's command makes decision ``d`` (the first command in it counts, ``commands.parse``):
    `/approve` or `/approve <gate>`; `/request-changes <reason>`; `/reject <reason>` (a reason on any gate: they
    name none)."""
    try:
        command = commands.parse(body or "")
    except commands.CommandError:
        return False
    if command is None or command.name is not _NAME[d.decision]:
        return False
    return d.decision is not Decision.APPROVE or command.argument in ("", str(d.gate))


def _aware(at: datetime) -> datetime:
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)
