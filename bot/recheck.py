"""Resuming a promotion whose finished stages another bot made: redo what this bot would make differently.

Pure, like ``bot.pipeline``: the runner passes what makes each stage's artifacts now (``StageRecord.made_by``:
the dictionary's version and digest, the translator's digest, the prompt versions on the Claude path), and this
compares it with what the state recorded. The request's fingerprint cannot tell: an upgrade that translates the
same request differently leaves it unchanged, and the approval given on the old translation would count for a
translation nobody reviewed.

The first stage whose maker changed runs again, and so does every later stage whose maker changed or whose input
came out different. A gate's decision is kept only when the artifacts it approved come out byte-identical; a
stage that comes out different reopens the gate covering it at once (a fresh review, then a fresh decision), and
what was built on it is dropped, stage 5's benchmark run included. When every stage redone came out identical,
the promotion is back where it was.
"""

from __future__ import annotations

from datetime import datetime

from bot.model import AuditEntry, Decision, PipelineState, Recheck, Stage, StageRecord, Status
from bot.pipeline import GATE_AFTER, GATE_COVERS, IllegalTransition

#: States saved before ``made_by`` was kept: stage 1 is the dictionary's own summary, so the check starts at
#: the translation, the first artifact a gate approved.
UNKNOWN_FROM = Stage.TRANSLATE


def stale(state: PipelineState, current: dict[int, dict[str, str]]) -> tuple[list[int], list[str]]:
    """The finished stages whose maker differs from ``current`` (stage -> made_by), and what differs, in words.

    Only stages before the one due: the due stage runs with this bot anyway."""
    due = state.next_stage if state.open_gate is None else None
    out, what, unknown = [], [], []
    for n in sorted(state.stages):
        now = current.get(n)
        if not now or (due is not None and n >= int(due)):
            continue
        was = state.stages[n].made_by
        if not was:
            if n >= int(UNKNOWN_FROM):
                out.append(n)
                unknown.append(str(n))
            continue
        keys = [k for k in sorted(set(now) | set(was)) if now.get(k) != was.get(k)]
        if keys:
            out.append(n)
            what.extend(f"{k} {was.get(k, 'none')} -> {now.get(k, 'none')}" for k in keys)
    if unknown:
        what.insert(
            0, f"stage{'s' * (len(unknown) > 1)} {', '.join(unknown)} by a bot that did not record its versions"
        )
    return out, list(dict.fromkeys(what))


def begin(
    state: PipelineState, current: dict[int, dict[str, str]], *, actor: str, now: datetime
) -> tuple[PipelineState, str | None]:
    """Start a re-check when another bot made finished stages; returns the state and the one line to show (None:
    nothing to redo). A promotion that is over, halted or already re-checking is left alone (a retry comes here)."""
    redo, what = _due(state, current)
    if not redo:
        return state, None
    first = Stage(redo[0])
    why = f"made by another bot version ({'; '.join(what)}): redoing from stage {int(first)} ({first.title})"
    why += _stays(approved(state, first))
    s = state.model_copy(deep=True)
    s.recheck = Recheck(
        why=why,
        redo=redo,
        resume_stage=s.next_stage,
        resume_gate=s.open_gate,
        resume_status=s.status.value,
        resume_round=s.review_round,
    )
    s.next_stage, s.open_gate, s.status, s.review_round, s.opened_at = first, None, Status.RUNNING, 0, None
    return _log(s, now, actor, "re-check", why), why


def due(state: PipelineState, current: dict[int, dict[str, str]]) -> str | None:
    """What ``begin`` would redo, in one line, for a run that does not run stages (``/status``, ``promote
    status``): the status comment says the re-check is coming before the next decision starts it. None when
    nothing is due (or a re-check already runs: its own lines say what it did)."""
    redo, what = _due(state, current)
    if not redo:
        return None
    first = Stage(redo[0])
    which = f"stage {redo[0]}" if len(redo) == 1 else f"stages {', '.join(map(str, redo))}"
    return (
        f"made by another bot version ({'; '.join(what)}): the next step that moves the promotion (a decision, "
        f"a retry) first redoes {which} from stage {int(first)} ({first.title}) with this bot{_stays(approved(state, first))}"
    )


