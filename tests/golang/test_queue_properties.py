"""Which statements a queue-position scorer's generated TestQueueBehaviour makes, decided from the scores the
compiled plugin gave at generation time (bot.golang.queue_properties): only those that held, the rows an expected
one failed on pinned beside them, and a finding when a busier endpoint scores higher."""

from __future__ import annotations

from bot.golang import probes
from bot.golang import queue_properties as qp
from bot.model import Severity

CLASS = frozenset({"Objectives"})


def _row(priority: int, scores: list[float], tokens: int | None = None, cap: bool = False) -> dict:
    waiting = [0, 256, 1000] if cap else [0, 5, 40]
    return {"priority": priority, "tokens": tokens, "waiting": waiting, "scores": scores, "cap": cap}


def _said(decided: qp.Decided) -> list[tuple[str, tuple[str, ...]]]:
    return [
        (s.kind, tuple(qp.label(k, CLASS) + (" (cap)" if k[0] else "") for k in s.about)) for s in decided.statements
    ]


S01_ROWS = [
    _row(1, [1.0, 1.0, 0.0]),
    _row(0, [1.0, 0.875, 0.0]),
    _row(-1, [1.0, 0.875, 0.0]),
    _row(0, [1.0, 0.0, 0.0], cap=True),
]


def test_the_statements_that_held_on_s01_are_made_and_nothing_is_pinned():
    decided = qp.decide(S01_ROWS)
    assert _said(decided) == [
        ("busier", ("priority 1",)),
        ("spread", ("priority 1",)),
        ("busier", ("priority 0",)),
        ("spread", ("priority 0",)),
        ("busier", ("priority -1",)),
        ("spread", ("priority -1",)),
        ("better", ("priority 1", "priority 0")),  # critical goes ahead of the standard requests waiting
        ("never-worse", ("priority 0", "priority -1")),  # the evolved order treats them alike at these queues
        ("cap", ("priority 0 (cap)",)),
    ]
    assert decided.pinned == () and qp.findings(S01_ROWS, CLASS) == []
    assert qp.still_hold(decided, S01_ROWS)


def test_a_busier_endpoint_scoring_higher_is_pinned_named_and_found():
    rows = [_row(1, [1.0, 1.0, 1.0]), _row(0, [0.5, 1.0, 0.0]), _row(0, [1.0, 0.0, 0.0], cap=True)]
    decided = qp.decide(rows)
    assert ("busier", ("priority 0",)) not in _said(decided)
    assert ("alike", ("priority 1",)) in _said(decided)  # flat for priority 1: said so, not "busiest lowest"
    assert ("spread", ("priority 1",)) not in _said(decided)
    assert [(qp.label(p.key, CLASS), p.why, p.scores) for p in decided.pinned] == [
        ("priority 0", "a busier endpoint scores higher here", (0.5, 1.0, 0.0))
    ]
    [finding] = qp.findings(rows, CLASS)
    assert finding.check == "translate.busier-scores-higher" and finding.severity == Severity.SUGGESTION
    assert "for priority 0 the plugin scores an endpoint with 5 waiting 1 and one with 0 waiting 0.5" in finding.message


def test_a_higher_priority_seeing_an_endpoint_as_worse_pins_both_rows():
    rows = [_row(1, [1.0, 0.5, 0.0]), _row(0, [1.0, 0.875, 0.0])]
    decided = qp.decide(rows)
    assert not [s for s in decided.statements if len(s.about) == 2]
    assert [p.why for p in decided.pinned] == ["a higher priority sees an endpoint as worse here"] * 2
    assert qp.findings(rows, CLASS) == []  # a busier endpoint never scores higher: nothing to find


def test_a_prompt_pair_is_stated_in_the_direction_that_held():
    reads = frozenset({"RequestSizeBytes"})
    s03ish = [_row(0, [1.0, 0.875, 0.0], tokens=64), _row(0, [1.0, 0.9459459459459459, 0.0], tokens=4096)]
    [pair] = [s for s in qp.decide(s03ish).statements if len(s.about) == 2]
    assert (pair.kind, [qp.label(k, reads) for k in pair.about]) == (
        "better",
        ["a 4096-token prompt", "a 64-token prompt"],
    )
    same = [_row(0, [1.0, 1.0, 0.0], tokens=64), _row(0, [1.0, 1.0, 0.0], tokens=4096)]
    [pair] = [s for s in qp.decide(same).statements if len(s.about) == 2]
    assert (pair.kind, [qp.label(k, reads) for k in pair.about]) == (
        "never-worse",
        ["a 64-token prompt", "a 4096-token prompt"],
    )
    crossing = [_row(0, [1.0, 0.5, 0.2], tokens=64), _row(0, [1.0, 0.6, 0.0], tokens=4096)]
    assert not [s for s in qp.decide(crossing).statements if len(s.about) == 2]  # no direction is expected


