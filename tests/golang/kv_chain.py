"""A newcomer's own evolved router (findings newuser4, items 1 and 4): the bundled example with its EVOLVE block
replaced by a queue penalty and a KV chain, a 0.5 cut above 0.9 and, in the ``else if``, a floored taper above 0.7
(``math.Max(0.2, 1.0-1.5*(KVU-0.7))``, the shape of blis.md §2 A and sim2real's program A)."""

from __future__ import annotations

import shutil
from pathlib import Path

from .conftest import EXAMPLE

KV_TAPER = "math.Max(0.2, 1.0-1.5*(snap.KVUtilization-0.7))"

BLOCK = """\t// EVOLVE-BLOCK-START
\t// HYPOTHESIS-1: Under load-spikes, penalising deep queues lowers p95 end-to-end latency
\t// MECHANISM-1: instances whose QueueDepth exceeds 3 get their score divided by 1+0.25*(q-3), so bursts spread to instances with short queues
\t// EXPECT-1: e2e_p95_ms < 7000

\tscores := make(map[string]float64, len(snapshots))
\tfor i, scorer := range ws.scorers {
\t\tdimScores := scorer(req, snapshots)
\t\tfor _, snap := range snapshots {
\t\t\ts := dimScores[snap.ID]
\t\t\tif s < 0 {
\t\t\t\ts = 0
\t\t\t}
\t\t\tif s > 1 {
\t\t\t\ts = 1
\t\t\t}
\t\t\tscores[snap.ID] += s * ws.weights[i]
\t\t}
\t}

\tfor i := range snapshots {
\t\tsnap := snapshots[i]
\t\tadj := 1.0
\t\tq := float64(snap.QueueDepth)
\t\t// Queue pressure.
\t\tif q > 3 {
\t\t\tadj *= 1.0 / (1.0 + 0.25*(q-3))
\t\t}
\t\t// KV pressure: hard cut above 0.9, taper above 0.7.
\t\tif snap.KVUtilization > 0.9 {
\t\t\tadj *= 0.5
\t\t} else if snap.KVUtilization > 0.7 {
\t\t\tadj *= KV_TAPER
\t\t}
\t\tscores[snap.ID] = scores[snap.ID]*adj + 0.01/(1.0+float64(snap.InFlightRequests))
\t}

\tbestScore := -1.0
\tbestIdx := 0
\tfor i := range snapshots {
\t\ts := scores[snapshots[i].ID]
\t\tif s > bestScore {
\t\t\tbestScore = s
\t\t\tbestIdx = i
\t\t}
\t}
""".replace("KV_TAPER", KV_TAPER)


def program_text(taper: str = KV_TAPER) -> str:
    """The program, with ``taper`` in place of the KV chain's floored taper."""
    src = EXAMPLE.read_text(encoding="utf-8")
    start, end = src.index("\t// EVOLVE-BLOCK-START"), src.index("\t// EVOLVE-BLOCK-END")
    return src[:start] + BLOCK.replace(KV_TAPER, taper) + src[end:]


def write_program(out: Path, taper: str = KV_TAPER) -> Path:
    """The program as ``out/best_program.py`` with the bundled promotion.yaml beside it; the promotion.yaml's path."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "best_program.py").write_text(program_text(taper), encoding="utf-8")
    shutil.copy(EXAMPLE.parent / "promotion.yaml", out / "promotion.yaml")
    return out / "promotion.yaml"
