"""Self-audit: dpcert's own mechanisms and engine releases, audited against their claims.

The registry (`dpcert.selfaudit.targets`) builds each target and audits it with
`dpcert.audit.audit`, the path every user's audit takes; ``dpcert audit --self`` prints
the table.  It sits outside the auditor package: the auditor knows nothing of dpcert's
mechanisms, the registry knows them all.
"""