def test_a_move_exercises_a_parameter_only_when_it_breaks_a_statement():
    """A parameter's move (probes.behaviour_moves) counts as exercised by TestQueueBehaviour when the test would
    fail on it: a changed score that keeps every statement is no failing test."""
    spec = probes.behaviour_specs("scheduling", set(), {"a": 2.0, "b": 2.0, "c": 2.0})
    moves = probes.behaviour_moves(spec, {"a": 2.0, "b": 2.0, "c": 2.0})

    def answer(name: str, scores: list[float]) -> dict:
        cases = [
            {
                "candidate": 0,
                "default": {"scores": dict(zip(("waiting-0", "waiting-5", "waiting-40"), scores, strict=True))},
            }
        ]
        return {"name": name, "cases": cases}

    moved = {"a": [1.0, 0.5, 0.0], "b": [1.0, 1.0, 1.0], "c": [0.0, 0.5, 1.0]}  # a: another score; b: flat; c: inverted
    results = [answer("queue-behaviour", [1.0, 0.875, 0.0])] + [
        answer(m["name"], moved[m["name"].split("@")[1]]) for m in moves
    ]
    assert probes.behaviour_exercised(spec + moves, results) == {"b", "c"}


def test_an_order_that_never_moved_with_the_prompt_length_is_recorded_with_its_length_parameters():
    """Trial 4: the class-then-slack order's TestQueueBehaviour scored a 64- and a 4096-token prompt alike at every
    priority, and no probe input made `inputLenCoeff` or `inputTokensOffset` decide an outcome: the summary records
    them (``prompt_length_unmoved``), so gate 2 offers no prompt lengths. One pair that differs, or one tested
    length parameter, and nothing is recorded; nor without a measurement of either kind."""
    from types import SimpleNamespace

    from bot.golang.param_coverage import prompt_length_unmoved
    from bot.model import PolicyKind

    def th(param, *signals):
        return SimpleNamespace(param=param, signals=list(signals))

    an = SimpleNamespace(
        kind=PolicyKind.SCHEDULING,
        signal_names=["ArrivalTime", "InputTokens", "SLOClass"],
        thresholds=[
            th("criticalRank", "SLOClass"),
            th("inputLenCoeff", "InputTokens"),
            th("inputTokensOffset", "InputTokens"),
            th("waitedMsCoeff", "ArrivalTime", "Clock"),
        ],
    )
    alike = [_row(p, [1.0, s, 0.0], tokens=t) for p, s in ((1, 1.0), (0, 0.875)) for t in (64, 4096)]
    moved = [*alike[:3], _row(0, [1.0, 0.9, 0.0], tokens=4096)]
    tested = {"criticalRank"}
    assert qp.prompt_moves(alike) is False and qp.prompt_moves(moved) is True
    assert qp.prompt_moves(S01_ROWS) is None  # one prompt length: the rows say nothing either way
    assert prompt_length_unmoved(an, tested, alike) == ["inputLenCoeff", "inputTokensOffset"]
    assert prompt_length_unmoved(an, tested, S01_ROWS) == ["inputLenCoeff", "inputTokensOffset"]  # coverage alone
    assert prompt_length_unmoved(an, tested, moved) is None
    assert prompt_length_unmoved(an, tested | {"inputTokensOffset"}, alike) is None
    no_params = SimpleNamespace(kind=an.kind, signal_names=an.signal_names, thresholds=an.thresholds[:1])
    assert prompt_length_unmoved(no_params, tested, alike) == []  # the rows alone
    assert prompt_length_unmoved(no_params, tested, S01_ROWS) is None  # neither measured it
    reads_no_length = SimpleNamespace(kind=an.kind, signal_names=["SLOClass"], thresholds=an.thresholds[:1])
    assert prompt_length_unmoved(reads_no_length, tested, alike) is None
    router = SimpleNamespace(kind=PolicyKind.ROUTING, signal_names=an.signal_names, thresholds=an.thresholds)
    assert prompt_length_unmoved(router, tested, alike) is None
