"""What an llm-d maintainer's review of the generated plugins asked to change (task gopol).

Unused parameters in the adapter's functions (revive/unparam flag them), a ``Consumes()`` returning nothing with its
ConsumerPlugin assertion, a recovered failure logged at ``V(DEFAULT).Error`` on every request (``V`` does not filter
``Error``: a persistent failure floods the log), and generated tests that pass a constant through ``%s`` or set a
session header on requests to a plugin that never reads it.
"""

from __future__ import annotations

import re

import pytest

from bot.golang.generate import generate
from bot.golang.testgen import _request_literal, fields_read

from .conftest import CORPUS, EXAMPLE, passes_with_test, translate_path

A03 = CORPUS / "a03_openevolve_tenant_fair_share.py"  # admission, consumes nothing
S02 = CORPUS / "s02_sjf_starvation_guard.go"  # scheduling, consumes nothing
R04 = CORPUS / "r04_function_cache_load_blend.go"  # routing, reads no request field

#: The adapter's functions and the plugin's own that hand their parameters on to them.
_ADAPTER_FUNCS = ("newBlisRequest", "newRouterState", "newRoutingSnapshot", "incoming")


@pytest.fixture(scope="module", params=[EXAMPLE, A03, S02, R04], ids=lambda p: p.stem)
def translated(request, dictionary):
    return translate_path(request.param, dictionary)[2]


def _file(tr, suffix: str) -> str:
    return next(t for p, t in tr.files.items() if p.endswith(suffix))


def _main(tr) -> str:
    """The plugin file: the one defining TypedName."""
    return next(t for p, t in tr.files.items() if re.search(r"^func \(\w \*\w+\) TypedName\(", t, re.M))


def _functions(text: str) -> dict[str, tuple[list[str], str]]:
    """Each top-level function or method: (its parameter names, its body)."""
    out = {}
    for m in re.finditer(r"^func (?:\(\w+ \*?\w+\) )?(\w+)\((.*?)\)[^\n]*\{\n(.*?)^\}", text, re.M | re.S):
        params = [p.strip().split(" ")[0] for p in re.split(r",\s*", " ".join(m.group(2).split())) if p.strip()]
        out[m.group(1)] = (params, m.group(3))
    return out


def test_the_adapter_functions_take_only_the_parameters_they_read(translated):
    funcs = _functions(_file(translated, "/adapter.go")) | _functions(_main(translated))
    for name in _ADAPTER_FUNCS:
        if name not in funcs:
            continue
        params, body = funcs[name]
        assert "_" not in params, f"{name}({', '.join(params)}) takes a parameter it ignores"
        for p in params:
            assert re.search(rf"\b{p}\b", body), f"{name} never reads its parameter {p}"
    for name in ("Score", "Admit"):
        if name in funcs:
            params, body = funcs[name]
            request = params[1]
            assert request == "_" or re.search(rf"\b{request}\b", body), f"{name} names {request} and never reads it"


def test_consumes_is_declared_only_when_the_plugin_consumes_something(dictionary):
    for path in (A03, S02):
        main = _main(translate_path(path, dictionary)[2])
        assert "Consumes()" not in main and "plugin.ConsumerPlugin" not in main, path.name
        assert "DataDependencies{}" not in main, path.name
    main = _main(translate_path(EXAMPLE, dictionary)[2])
    assert "Consumes() plugin.DataDependencies" in main and "_ plugin.ConsumerPlugin" in main


def test_a_failing_evolved_call_is_logged_at_most_once_a_minute_without_a_lock(translated):
    main = _main(translated)
    assert "V(logutil.DEFAULT).Error" not in main  # V() does not filter Error
    assert "failureLog" in main and '"sync/atomic"' in main
    assert re.search(r"\b[sa]\.failures\.failed\(ctx, (err|failed),", main)
    # the helpers sit with the others at the end of the file, not between Consumes and Category
    methods = [m.start() for m in re.finditer(r"^func \([sa] \*\w+\) ", main, re.M)]
    assert main.index("func evolvedPanicSite(") > max(methods)
    assert main.index("type failureLog struct") > max(methods)


_FAILURE_LOG_TEST = """package {pkg}

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

func TestFailureLogThrottles(t *testing.T) {{
	var lines []string
	ctx := log.IntoContext(context.Background(), funcr.New(func(prefix, args string) {{
		lines = append(lines, args)
	}}, funcr.Options{{}}))
	var f failureLog
	for range 3 {{
		f.failed(ctx, errors.New("boom"), "evolved logic failed")
	}}
	if len(lines) != 1 || !strings.Contains(lines[0], `"failuresNotLoggedSinceLast"=0`) {{
		t.Fatalf("3 failures in a row logged %q, want the first only", lines)
	}}
	f.lastLogged.Store(time.Now().Add(-2 * failureLogInterval).UnixNano())
	f.failed(ctx, errors.New("boom"), "evolved logic failed")
	if len(lines) != 2 || !strings.Contains(lines[1], `"failuresNotLoggedSinceLast"=2`) {{
		t.Fatalf("a failure an interval later logged %q, want one line counting the 2 not logged", lines)
	}}
}}
"""


def test_the_failure_log_logs_the_first_then_one_an_interval_with_the_count_left_out(dictionary):
    tr = translate_path(A03, dictionary)[2]
    passes_with_test(tr, "/adapter.go", "zz_failure_log_test.go", lambda pkg: _FAILURE_LOG_TEST.format(pkg=pkg))


def test_generated_tests_write_the_factory_into_the_format(translated):
    test = _file(translated, "_test.go")
    assert not re.search(r't\.Fatalf\("%s[^"]*", "\w+Factory"', test)
    assert "Factory(%s) succeeded, want an error" in test


def test_a_request_in_a_generated_test_sends_only_the_headers_the_plugin_reads():
    r = {"RequestID": "r-1", "Headers": {"x-session-token": "s-1", "x-llm-d-slo-ttft-ms": "250"}}
    slo_only = frozenset({"Headers", "x-llm-d-slo-ttft-ms"})
    assert _request_literal(r, slo_only) == (
        '&scheduling.InferenceRequest{RequestID: "r-1", Headers: map[string]string{"x-llm-d-slo-ttft-ms": "250"}}'
    )
    assert "Headers" not in _request_literal({"RequestID": "r-1", "Headers": {"x-session-token": "s-1"}}, slo_only)
    both = slo_only | {"x-session-token"}
    assert '"x-session-token": "s-1"' in _request_literal(r, both)


def test_the_headers_the_plugin_reads_are_among_the_fields_read(dictionary):
    """The example reads SessionID from x-session-token; a03 reads no header: its test requests send none."""
    src, an, _ = translate_path(EXAMPLE, dictionary, "evolved-adaptive-scorer")
    assert "x-session-token" in fields_read(generate(src, an, dictionary, "evolved-adaptive-scorer"))
    src, an, _ = translate_path(A03, dictionary)
    assert not {"x-session-token", "Headers"} & fields_read(generate(src, an, dictionary, "t-a03"))