def approved(state: PipelineState, first: Stage) -> list[int]:
    """The gates whose standing decision approved artifacts a re-check from ``first`` redoes. A gate whose last
    decision asked for changes (or rejected) approved nothing: its stages run again anyway, so nothing of it is
    kept or lost, and naming it would suggest a decision that is not there."""
    last = {d.gate: d.decision for d in state.decisions}
    return sorted(g for g, d in last.items() if d is Decision.APPROVE and GATE_COVERS[g][-1] >= first)


def _stays(gates: list[int]) -> str:
    if not gates:
        return ""
    if len(gates) == 1:
        return f"; gate {gates[0]}'s decision stays only if the artifacts it approved come out byte-identical"
    named = ", ".join(map(str, gates[:-1])) + f" and {gates[-1]}"
    return f"; the decisions at gates {named} stay only where the approved artifacts come out byte-identical"


def _due(state: PipelineState, current: dict[int, dict[str, str]]) -> tuple[list[int], list[str]]:
    """``stale``, for a promotion a re-check may start on: one that is over, halted or already re-checking is
    left alone (a retry comes here)."""
    if state.recheck is not None or state.status not in (Status.RUNNING, Status.AWAITING_DECISION):
        return [], []
    return stale(state, current)


def stage_finished(state: PipelineState, record: StageRecord, *, now: datetime) -> tuple[PipelineState, str]:
    """A stage the re-check redid: a difference reopens the gate that covers it at once (``_reopen``), even when
    the gate's later stages had not finished (stage 4 reopens gate 3 while stage 5 waits for its benchmark: that
    run measures the old tests); the gate after a stage that came out identical keeps its decision. Returns the
    state and one line saying what was kept or reopened, and what differed."""
    rc = state.recheck
    if rc is None or state.next_stage != record.stage:
        raise IllegalTransition(f"stage {int(record.stage)} finished, but no re-check runs it")
    n = int(record.stage)
    old = state.stages.get(n)
    differed = _differed(old, record)
    s = state.model_copy(deep=True)
    s.stages[n] = record
    r = s.recheck
    assert r is not None
    r.redo = [x for x in r.redo if x != n]
    covering = next((g for g, covers in GATE_COVERS.items() if record.stage in covers), None)
    if differed and covering is not None:
        return _reopen(s, covering, now, n, differed)
    if differed and n + 1 in s.stages and n + 1 not in r.redo:
        r.redo = sorted([*r.redo, n + 1])  # the next stage reads what changed (stage 1: no gate covers it)
    line = f"stage {n} ({record.stage.title}) redone by this bot came out " + (
        f"different ({differed})" if differed else "byte-identical"
    )
    gate = GATE_AFTER.get(record.stage)
    if gate is not None and gate in approved(s, record.stage):
        r.kept.append(gate)
        line += f": gate {gate}'s decision is kept"
    s = _log(s, now, "bot", f"stage {n} re-checked", line)
    if r.redo:
        s.next_stage = Stage(r.redo[0])
        return s, line
    s.next_stage, s.open_gate, s.review_round = r.resume_stage, r.resume_gate, r.resume_round
    s.status, s.recheck = Status(r.resume_status), None
    # which gates were kept, each stage's line said: the promotion goes on where it was
    return _log(s, now, "bot", "re-check finished", "every stage redone came out identical"), line


