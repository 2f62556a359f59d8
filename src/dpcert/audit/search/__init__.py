"""The searches: plug-ins that choose which events the kernel estimates.

:mod:`~dpcert.audit.search.base` holds the interface (``Search``, ``SearchTask``,
``SearchOutcome``), :mod:`~dpcert.audit.search.schedule` every share of the time budget,
:mod:`~dpcert.audit.search.standard` the default search and :mod:`~dpcert.audit.search.given`
the search that does nothing (events given beforehand).
"""
