"""The auditor's sound kernel: what the soundness argument (``docs/auditor.md``) covers.

Outputs and samplers, neighbouring pairs, claims, the hand-off value a search returns
(`Choice`), the estimation on fresh draws, event
membership, parallel draws, the exact bounds and the verdict.  It imports nothing from
`dpcert.audit.search` (``tests/test_layers.py`` checks it).
"""
