"""The GitHub home's state store: the sticky status comment on the promotion issue.

The visible part is the checklist people read; below it, a hidden marker holds
the whole PipelineState as compressed JSON (base64, so nothing in it can close
the HTML comment early). Every save is read back: GitHub can answer 200 to an
over-long update and keep the old text, and a state that silently failed to
save would make the next event redo or skip work.
"""

from __future__ import annotations

import base64
import re
import zlib
from datetime import datetime

from bot.forge import markers
from bot.forge.state_file import NewerState, StateError, parse_state
from bot.github import vouch
from bot.github.authz import Actor, authorize
from bot.github.client import GitHub, marker_line
from bot.github.config import BotConfig
from bot.github.records import Comment
from bot.model import AuditEntry, DecidedVia, Decision, Finding, PipelineState, Severity, Status, match_text
from bot.model.findings import tally
from bot.model.gates import GATE_COVERS, unapproved

#: Budget for the status comment: GitHub's documented 65,536-character cap on a comment body.
MAX_COMMENT_CHARS = 65_536
_STATE = re.compile(rf"<!-- {re.escape(markers.STATE)} (?P<data>[A-Za-z0-9+/=]+) -->")
#: How much audit history the comment keeps when space runs short (the branch's commits keep the rest).
KEEP_AUDIT = 60
#: The longest text ``essentials`` keeps of what only people read: the last audit entry's, a failure's.
TEXT_CHARS = 1_500


def encode_state(state: PipelineState) -> str:
    raw = zlib.compress(state.model_dump_json().encode("utf-8"), 9)
    return f"<!-- {markers.STATE} {base64.b64encode(raw).decode('ascii')} -->"


def decode_state(body: str) -> PipelineState | None:
    """The state hidden in a status comment body; None if it carries none; StateError if it is damaged."""
    m = _STATE.search(body or "")
    if m is None:
        return None
    damaged = (
        "the promotion state in the status comment is damaged; an admin can delete that comment and comment "
        "`/retry` to start the promotion again"
    )
    try:
        raw = zlib.decompress(base64.b64decode(m.group("data")))
    except (ValueError, zlib.error):
        raise StateError(damaged) from None
    return parse_state(raw, "the promotion state in the status comment", damaged)


def stamped(state: PipelineState | None, saved_at: datetime | None) -> PipelineState | None:
    """The state with the time its open gate's review was shown, by GitHub's clock, once it is known.

    A gate opens in a step whose state is saved at once, so the status comment's ``updated_at`` (GitHub's time
    of that save) is when people could first see that review; it is recorded at the next load, before any
    later save moves ``updated_at`` on. A decision written before it was made on an earlier review, or before a
    restart threw that review away (``bot.events.comments.written_before``). The runner's clock would not do:
    the comment's ``created_at`` is GitHub's.
    """
    if state is None or saved_at is None or state.opened_at is not None:
        return state
    if state.status is not Status.AWAITING_DECISION or state.open_gate is None:
        return state
    return state.model_copy(update={"opened_at": saved_at})


def status_body(state: PipelineState, status: str) -> str:
    """Checklist + hidden state, within GitHub's size cap; a state too large is made smaller step by step
    (``smaller``), each step keeping everything the engine still reads."""
    room = MAX_COMMENT_CHARS - len(marker_line(markers.STATUS)) - 1
    body = ""
    for candidate in smaller(state):
        body = f"{status.rstrip()}\n\n{encode_state(candidate)}"
        if len(body) <= room:
            return body
    raise StateError(
        f"the promotion state does not fit in a GitHub comment ({len(body):,} characters); "
        "this is a bug in the bot, please report it with the issue link"
    )


