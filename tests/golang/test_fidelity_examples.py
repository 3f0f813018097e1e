"""A fidelity example line shows the values its cause turns on, so a person can check it by hand.

Found by a new-program pass: the lines listed each endpoint's queue, batch and KV, but for
``prompt-length-estimate`` not the plugin's token estimate, for ``kv-block-counts`` neither side's free blocks
nor the CacheNumBlocks an engine left at 0, for ``untranslatable:CacheHitRate`` no hit rate: the person had to
regenerate the sampled state to see why the two sides differed. ``fixtures/routing_critical_fast_path.go`` is that pass's
router (its long-prompt penalty is ``len(req.InputTokens) > 2048 && snap.FreeKVBlocks < 500``), run through
the real harness; the bundled example's CacheHitRate cause is in test_go_quality.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.golang import differential, fidelity_values
from bot.golang import harness_views as hv
from bot.golang import harness_world as world

from .conftest import translate_path

P2 = Path(__file__).parent / "fixtures" / "routing_critical_fast_path.go"
ENDPOINT = r"(pod-\d+): BLIS [^;]*?FreeKVBlocks=(\d+); llm-d [^;]*?CacheNumBlocks=(\d+) FreeKVBlocks=(\d+)"


@pytest.fixture(scope="module")
def p2(dictionary):
    _, _, tr = translate_path(P2, dictionary, "t-p2-slo-early-sort")
    assert tr.summary.fidelity is not None and tr.summary.fidelity.measured
    return tr


def _cause(tr, mapping: str):
    return next(c for c in tr.summary.fidelity.causes if c.mapping == mapping)


def test_a_prompt_length_example_shows_the_plugins_token_estimate_and_what_it_is_compared_with(p2):
    example = _cause(p2, "prompt-length-estimate").examples[0]
    m = re.search(r"^request \S+ \((\d+) tokens[^)]*; llm-d estimates (\d+) bytes / 4 = (\d+) tokens", example)
    assert m, example
    blis, size, estimate = (int(g) for g in m.groups())
    assert size // 4 == estimate
    assert (blis > 2048) != (estimate > 2048), example  # the estimate is what crosses the program's 2048
    # ... and the penalty's other operand, each endpoint's free blocks, on both sides
    assert len(re.findall(ENDPOINT, example)) == example.count(": BLIS q=") > 0, example
    assert "llm-d estimates" in p2.report_markdown


def test_a_kv_block_count_example_shows_the_unpublished_cache_size_and_both_sides_free_blocks(p2):
    example = _cause(p2, "kv-block-counts").examples[0]
    pods = re.findall(ENDPOINT, example)
    assert len(pods) == example.count(": BLIS q="), example
    unpublished = [(pod, int(b)) for pod, b, blocks, free in pods if blocks == "0" and free == "0"]
    assert unpublished and all(b > 0 for _, b in unpublished), example  # BLIS has free blocks, the plugin reads 0
    # only signals the program reads: p2 never reads the KV token counts the mapping also changes
    assert "KvTokensInUse" not in example and "TotalKvCapacityTokens" not in example


def _wide_state() -> dict:
    instances = [
        world.Instance(f"pod-{k}", queued=k, running=2, transit=0, kv=0.5, blocks=2000, hit_rate=0.25, prefix=0)
        for k in range(8)
    ]
    request = world.Req("r0", 4096, "batch", "s" * 10_000, "tenant-a", 0, 4.5)
    return hv.views(world.TrueState(instances, request, clock=1, seed=1))


def test_an_example_line_stays_bounded_however_many_signals_its_cause_names():
    state = _wide_state()
    many = ["CacheHitRate", "FreeKVBlocks", "KvTokensInUse", "TotalKvCapacityTokens", "InFlightRequests"]
    many += ["EffectiveLoad", "SessionID", "InputTokens", "SLOClass", "TenantID"]
    line = differential.describe("routing", state, {}, many, frozenset({"CacheHitRate"}))
    part = line.split("; pod-1: ")[1].split("; pod-2: ")[0]
    assert part.split("; llm-d ")[0].count("=") - 4 <= fidelity_values.SHOWN  # q b inflight kv, then at most SHOWN
    assert "s" * (fidelity_values.TEXT_CHARS + 1) not in line
    assert "llm-d estimates 18432 bytes / 4 = 4608 tokens" in line
    assert len(line) < 3000
