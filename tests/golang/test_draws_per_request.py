"""Evolved code that draws from its rng without checking it draws afresh for every request, in every kind of plugin.

BLIS hands the receiver an rng (``ws.rng``); the plugin handed the evolved code one seeded with the request's endpoint
count ("a per-request seed keeps it repeatable"), so every request on a pool of one size drew the same numbers: a
power-of-two-choices router (fixture ``router_power_of_two.go``) compared the same two of four endpoints on every
request and never the others. An admitter or a queue ordering drawing the same way did not even build: the plugin
imported math/rand and never handed the evolved code an rng. Each call now seeds its own rng from a base set when the
plugin is built and a count of the calls (no lock on the scoring path: ``rand.Rand`` is not safe for concurrent use),
and a test that fixes the base draws the same numbers every run.
"""

from __future__ import annotations

import re

import pytest

from bot.golang.analyze import analyze
from bot.golang.generate import generate
from bot.golang.source import load_evolved_source, parse_evolved_source

from .conftest import FIXTURES, passes_with_test, race_go, translate_path, write_module

P2C = FIXTURES / "router_power_of_two.go"
SHED = FIXTURES / "admission_random_shed.go"
SHUFFLE = FIXTURES / "scheduling_random_order.go"

_IMPORTS = """import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	k8stypes "k8s.io/apimachinery/pkg/types"

	fwkdl "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/datalayer"
	"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/scheduling"
)

var _ sync.WaitGroup

// drawEndpoints are scraped endpoints, one per waiting count, named pod-<i>.
func drawEndpoints(waiting ...int) []scheduling.Endpoint {
	var eps []scheduling.Endpoint
	for i, w := range waiting {
		m := &fwkdl.Metrics{WaitingQueueSize: w, UpdateTime: time.Unix(1_700_000_000, 0)}
		id := &fwkdl.EndpointMetadata{ID: k8stypes.NamespacedName{Name: fmt.Sprintf("pod-%d", i)}}
		eps = append(eps, scheduling.NewEndpoint(id, m, nil))
	}
	return eps
}

// top is the endpoint scored highest, alone ("" when tied).
func top(scores map[scheduling.Endpoint]float64) string {
	name, best, tied := "", -1.0, false
	for ep, v := range scores {
		switch {
		case v > best:
			name, best, tied = ep.GetMetadata().ID.Name, v, false
		case v == best:
			tied = true
		}
	}
	if tied {
		return ""
	}
	return name
}
"""

_ROUTER_TEST = (
    "package PACKAGE\n\n"
    + _IMPORTS
    + """
// TestRequestsOnOnePoolCompareDifferentPairs: the router sends a request to the less loaded of two endpoints it draws
// (pod-0 the least loaded, pod-3 the most): requests on the same pool must not all compare the same pair.
func TestRequestsOnOnePoolCompareDifferentPairs(t *testing.T) {
	s := CTOR(DefaultParameters())
	endpoints := drawEndpoints(0, 1, 2, 3)
	chosen := map[string]int{}
	for i := range 50 {
		request := &scheduling.InferenceRequest{RequestID: fmt.Sprint("r-", i)}
		chosen[top(s.Score(context.Background(), request, endpoints))]++
	}
	if len(chosen) < 2 {
		t.Fatalf("50 requests on one pool of 4 endpoints all went to %v: every one compared the same pair", chosen)
	}
}

// TestConcurrentRequestsDraw: requests scored at once each draw from their own rng (run with -race).
func TestConcurrentRequestsDraw(t *testing.T) {
	s := CTOR(DefaultParameters())
	endpoints := drawEndpoints(0, 1, 2, 3)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				request := &scheduling.InferenceRequest{RequestID: fmt.Sprint("r-", g, "-", i)}
				if top(s.Score(context.Background(), request, endpoints)) == "" {
					t.Errorf("no endpoint alone on top")
				}
			}
		}()
	}
	wg.Wait()
}
"""
)

_ADMITTER_TEST = (
    "package PACKAGE\n\n"
    + _IMPORTS
    + """
// TestRequestsOnOnePoolDrawAlike: past a mean queue of 5 the admitter sheds half the requests at random: requests on
// the same pool must not all draw alike.
func TestRequestsOnOnePoolDrawAlike(t *testing.T) {
	a := CTOR(DefaultParameters())
	endpoints := drawEndpoints(10, 10)
	admitted := map[bool]int{}
	for i := range 50 {
		request := &scheduling.InferenceRequest{RequestID: fmt.Sprint("r-", i)}
		admitted[a.Admit(context.Background(), request, endpoints) == nil]++
	}
	if len(admitted) < 2 {
		t.Fatalf("50 requests on one overloaded pool were all admitted or all shed (%v): every one drew alike", admitted)
	}
}
"""
)

