"""Statistics for stage 5: how many benchmark runs to plan, and what the runs say.

``power`` sizes the plan (per-arm repetitions), ``verdicts`` turns llm-d-benchmark
reports into confirmed / refuted / inconclusive verdicts, ``evidence`` renders
them for people. Everything is deterministic: fixed seeds, sorted iteration.
"""

from bot.model import RequestError


class StatsError(RequestError):
    """Input the statistics cannot use (bad parameters, unusable report set); one line with the fix."""