def _reopen(s: PipelineState, gate: int, now: datetime, n: int, differed: str) -> tuple[PipelineState, str]:
    """Stage ``n``, which gate ``gate`` covers, came out different (``differed``: its files that did): the gate's
    review runs again and a person decides anew; the stages after ``n`` built on the old artifacts and are
    dropped, and so is the benchmark stage 5 waited for. The gate's own stages after ``n`` (stage 5, after stage
    4) run again first; the later ones run after the decision."""
    rest = [st for st in GATE_COVERS[gate] if int(st) > n]
    s.stages = {k: v for k, v in s.stages.items() if k <= n}
    had = sorted({d.gate for d in s.decisions if d.gate >= gate})
    s.decisions = [d for d in s.decisions if d.gate < gate]
    s.reviews = {g: r for g, r in s.reviews.items() if g < gate}
    s.unconverged = [g for g in s.unconverged if g < gate]
    s.pending_feedback = {k: f for k, f in s.pending_feedback.items() if k <= n}
    s.review_findings = {k: f for k, f in s.review_findings.items() if k <= n}
    s.recheck, s.review_round, s.author_changed = None, 0, False
    s.next_stage, s.open_gate = (rest[0], None) if rest else (None, gate)
    s.status, s.benchmark = Status.RUNNING, None
    then = f" once stage {int(rest[0])} ({rest[0].title}) has run again" if rest else ""
    dropped = f"; the decisions at gate {', '.join(map(str, had))} no longer count" if had else ""
    line = (
        f"stage {n} ({Stage(n).title}) redone by this bot came out different ({differed}): "
        f"gate {gate} reopens for a fresh review and decision{then}{dropped}"
    )
    return _log(s, now, "bot", f"gate {gate} reopened by the re-check", line), line


def removed(line: str, stages: list[int], detail: str) -> str:
    """``line`` (a gate reopened) saying that the files of the dropped ``stages`` left the branch in one commit
    (``detail``: "<commit>: N files"), as a restart's do: they run again after the decision."""
    which = f"stage {stages[0]}" if len(stages) == 1 else f"stages {stages[0]}-{stages[-1]}"
    return f"{line}; the files of {which} were removed from the branch in one commit ({detail})"


def report(state: PipelineState) -> tuple[str, list[str]] | None:
    """The last re-check's lines (each as the run log showed it, kept in the audit trail), and the key its notice
    on the issue is found again by (when it began: a replay updates that notice, a later upgrade posts its own);
    None when no re-check is recorded."""
    began = next((i for i in range(len(state.audit) - 1, -1, -1) if state.audit[i].event == "re-check"), None)
    if began is None:
        return None
    lines = [a.detail for a in state.audit[began:] if _recheck_event(a.event)]
    return f"recheck-{state.audit[began].at:%Y%m%dT%H%M%S%f}", lines


def shown(state: PipelineState) -> list[str]:
    """The last re-check's lines for the status comment, until a person decides a gate after it (they then
    decided on what it left): it changes what the earlier decisions stand on."""
    got = report(state)
    if got is None:
        return []
    began = next(a.at for a in reversed(state.audit) if a.event == "re-check")
    return [] if any(d.at > began for d in state.decisions) else got[1]


def _recheck_event(event: str) -> bool:
    return event in ("re-check", "re-check finished") or event.endswith(("re-checked", "reopened by the re-check"))


def _files(record: StageRecord) -> dict[str, str]:
    return {a.path: a.sha256 for a in record.artifacts}


def _differed(old: StageRecord | None, new: StageRecord, shown: int = 3) -> str:
    """The files whose content differs between ``old`` and ``new`` (written, changed or gone), in words; "" when
    they are byte-identical. A person reading the line sees which artifact the upgrade changed."""
    was, now = (_files(old) if old else {}), _files(new)
    paths = sorted(p for p in set(was) | set(now) if was.get(p) != now.get(p))
    if not paths:
        return ""
    more = len(paths) - shown
    named = ", ".join(paths[:shown]) + (f" and {more} more file{'s' * (more > 1)}" if more > 0 else "")
    return f"{named} differ{'s' * (len(paths) == 1)}"


def _log(state: PipelineState, now: datetime, actor: str, event: str, detail: str) -> PipelineState:
    state.audit.append(AuditEntry(at=now, actor=actor, event=event, detail=detail))
    return state