_SCHEDULER_TEST = (
    "package PACKAGE\n\n"
    + _IMPORTS
    + """
// TestRequestsOnOnePoolDrawAlike: the ordering serves the waiting requests at random, so the request's place behind
// pod-1's 4 waiting requests (and its score there) changes from one request to the next.
func TestRequestsOnOnePoolDrawAlike(t *testing.T) {
	s := CTOR(DefaultParameters())
	endpoints := drawEndpoints(0, 4)
	places := map[string]int{}
	for i := range 200 {
		request := &scheduling.InferenceRequest{RequestID: fmt.Sprint("r-", i)}
		places[top(s.Score(context.Background(), request, endpoints))]++
	}
	if len(places) < 2 {
		t.Fatalf("200 requests on one pool all took the same place (%v): every ordering drew alike", places)
	}
}
"""
)


@pytest.fixture(scope="module")
def p2c(dictionary):
    return translate_path(P2C, dictionary)


def _go_test(tr, text: str, package: str) -> str:
    """``text`` for ``package``, calling the plugin's constructor (named after the plugin type)."""
    code = "\n".join(t for p, t in tr.files.items() if p.endswith(".go"))
    ctor = re.search(r"^func (New\w+)\(params Parameters\)", code, re.M).group(1)
    return text.replace("PACKAGE", package).replace("CTOR(", ctor + "(")


def test_no_seed_from_the_pool_size_and_no_lock_around_the_rng(dictionary):
    for path in (P2C, SHED, SHUFFLE):
        src = load_evolved_source(path)
        gen = generate(src, analyze(src, dictionary), dictionary, "t-draws")
        code = "\n".join(t for p, t in gen.files.items() if p.endswith(".go"))
        assert "len(state.Snapshots)))" not in code, path.name  # the seed every same-size pool shared
        assert "sync.Mutex" not in code, path.name  # stateless: no lock around a shared rng either
        assert "draws.next()" in code, path.name


def test_a_receiver_that_keeps_state_is_handed_its_rng_under_the_lock_not_copied(dictionary):
    """A copy of a stateful receiver (the old per-request rng went on one) loses what the call counts in it."""
    text = P2C.read_text(encoding="utf-8")
    text = text.replace("\trng       *rand.Rand\n", "\trng       *rand.Rand\n\trouted    int\n")
    text = text.replace("\tbestIdx := 0\n", "\tws.routed++\n\tbestIdx := 0\n")
    src = parse_evolved_source(text, "router_power_of_two_counting.go")
    gen = generate(src, analyze(src, dictionary), dictionary, "t-draws")
    main = gen.files[gen.main_go]
    assert gen.stateful and "s.mu.Lock()" in main
    assert "\ts.policy.rng = s.draws.next()\n\treturn s.policy\n" in main and "policy := *s.policy" not in main


@pytest.mark.slow
def test_requests_on_one_pool_compare_different_pairs(p2c):
    _, _, tr = p2c
    passes_with_test(tr, "/evolved.go", "draws_test.go", lambda package: _go_test(tr, _ROUTER_TEST, package))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "go_test"), [(SHED, _ADMITTER_TEST), (SHUFFLE, _SCHEDULER_TEST)], ids=["admit", "order"]
)
def test_an_admitter_or_a_queue_ordering_that_draws_builds_and_draws_per_request(path, go_test, dictionary):
    _, _, tr = translate_path(path, dictionary)
    passes_with_test(tr, "/evolved.go", "draws_test.go", lambda package: _go_test(tr, go_test, package))


@pytest.mark.slow
def test_the_power_of_two_plugin_passes_go_vet_and_go_test_race(p2c, tmp_path, race_cache):
    """The plugin's own tests and the concurrent draws above under the race detector (cgo and a C compiler, so the
    sandbox also sees /usr and /lib, as tests/golang/test_go_quality.py runs it)."""
    _, _, tr = p2c
    module = write_module(tr, tmp_path)
    package = tr.summary.package_dir
    name = package.rsplit("/", 1)[-1]
    (module / package / "draws_test.go").write_text(_go_test(tr, _ROUTER_TEST, name), encoding="utf-8")
    for args in (["vet", "./" + package], ["test", "-race", "-count=1", "./" + package]):
        res = race_go(module, tmp_path, race_cache, args)
        assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
        assert "DATA RACE" not in res.stdout + res.stderr
