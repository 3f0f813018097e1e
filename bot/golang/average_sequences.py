"""Probe candidates for the weights of a moving average of a request signal: one tenant's prompts, short then long.

An admitter that keeps, in its receiver, an exponential moving average of a request signal
(``a.tokenEMA[tenant] = 0.8*prev + 0.2*inLen``, ``inLen`` the prompt length; ``Threshold.moving_average``, found
by ``param_names.moving_average``) decides on what that average holds after the tenant's earlier requests. The
threshold search's warm-ups (``probe_inputs._warmups``) all have one prompt length, so the average never moved off
it and its weights changed no decision: a researcher's trial-3 admitter (fixtures/admission_tenant_ema.go) had
``translate.untested-parameter`` for both of them.

So, for a stateful admitter's parameter that is one weight of such an average, the candidates here come first:
earlier requests from the decided request's tenant, half of them short and half long (the average rises) and the
reverse (it falls), so that what the average remembers depends on the weights; optionally after one request of
another tenant, short or long (a share of the pool's volume needs someone to share with); then the decided
request, short or long. Counts: a few and many, and one past every per-tenant limit on the tenant's arrivals
(``window_sequences.limits``: below it the average may decide nothing). Each on the pools either side of every
other comparison on a pool metric (``window_sequences.pools``), at the sheddable priority (every priority when a
branch on the class holds the update: ``probe_inputs.class_guarded``).

Pure: analysis in, candidate states out.
"""

from __future__ import annotations

import itertools

from bot.golang import window_sequences
from bot.golang.analysis_types import Analysis, Threshold
from bot.golang.param_names import SAMPLE
from bot.golang.probe_inputs import MAX_COUNT_WARMUPS, class_guarded, count, make_request, make_state

#: Request signals a moving average may sample, and the knob of ``make_request`` that sets each.
_SAMPLED = {"InputTokens": "tokens"}
#: The short and the long prompt (tokens) of a sequence, unless a threshold on the signal lies past the long one.
SHORT, LONG = 64, 4096
#: Earlier requests of the decided request's tenant: a few and many (and one past every per-tenant limit).
COUNTS = (4, 12)


def sampled(an: Analysis, th: Threshold) -> str | None:
    """The ``make_request`` knob of the request signal the moving average ``th`` weighs samples, or None: ``th``
    is no weight of a moving average, or the average samples no request signal (a01's ``a.typicalLoad`` averages
    the pool's in-flight requests). The sample's weight holds the signal; the decay's only through it."""
    if th.moving_average is None:
        return None
    var, _ = th.moving_average
    sample = next((o for o in an.thresholds if o.moving_average == (var, SAMPLE)), th)
    return next((_SAMPLED[s] for s in sample.signals if s in _SAMPLED), None)


def lengths(an: Analysis) -> tuple[int, int]:
    """(short, long) prompts: SHORT and LONG, the long one past every threshold on the prompt length (an average
    compared with 8000 tokens needs prompts past it to cross it)."""
    compared = [th.value for th in an.thresholds if th.role == "threshold" and "InputTokens" in th.signals]
    return SHORT, count(max([LONG] + [2 * v for v in compared if v > 0]))


def orders(n: int, short: int, long: int) -> list[list[int]]:
    """Prompt lengths of ``n`` earlier requests: half short then half long (the average rises), and the reverse."""
    rising = [short] * (n // 2) + [long] * (n - n // 2)
    return [rising, rising[::-1]]


def candidates(an: Analysis, th: Threshold, kind: str, stateful: bool) -> list[dict]:
    """The sequences above for a stateful admitter's weight of a moving average of a request signal, else none."""
    if kind != "admission" or not stateful or sampled(an, th) is None:
        return []
    short, long = lengths(an)
    counts = sorted(set(COUNTS) | {n + 1 for n in window_sequences.limits(an) if n + 1 <= MAX_COUNT_WARMUPS})
    priorities = (-1, 0, 1) if class_guarded(an, th) else (-1,)
    out = []
    for eps, priority, n in itertools.product(window_sequences.pools(an, th), priorities, counts):
        for tokens, other, decided in itertools.product(orders(n, short, long), (None, short, long), (short, long)):
            sizes = [(other, "tenant-b")] if other else []
            sizes += [(t, "tenant-a") for t in tokens]
            warm = [
                make_request(tokens=t, priority=priority, tenant=who, rid=f"w-{k}") for k, (t, who) in enumerate(sizes)
            ]
            out.append(make_state(eps, make_request(tokens=decided, priority=priority), warm))
    return out