def smaller(state: PipelineState):
    """The state, then ever smaller versions of it for the comment (the review reports keep every word).

    1. old audit entries go (the branch's commits keep the history);
    2. review rounds nobody reads again go: a decided gate keeps its last round (the PR's known issues), the
       open gate the rounds since its last decision (the reviewer's earlier findings, the stall check);
    3. and 4. the texts of the model reviewer's findings are shortened, then shortened more (a non-blocking
       one loses its suggested fix). A model finding is matched across rounds and to the author's responses by
       check and file, never by its text (``Finding.key``, ``FindingRef.refers_to``), and every finding and
       count stays, so the gate's tally and the convergence are unchanged;
    5. the model's texts go (the review reports on the branch keep every word), and so do the finished
       stages' copies of the findings their author-fix rerun was given; every finding and count still stays;
       the Claude calls are folded into one entry per step and prompt, their tokens and cost summed
       (``LLMUsage.folded``): the token budget and the cost table read the same;
    6. the checklist's long texts are cut: a message to what it is matched by (``match_text``: its head and a
       digest of the whole, so it is still the same finding to every comparison), a fix to 240 characters;
       these can be long when tool output quotes the evolved program (a string literal in a vet finding);
    7. a last resort, for a reviewer that raised thousands of findings: only what the engine decides the
       next step from (``essentials``);
    8. and should even those not fit (review rounds are bounded where they are made, ``bot.model.bounded``, so
       only a checklist of very many checks gets here): the most severe of them, ever fewer, and one finding
       counting the rest (``_fewest``), down to none but the count. No number of findings makes the state
       too large.
    """
    yield state
    state = state.model_copy(update={"audit": state.audit[-KEEP_AUDIT:]})
    yield state
    state = state.model_copy(update={"reviews": _rounds_read(state)})
    yield state
    yield _model_texts_cut(state, blocking=600, other=240)
    yield _model_texts_cut(state, blocking=240, other=100)
    state = _model_texts_cut(state, blocking=0, other=0)
    state = state.model_copy(
        update={
            "stages": {n: r.model_copy(update={"review": None}) for n, r in state.stages.items()},
            "llm": state.llm.folded(),
        }
    )
    yield state
    state = _checklist_texts_cut(state)
    yield state
    state = essentials(state)
    yield state
    yield from _fewest(state)


def essentials(state: PipelineState) -> PipelineState:
    """The state cut to what the engine decides the next step from, when nothing less will fit.

    Kept: the stages, decisions, change requests and the author's due input (``next_step``), the Claude calls
    (folded; the token budget), the handled events (replays), and the open gate's last round with its blocking
    findings once each by severity and ``Finding.key`` (a checklist message cut to ``match_text``): what the next
    round's stall check compares
    (``pipeline._stalled``), what an approval records as open CRITICAL, what the author's rerun fixes. Gone:
    the audit but its last entry, the decided gates' rounds and every non-blocking finding (the review
    reports on the branch keep them all), so the status shows fewer findings than the review found. Cut, as
    only people read them: the last audit entry's detail (a cancel reason, the subjects of adopted commits) and
    a failure's reason and fix to ``TEXT_CHARS``, an approval's remark and a rejection's reason to 500. The
    change requests stay whole (the reruns read them); they are bounded where they come in
    (``commands.REASON_CHARS`` each, ``comments.CHANGE_REQUESTS_CHARS`` at a gate).
    """
    reviews = {}
    rounds = _checklist_texts_cut(state).reviews.get(state.open_gate) if state.open_gate is not None else None
    if rounds:
        last = rounds[-1]
        kept: dict = {}
        for f in last.findings:
            if f.severity.blocking:
                kept.setdefault((f.severity, f.key()), f)
        reviews[state.open_gate] = [last.model_copy(update={"findings": list(kept.values())})]
    audit = [
        a.model_copy(update={"detail": _cut(a.detail, TEXT_CHARS, "the branch's history")}) for a in state.audit[-1:]
    ]
    decisions = [  # a change request's reason is the reruns' input; an approval's remark, a rejection's, are not
        d
        if d.decision is Decision.REQUEST_CHANGES
        else d.model_copy(update={"reason": _cut(d.reason, 500, "the issue")})
        for d in state.decisions
    ]
    failure = state.failure and state.failure.model_copy(
        update={k: _cut(getattr(state.failure, k), TEXT_CHARS, "the run's log") for k in ("reason", "fix")}
    )
    return state.model_copy(update={"audit": audit, "reviews": reviews, "failure": failure, "decisions": decisions})


