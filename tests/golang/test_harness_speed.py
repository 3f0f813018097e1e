"""What makes the harness job cheaper must change no answer: these tests hold each shortcut to its condition.

The job samples and reads millions of small dicts with Python's cyclic collector off (none is in a cycle); the
generated BLIS side decodes a state's snapshots once for all its history events, each state still getting its
own copy; and it hashes a sampled prompt's blocks once for every decision, only where the mirror's prefix index
(which keeps no slice it is handed) is the one the program runs. ``test_harness_input`` and
``test_harness_shards`` hold the answers themselves to the written-out and one-process ones.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc

from bot.golang import blis_mirror, harness_build, harness_run
from bot.golang.analyze import analyze
from bot.golang.generate import generate
from bot.golang.source import load_evolved_source

from .conftest import EXAMPLE

HARNESS_BLIS = "blis/sim/zz_promotion_harness.go"


def test_the_harness_job_samples_its_states_with_the_cyclic_collector_off_and_turns_it_back_on(monkeypatch):
    seen = []

    def sample(inp):
        seen.append(gc.isenabled())
        raise ValueError("stop here")

    @contextlib.contextmanager
    def building(files, cache_dir=None):
        yield lambda: (None, "not built")

    monkeypatch.setattr(harness_build, "with_states", sample)
    monkeypatch.setattr(harness_run, "building", building)
    assert gc.isenabled()
    answer = harness_run.execute_harness({}, {"input": {"sample": {}}})
    assert answer["build_log"] == "stop here"
    assert seen == [False] and gc.isenabled()


def test_the_collector_stays_off_after_the_job_where_it_was_off_before():
    gc.disable()
    try:
        with harness_run.collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def _harness_blis(dictionary, monkeypatch=None, program_declares: str = "") -> str:
    """The generated BLIS side of the example's harness; ``program_declares``: a method of the mirror's prefix
    index the program declares itself (its copy of BLIS's routing.go), so the mirror's is dropped."""
    src = load_evolved_source(EXAMPLE)
    an = analyze(src, dictionary)
    if program_declares and monkeypatch is not None:
        compose = blis_mirror.compose

        def own_method(src, an):
            composed = compose(src, an)
            files = dict(composed.files)
            files["routing_prefix.go"] = files["routing_prefix.go"].replace(
                f"func (idx *PrefixCacheIndex) {program_declares}(", "func (idx *PrefixCacheIndex) mirrorDropped("
            )
            return dataclasses.replace(composed, files=files)

        monkeypatch.setattr(harness_build, "compose", own_method)
    gen = generate(src, an, dictionary, plugin_type="t-speed")
    request, _ = harness_build.request(src, an, gen, dictionary, "t-speed", probe_specs=[])
    return request.files[HARNESS_BLIS]


def test_a_states_snapshots_are_decoded_once_and_every_decision_gets_its_own_copy(dictionary):
    text = _harness_blis(dictionary)
    state = text[text.index("func promotionState(") :]
    state = state[: state.index("\n}\n")]
    assert "promotionDecoded[key]" in state and "json.Unmarshal" in state
    # the decoded snapshots are copied into each state (a struct copy per snapshot), never handed out shared
    assert "for _, s := range decoded {" in state and "state.Snapshots = append(state.Snapshots, s)" in state


def test_a_prompt_is_hashed_once_only_with_the_mirrors_prefix_index(dictionary, monkeypatch):
    assert "hashes := promotionPromptHashes(idx, tokens)" in _harness_blis(dictionary)
    for method in ("ComputeBlockHashes", "RecordBlocks"):
        with monkeypatch.context() as m:
            text = _harness_blis(dictionary, m, program_declares=method)
        assert "promotionPromptHashes" not in text, method
        assert "hashes := idx.ComputeBlockHashes(tokens)" in text, method
