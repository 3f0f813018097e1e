"""The GitHub home: issue form, labels, authorization, the GitHub forge and state store.

Pure modules (issue_form, sanitize, labels, authz, commands, config, diff) hold
no I/O and are tested directly; ``client`` is the one place that speaks REST,
``forge`` and ``state`` are thin adapters over it and git.
"""
