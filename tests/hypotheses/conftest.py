"""Shared inputs: a real request, the real dictionary, a summary shaped like stage 2's."""

from __future__ import annotations

import pytest

from bot.dictionary import load_dictionary
from bot.model import PolicyKind, PromotionRequest, TranslationSummary

OPENEVOLVE_GO = """\
package sim

func (ws *WeightedScoring) Route(req *Request, state *RouterState) RoutingDecision {
	// EVOLVE-BLOCK-START
	// HYPOTHESIS-1: Decaying prefix weight under load imbalance reduces cache_warmup e2e latency
	// MECHANISM-1: When the best-prefix instance is overloaded, shifting weight to load spreads requests,
	//   so hot prefixes stop piling onto one instance
	// EXPECT-1: cache_warmup_e2e_ms < 4250
	// RESULT-1: CONFIRMED (actual=4100.5)
	// HYPOTHESIS-2: A KV pressure penalty lowers tail latency overall
	// MECHANISM-2: Instances above 90% KV preempt; avoiding them cuts p95
	// EXPECT-2: avg_p95_ms < 5000
	// HYPOTHESIS-3: Quadratic penalties help load spikes
	// MECHANISM-3: Penalising queue depth earlier spreads bursts
	// EXPECT-3: load_spikes_e2e_ms < 3000
	// RESULT-3: REFUTED (actual=3200.1)
	scores := map[string]float64{}
	// EVOLVE-BLOCK-END
	return NewRoutingDecision("", "")
}
"""


def make_request(**over) -> PromotionRequest:
    raw = {
        "id": "42",
        "title": "Evolved adaptive scorer",
        "kind": "routing",
        "source": "best_program.go",
        "origin": {"run": "blis_router", "iteration": 16, "fitness": -3859.0, "baseline_fitness": -4498.0},
        "claims": [
            {
                "id": "ttft-prefix",
                "statement": "Adaptive routing produces 2.45x better TTFT than load-only routing for prefix-heavy workloads",
                "metric": "ttft_mean_ms",
                "direction": "decrease",
                "magnitude": -0.59,
                "workload": "prefix-heavy",
                "rate": 9.0,
                "mechanism": "prefix affinity keeps shared prefixes on warm instances",
            },
            {
                "id": "tput",
                "statement": "Throughput rises under load spikes",
                "metric": "tokens_per_sec",
                "direction": "increase",
                "magnitude": 0.04,
                "workload": "load-spikes",
                "rate": 2000,
                "family": "performance-regime",
                "vvuq": "uq",
                "type": "statistical/monotonicity",
            },
        ],
        "workloads": [
            {
                "name": "prefix-heavy",
                "description": "shared prefixes",
                "profile": "shared_prefix_synthetic",
                "rates": [4, 8, 12],
                "blis_workload": "workload_v2_cache_warmup.yaml",
            },
            {
                "name": "load-spikes",
                "profile": "random_concurrent",
                "rates": [2, 6],
                "blis_workload": "workload_v2_load_spikes.yaml",
            },
            {"name": "chat", "profile": "sanity_random", "rates": [5]},
        ],
        "evolved_for": "prefix-heavy",
        "baselines": [
            {"name": "chat-baseline", "workload": "chat", "rate": 5},
            {"name": "prefix-baseline", "workload": "prefix-heavy", "guarded_metrics": ["ttft_p99", "throughput"]},
        ],
    }
    raw.update(over)
    source_text = raw.pop("source_text", OPENEVOLVE_GO)
    return PromotionRequest.model_validate(raw).model_copy(update={"source_text": source_text})


@pytest.fixture(scope="session")
def dictionary():
    return load_dictionary()


@pytest.fixture
def request_():
    return make_request()


@pytest.fixture(scope="session")
def summary(dictionary) -> TranslationSummary:
    signals = ["QueueDepth", "KVUtilization", "InFlightRequests", "CacheHitRate"]
    fresh = [s for s in signals if dictionary.signal(s).freshness.gap]
    return TranslationSummary(
        kind=PolicyKind.ROUTING,
        plugin_type="evolved-adaptive-scorer",
        package_dir="pkg/epp/framework/plugins/scheduling/scorer/evolvedadaptive",
        signals=signals,
        freshness_gaps=fresh,
        touched_gaps=dictionary.touched_gaps(PolicyKind.ROUTING, signals),
        thresholds={"kvThreshold": 0.9, "decay": 0.6},
    )
