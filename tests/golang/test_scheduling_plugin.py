"""A queue-position scorer as an llm-d maintainer reviews it (the scheduling corpus s01..s03).

Found by an llm-d maintainer reviewing the generated plugins: Score rebuilt and sorted a 256-request queue per
endpoint per request (with a global mutex in s02 for a field it only reads), the generated tests passed with the
sheddable class inverted, the cap removed or every endpoint scoring 1, parameters nothing read were exposed as
"evolved defaults", the waiting count that drives the score was missing from the Signals tables, and the README's
caveats described other programs.
"""

from __future__ import annotations

from bot.golang.receiver_state import stateful_fields

from .conftest import CORPUS, translate_path

S01 = CORPUS / "s01_slo_aging_scheduler.go"
S02 = CORPUS / "s02_sjf_starvation_guard.go"
S03 = CORPUS / "s03_function_deadline_slack.go"


def _go(tr, kind: str) -> tuple[str, str]:
    """(path, text) of the plugin's main file ("main"), its test ("test") or adapter ("adapter")."""
    for path, text in tr.files.items():
        if not path.endswith(".go"):
            continue
        if kind == "test" and path.endswith("_test.go"):
            return path, text
        if kind == "adapter" and path.endswith("/adapter.go"):
            return path, text
        if kind == "main" and "scoreQueued(" in text and not path.endswith("_test.go"):
            return path, text
    raise AssertionError(f"no {kind} file")


def _readme(tr) -> str:
    return next(t for p, t in tr.files.items() if p.endswith("/README.md"))


def test_a_receiver_field_the_evolved_code_only_reads_is_not_state(dictionary, analyze_text):
    """s02's GuardedSJF only reads MaxWaitUs (set at construction): no mutex serialising every scheduling cycle,
    and no README or report line saying it keeps state. A field written through a pointer receiver, or a map, is."""
    _, an, tr = translate_path(S02, dictionary)
    main = _go(tr, "main")[1]
    assert "sync.Mutex" not in main and '"sync"' not in main
    assert "keeps state" not in _readme(tr) and "keeps state" not in tr.report_markdown
    assert "**state and concurrency**" not in tr.report_markdown
    kept = "package sim\n\ntype Q struct {{\n\tN int64\n\tSeen map[string]int\n}}\n\n{method}\n"
    reads = "func (q Q) OrderQueue(requests []*Request, clock int64) {\n\t_ = clock - q.N\n}"
    counts = "func (q *Q) OrderQueue(requests []*Request, clock int64) {\n\tq.N++\n}"
    copies = "func (q Q) OrderQueue(requests []*Request, clock int64) {\n\tq.N = clock\n}"
    maps = 'func (q Q) OrderQueue(requests []*Request, clock int64) {\n\t_ = q.Seen["a"]\n}'
    escapes = "func (q *Q) OrderQueue(requests []*Request, clock int64) {\n\tkeep(q)\n}"
    for method, want in [(reads, set()), (counts, {"N"}), (copies, set()), (maps, {"Seen"}), (escapes, {"N", "Seen"})]:
        text = kept.format(method=method)
        an = analyze_text(text)
        assert stateful_fields(an.src, an) == want, method