def _fewest(state: PipelineState):
    """The essentials with the open gate's last round keeping only its most severe blocking findings, half as
    many each time, and one finding counting those left out, at the most severe of their severities (so the
    gate still blocks, and an approval still records open CRITICAL findings when one was left out). The next round's stall check then compares with fewer findings than
    were raised, so at worst the author gets one more round before the gate opens."""
    rounds = state.reviews.get(state.open_gate) if state.open_gate is not None else None
    if not rounds:
        return
    last = rounds[-1]
    ranked = sorted(last.findings, key=Finding.sort_key)
    n = len(ranked)
    while n:
        n //= 2
        left = ranked[n:]
        count = Finding(
            severity=max((f.severity for f in left), key=_SEVERITY_ORDER.index),
            check="status.findings-left-out",
            message=f"and {len(left):,} more blocking finding(s) ({tally(left)}) the status comment had no room "
            "for; the review report and the branch list them all",
        )
        kept = last.model_copy(update={"findings": [*ranked[:n], count]})
        yield state.model_copy(update={"reviews": {**state.reviews, state.open_gate: [kept]}})


_SEVERITY_ORDER = [Severity.SUGGESTION, Severity.IMPORTANT, Severity.CRITICAL]


def _cut(text: str | None, limit: int, where: str = "the review") -> str | None:
    if text is None or len(text) <= limit:
        return text
    note = f"[cut; see {where}]"
    kept = text[: max(0, limit - len(note) - 1)].rstrip()
    return f"{kept} {note}" if kept else note


def _rounds_read(state: PipelineState) -> dict:
    out = {}
    for gate, rounds in state.reviews.items():
        keep = max(1, state.review_round) if gate == state.open_gate else 1
        out[gate] = rounds[-keep:]
    return out


