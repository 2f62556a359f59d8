"""Fixed statistics: the functions of an output that events threshold.

`events` (``Event`` and the plain statistics), `features` (feature maps, additive scores,
atom patterns), `classifier` (a logistic score) and `countpattern`.  A search fits
them; once fitted they are fixed functions, and the kernel evaluates them on fresh draws.
"""
