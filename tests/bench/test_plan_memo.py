"""``make_plan`` is made once per set of inputs in a process, and every input is part of its key."""

from __future__ import annotations

import functools

from bot.bench import plan_memo
from bot.bench.plan import make_plan, plan_for
from tests.bench.bench_helpers import make_doc
from tests.bench.test_bench_plan import _example_hypotheses, _h, _request


def _counts() -> tuple[int, int]:
    info = plan_memo.cache_info()
    return info.hits, info.misses


def test_the_same_inputs_plan_once_and_each_caller_gets_its_own_copy():
    plan_memo.cache_clear()
    req, hyps = _request(), _example_hypotheses()
    first = make_plan(req, hyps)
    first.notes.append("a caller's own note")  # the plan is frozen, its lists are not
    second = make_plan(_request(), _example_hypotheses(), power=0.8)  # equal inputs, the default given
    assert _counts() == (1, 1)
    assert "a caller's own note" not in second.notes
    assert second == plan_for(req, hyps)  # what the cache returns is what planning returns


def test_every_input_is_part_of_the_key():
    plan_memo.cache_clear()
    hyps = _example_hypotheses()
    base = make_plan(_request(), hyps)
    changed = [
        make_plan(_request(), hyps, alpha=0.1),  # an option
        make_plan(_request(), hyps[:-1]),  # a hypothesis fewer
        make_plan(_request(), [*hyps[:-1], _edited(hyps[-1])]),  # one hypothesis's margin
        make_plan(_request(stack={"replicas": 2}), hyps),  # a request field
        make_plan(_request().model_copy(update={"source_text": "edited program"}), hyps),  # excluded from its JSON
    ]
    assert _counts() == (0, 6)
    assert changed[0].alpha == 0.1 and changed[3].parameters.gpus_per_stack < base.parameters.gpus_per_stack


def _edited(hyp):
    return hyp.model_copy(update={"prediction": hyp.prediction.model_copy(update={"margin": 0.1})})


def test_a_plan_sized_from_earlier_results_is_not_kept(results_factory):
    """The reports in ``prior_results`` are an input the key does not hold: that plan is made every time."""
    root, write = results_factory
    for rep, ttft in enumerate((90.0, 100.0, 110.0), start=1):
        write("baseline", "load-spikes", 30, rep, make_doc(ttft_ms=ttft, e2e_ms=1000.0, rate=30))
    plan_memo.cache_clear()
    hyp = [_h("A1", ["load-spikes"], "ttft_mean")]
    assert make_plan(_request(), hyp, prior_results=root).cv == make_plan(_request(), hyp, prior_results=root).cv
    assert _counts() == (0, 0)


def test_a_plan_is_kept_on_disk_for_the_next_process_of_the_same_bot(tmp_path, monkeypatch):
    """Another process (a second rehearsal, each `promote bench run`) reads the plan instead of simulating again;
    one kept by another bot (its code differs), or a file that is no plan, is planned anew; off when asked."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("PROMOTION_PLAN_CACHE", raising=False)
    req, hyps = _request(), _example_hypotheses()
    plan_memo.cache_clear()
    planned = make_plan(req, hyps)
    [kept] = list((tmp_path / "promotion-bot" / "plans").glob("*.json"))
    assert planned == plan_for(req, hyps)

    @functools.wraps(plan_for)  # the memo binds the arguments by plan_for's signature
    def no_planning(*_a, **_k):
        raise AssertionError("planned again although the plan was kept")

    plan_memo.cache_clear()  # a new process: nothing in memory
    with monkeypatch.context() as m:
        m.setattr(plan_memo, "plan_for", no_planning)
        assert make_plan(req, hyps) == planned

    kept.write_text('{"not": "a plan"}')
    plan_memo.cache_clear()
    assert make_plan(req, hyps) == planned and kept.read_bytes() == planned.model_dump_json().encode()

    plan_memo.cache_clear()
    with monkeypatch.context() as m:  # another bot: its code digest differs, so does the file
        m.setattr(plan_memo, "code_digest", lambda: "another bot")
        assert make_plan(req, hyps) == planned
    assert len(list(kept.parent.glob("*.json"))) == 2

    monkeypatch.setenv("PROMOTION_PLAN_CACHE", "off")
    plan_memo.cache_clear()
    with monkeypatch.context() as m:
        m.setattr(plan_memo, "code_digest", lambda: "a third bot")
        make_plan(req, hyps)
    assert len(list(kept.parent.glob("*.json"))) == 2 and plan_memo.disk_path("x") is None


def test_the_code_digest_follows_the_bots_files(tmp_path, monkeypatch):
    (tmp_path / "bot").mkdir()
    (tmp_path / "dictionary").mkdir()
    (tmp_path / "bot" / "a.py").write_text("x = 1\n")
    monkeypatch.setattr(plan_memo, "PROJECT_ROOT", tmp_path)
    plan_memo.code_digest.cache_clear()
    try:
        first = plan_memo.code_digest()
        (tmp_path / "dictionary" / "signals.yaml").write_text("a: 1\n")
        plan_memo.code_digest.cache_clear()
        assert plan_memo.code_digest() != first
    finally:
        plan_memo.code_digest.cache_clear()