def _model_texts_cut(state: PipelineState, *, blocking: int, other: int) -> PipelineState:
    def cut(f):
        if f.by is None:
            return f
        if f.severity.blocking:  # the author's fix round answers it: its suggested fix stays, shortened
            return f.model_copy(update={"message": _cut(f.message, blocking), "fix": _cut(f.fix, blocking // 2)})
        return f.model_copy(update={"message": _cut(f.message, other), "fix": None})

    reviews = {
        gate: [r.model_copy(update={"findings": [cut(f) for f in r.findings]}) for r in rounds]
        for gate, rounds in state.reviews.items()
    }
    return state.model_copy(update={"reviews": reviews})


def _checklist_texts_cut(state: PipelineState) -> PipelineState:
    def cut(f):
        if f.by is not None:
            return f
        return f.model_copy(update={"message": match_text(f.message), "fix": _cut(f.fix, 240)})

    reviews = {
        gate: [r.model_copy(update={"findings": [cut(f) for f in r.findings]}) for r in rounds]
        for gate, rounds in state.reviews.items()
    }
    return state.model_copy(update={"reviews": reviews})


class ForeignEdit(StateError):
    """The status comment was last saved by someone other than the bot: its state is not the bot's, so no step
    runs and nothing is decided on it (``bot.events.handle`` says so on the issue, once)."""

    def __init__(self, issue: int, comment: Comment, editor: str):
        who = f"@{editor}" if editor else "an account since deleted"
        super().__init__(
            f"the status comment of #{issue} was last edited by {who}, not by the bot; the bot acts only on a "
            "promotion state it saved itself"
        )
        self.issue = issue
        self.comment = comment
        self.editor = editor


def trusted(client: GitHub, issue: int, comment: Comment) -> Comment:
    """``comment`` when the bot saved it last; ForeignEdit when a person did.

    Anyone with write access may edit any issue comment, the status comment too; its state holds the gates'
    decisions, their actors and the benchmark run the bot may cancel, so a state a person saved could pass a gate
    in another person's name. REST names only the comment's author; GraphQL's ``editor`` names who saved it last
    (``GitHub.last_editor``: no call for a comment never edited or saved in this run, one otherwise).

    Not a digest of the state (an HMAC under a repository secret): a person with write access can push a
    workflow that reads the repository's secrets and sign a forged state with them, and would leave no trace.
    Who saved the comment is GitHub's own record: an edit in the web UI or with the person's own token names
    them. The limit, shared with any digest: such a workflow runs with a GITHUB_TOKEN that edits as the bot, so
    this closes the direct edit, not a person who pushes a workflow to forge the state (that push is on record).
    What such a forged state could do with a gate is closed by ``GitHubStateStore.vouched``: each decision in it
    counts only when GitHub's own record (the label's event, the command's comment) shows an authorized person
    made it (``bot.github.vouch``), and a state standing past a gate with no approval of it that still stands is
    refused (``bot.model.gates``); a change request's or rejection's reason is read from its comment, and the
    reruns' copy of the change requests (``fed_by_decisions``) from the decisions. Left open to that workflow: the
    rest of the state is taken as saved where it agrees with its decisions (its stages' records, the feedback a
    finished stage ran with among them, the benchmark run to cancel).
    A state GraphQL shows newer than the one REST gave (saved between the two reads) is not vouched for
    either: it is read again at the next event.
    """
    editor = client.last_editor(comment)
    if editor is None:
        return comment
    if editor.updated_at is not None and comment.updated_at is not None and editor.updated_at > comment.updated_at:
        raise StateError(
            "the status comment changed while the bot read it, so the bot did nothing; the next event reads it "
            "again (or comment `/retry`)"
        )
    if not client.is_mine(editor.login):
        raise ForeignEdit(issue, comment, editor.login)
    return comment


def fed_by_decisions(state: PipelineState | None) -> PipelineState | None:
    """``state`` with the change requests its rerun of each gate's stages is given (``pending_feedback``) taken
    from its decisions, as ``pipeline.decide`` made them: that copy is what the rerun reads, so it says no more than
    the change requests that ``bot.github.vouch`` checked (their reasons read from their comments). A gate with
    none gives its first stage none (an entry left after its decisions were dropped, which nothing reads)."""
    if state is None or not state.pending_feedback:
        return state
    fed = dict(state.pending_feedback)
    for gate, covers in GATE_COVERS.items():
        first = int(covers[0])
        if first in fed:
            if asked := state.change_requests(gate):
                fed[first] = asked
            else:
                del fed[first]
    if fed == state.pending_feedback:
        return state
    return state.model_copy(update={"pending_feedback": fed})


#: How the audit names the decision whose reason is read from its comment (``vouch.Checked.restated``).
_REASON_OF = {Decision.REQUEST_CHANGES: "change request's", Decision.REJECT: "rejection's"}

#: How a refusal names each kind of decision it could not vouch for.
DECIDED = {Decision.APPROVE: "approved", Decision.REQUEST_CHANGES: "changes requested", Decision.REJECT: "rejected"}


class Unvouched(StateError):
    """The state holds a gate decision GitHub's own record does not show (``bot.github.vouch``), or stands past a
    gate with no approval of it (``bot.model.gates``): no step runs and nothing is decided on it
    (``bot.events.handle`` says so on the issue, once, with the fix)."""

    def __init__(self, issue: int, comment: Comment, refused: list[vouch.Refused]):
        named = "; ".join(
            f"gate {r.gate} {DECIDED[r.decision]} by @{r.actor}: {r.lacks}"
            if r.decision is not None
            else f"gate {r.gate} passed with no approval of it that still stands: {r.lacks}"
            for r in refused
        )
        super().__init__(
            f"the status comment of #{issue} records a gate decision GitHub's record does not show, or passes a "
            f"gate with none ({named}); the bot acts only on decisions an authorized person made on GitHub"
        )
        self.issue = issue
        self.comment = comment
        self.refused = refused


class GitHubStateStore:
    def __init__(self, client: GitHub, issue: int, config: BotConfig | None = None):
        """``config``: whose approvals count (``authz.authorize``); None: the default configuration's."""
        self.client = client
        self.issue = issue
        self.config = config or BotConfig()
        #: the newest comment this run answered: every save records it (``PipelineState.answered_comment``), the
        #: runner's too, so the save that records the answer's outcome records that it was given
        self.answered = 0
        #: the oldest command this run left for a later one (``comments.catch_up`` acts on a bounded number per
        #: run): no save records an answer at or past it, so the next run still finds it unanswered
        self.held: int | None = None

    def load(self, *, checked: bool = False) -> PipelineState | None:
        """The state in the status comment; None without one; ForeignEdit when a person saved it last; Unvouched
        when it holds a decision GitHub's own record does not show, or stands past a gate with no approval of it
        (``vouched``). ``checked``: its decisions are not checked against GitHub's record, for a caller that acts
        on no decision and whose workflow run checked them in an earlier step (``bot.events.benchmark.record_run``,
        ``bot.events.dispatch_failed``): the next run that acts on them checks them again. The gates' invariant,
        which asks GitHub nothing, is checked either way."""
        comment = self.client.bot_comment(self.issue, markers.STATUS)
        if comment is None:
            return None
        trusted(self.client, self.issue, comment)
        try:
            state = stamped(decode_state(comment.body), comment.updated_at)
        except NewerState as exc:  # said on the issue once (``bot.events.handle``)
            exc.issue = self.issue
            raise
        if checked:
            self._passes_gates(state, comment, [])
            self._vouch_for(state)  # this process's later loads (the save renders the request) ask nothing either
            return state
        return self.vouched(state, comment)

    def vouched(self, state: PipelineState | None, comment: Comment) -> PipelineState | None:
        """``state`` once each decision in it that this run did not make is shown by GitHub's own record
        (``bot.github.vouch``), an approval confirmed by the gate's label recorded as its confirmer's, a change
        request's or rejection's reason read from its comment (and the reruns' copy of the change requests from
        the decisions, ``fed_by_decisions``), and it stands past no gate without an approval of it
        (``bot.model.gates``); Unvouched otherwise.

        ``trusted`` cannot tell the bot's save from one a workflow's GITHUB_TOKEN made as the bot. Costs nothing
        for a state without decisions, or whose decisions this run checked or made (``GitHub.vouched``); else the
        issue's label events (one call, when an approval may be a label's), the comments (read already to find
        this one), who edited a decision's comment (``GitHub.last_editor``: a call only for an edited one) and
        each decider's role (one call per person per run, shared with the handlers). A check that fails is made
        once more on a fresh read, so a record read earlier in the run does not refuse a later decision. The
        gates' invariant reads the state only."""
        state = fed_by_decisions(state)
        done = {k[1:] for k in self.client.vouched if k[0] == self.issue}
        todo = [d for d in (state.decisions if state else []) if vouch.key(d) not in done]
        if not todo:
            self._passes_gates(state, comment, [])
            return state
        checked = self._check(state, comment, done, fresh=False)
        if checked.refused:
            checked = self._check(state, comment, done, fresh=True)
        if checked.refused:
            self._passes_gates(state, comment, checked.refused)
        if checked.confirmed or checked.restated:
            audit = [
                AuditEntry(
                    at=e.at or d.at,
                    actor=e.login,
                    event=f"gate {d.gate} approval confirmed",
                    detail=f"GitHub's record did not show the approval the saved state named (by {d.actor}); "
                    f"`{e.label}` applied by {e.login} confirmed it, and it is recorded as theirs",
                )
                for d, e in checked.confirmed
            ]
            audit += [
                AuditEntry(
                    at=d.at,
                    actor="bot",
                    event=f"gate {d.gate} {_REASON_OF[d.decision]} reason read from its comment",
                    detail=f"the saved state's reason was not what {d.actor}'s command comment holds now (its "
                    "author edited it, or the state was saved over); the comment's is the one acted on",
                )
                for d, _ in checked.restated
            ]
            state = fed_by_decisions(
                state.model_copy(update={"decisions": checked.decisions, "audit": [*state.audit, *audit]})
            )
        self._passes_gates(state, comment, [])
        self._vouch_for(state)
        return state

    def _passes_gates(self, state: PipelineState | None, comment: Comment, refused: list[vouch.Refused]) -> None:
        """Unvouched naming ``refused`` and each gate ``state`` stands past with no approval of it that still
        stands (``bot.model.gates.unapproved``: no state the bot saves does); nothing when there is neither."""
        gaps = [vouch.Refused(u.gate, "", u.past, None) for u in (unapproved(state) if state is not None else [])]
        if refused or gaps:
            raise Unvouched(self.issue, comment, [*refused, *gaps])

    def _vouch_for(self, state: PipelineState | None) -> None:
        """Record ``state``'s decisions as checked or made in this run (``GitHub.vouched``)."""
        for d in state.decisions if state is not None else []:
            self.client.vouched.add((self.issue, *vouch.key(d)))

    def _check(self, state: PipelineState, comment: Comment, done: set, *, fresh: bool) -> vouch.Checked:
        todo = [d for d in state.decisions if vouch.key(d) not in done]
        comments = self.client.comments(self.issue, refresh=fresh)
        editors = {}
        for d in todo:
            said = vouch.command_of(d, comments) if d.via is not DecidedVia.LABEL else None
            editor = self.client.last_editor(said) if said is not None else None
            if editor is not None:
                editors[said.id] = editor.login
        by_label = any(d.decision is Decision.APPROVE and d.via is not DecidedVia.COMMAND for d in todo)
        labels = self.client.label_events(self.issue) if fresh or by_label else []
        record = vouch.Record(labels, comments, editors, comment.updated_at)
        return vouch.check(state.decisions, record, self._may_decide, skip=done)

    def _may_decide(self, login: str, user_type: str):
        actor = Actor(login=login, type=user_type or "User")
        if not actor.is_bot:  # a bot is refused whatever its role: no call
            actor = Actor(login=login, type=actor.type, role=self.client.role(login))
        return authorize(actor, "decide", self.config)

    def save(self, state: PipelineState, status: str) -> None:
        answered = self.answered if self.held is None else min(self.answered, self.held - 1)
        if answered > (state.answered_comment or 0):  # a state saved before it was kept starts here
            state = state.model_copy(update={"answered_comment": answered})
        body = status_body(state, status)
        written = self.client.upsert_comment(self.issue, markers.STATUS, body)
        kept = self.client.get_comment(self.issue, written.id)  # read back: a 200 does not mean it was kept
        if kept.body != f"{marker_line(markers.STATUS)}\n{body}":
            raise StateError(
                "GitHub kept an older status comment than the one the bot wrote, so the promotion state was not "
                "saved; nothing else changed. Comment `/retry` to try again"
            )
        self._vouch_for(state)  # the approvals saved now are this run's own or ones it checked

    def save_under_shown(self, state: PipelineState, note: str) -> None:
        """Save ``state`` under the checklist the status comment shows now, with ``note`` below it.

        For a change made while the issue cannot be read (needs-info: its benchmark run was cancelled), when no
        checklist can be rendered (it shows the request); the next save, once the issue is fixed, renders it anew.
        """
        comment = self.client.bot_comment(self.issue, markers.STATUS)
        if comment is None:
            return
        shown = _STATE.sub("", comment.body).removeprefix(marker_line(markers.STATUS)).strip()
        self.save(state, f"{shown}\n\n> {note}")
