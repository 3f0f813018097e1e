"""Which hypotheses the planned cells cannot exercise: one rule for stage 4's plan, gate 2's price and stage 5.

Stage 5 reports them not measurable on these cells (``bot.stats.unjudged.set_aside``); stage 4 plans the
hypotheses after the same set-aside, so that they take no alpha, no power row, no cell and no GPU time, and the
levels the approved plan prints are the levels stage 5 tests at. `promote evaluate` applies it too.
"""

from __future__ import annotations

from bot.model import PolicyKind

#: The policy kinds whose cells stage 5 checks for traffic that cannot exercise the plugin (``unexercised_by``).
SET_ASIDE_KINDS = (PolicyKind.ADMISSION, PolicyKind.SCHEDULING)


def unexercised_by(kind: PolicyKind, summary, request, epp_config: str | None, hypotheses):
    """Why the cells cannot exercise the plugin, from its translation (``summary``) and its EndpointPickerConfig as
    deployed (``epp_config``; None: the plugin's defaults): an admitter that sheds none of their traffic
    (``sheds_nothing``: every benchmarked hypothesis), or a scheduler whose evolved order ranks every request of
    the request's workloads alike (``order_cells``: the hypotheses whose mechanism is the order). Stage 5's rule,
    which `promote evaluate` shares so that the same inputs set the same hypotheses aside; ``verdicts_on``'s
    ``unexercised``."""
    from bot.bench.order_cells import deployed_parameters, scheduler_set_aside
    from bot.bench.priority_plan import sheds_nothing

    if kind is PolicyKind.ADMISSION:
        return sheds_nothing(summary)
    if kind is PolicyKind.SCHEDULING:
        params = deployed_parameters(epp_config, summary.plugin_type)
        return scheduler_set_aside(summary, request, params, hypotheses)
    return None


def apply_set_aside(hypotheses, unexercised) -> list:
    """The hypotheses with those ``unexercised_by`` names set aside as not measurable on these cells (no
    prediction; ``not_in_plan`` says why and what would measure them): what stage 5 judges and stage 4 plans."""
    from bot.bench.order_cells import OrderSetAside
    from bot.bench.priority_plan import UNEXERCISED_FIX
    from bot.stats.unjudged import set_aside, set_aside_unexercised

    if isinstance(unexercised, OrderSetAside):
        return set_aside(hypotheses, unexercised.why, unexercised.fix, unexercised.check)
    return set_aside_unexercised(hypotheses, unexercised, UNEXERCISED_FIX)


def for_plan(request, summary, epp_config: str | None, hypotheses) -> list:
    """The hypotheses as stage 4 plans them (and gate 2 and `promote bench run` price them): stage 5's set-aside
    on the same translation and EndpointPickerConfig, unless it leaves nothing to run. An admitter that sheds none
    of the cells' traffic has every benchmarked hypothesis set aside, yet its priority mix still decides the
    shedding order (``mix_only``): its plan is the mix and no cells, so no GPU time goes to runs that decide
    nothing. With no mix to run either, a plan with no cells has no experiment, so such a plan keeps its cells,
    and gate 2 says that none of them will be judged (``G2.priority-exercised``)."""
    if summary is None or request.kind not in SET_ASIDE_KINDS:
        return list(hypotheses)
    set_aside = apply_set_aside(hypotheses, unexercised_by(request.kind, summary, request, epp_config, hypotheses))
    if any(h.benchmarked for h in set_aside) or mix_only(request, set_aside):
        return set_aside
    return list(hypotheses)


def mix_only(request, hypotheses) -> bool:
    """Whether these (planned) hypotheses leave the plan the priority mix and no cells: none is benchmarked, and
    the request's plan has a mix that decides one of them (an admitter's shedding order,
    ``bot.stats.shedding.shedding_hypothesis``)."""
    from bot.bench.priority_plan import priority_mix_reason
    from bot.stats.shedding import shedding_hypothesis

    if any(h.benchmarked for h in hypotheses) or priority_mix_reason(request) is None:
        return False
    return shedding_hypothesis(hypotheses, request.kind) is not None
