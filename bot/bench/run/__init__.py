"""``promote bench run``: the stage 4 plan run on a GPU cluster through llm-d-benchmark's own CLI.

Modules, one job each:

- ``commands``: every command line the runner executes, built in one place (``--dry-run`` prints them);
- ``schedule``: the plan as an ordered list of stand-up groups, EPP swaps and cells;
- ``manifest``: the durable record of finished cells (atomic writes, resume);
- ``budget``: GPU-minutes spent, and the stop before a cell would exceed the cap;
- ``image``: the evolved arm's EPP image, built from the fork at the approved commit;
- ``faults``: Track B fault treatments carried out during a run (pod deletion at t = duration/2);
- ``runner``: the loop that ties them together and always tears the stack down;
- ``rounds``: the sequential design: rounds judged between them with stage 5's rule, each cell stopped once decided;
- ``teardown``: ``promote bench teardown`` for a job killed outright.
"""
