"""The searches: plug-ins that choose which events the kernel estimates.

`base` holds the interface (``Search``, ``SearchTask``,
``SearchOutcome``), `schedule` every share of the time budget,
`standard` the default search and `given`
the search that does nothing (events given beforehand).
"""
