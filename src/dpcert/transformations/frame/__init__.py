"""Frame transformations of the data engine: row-local filter, contribution bounding, one-pass
grouped statistics and statistic selection.  Each works through a backend
(`dpcert.backends.base.FrameOps`) and has a proof note ``docs/proofs/frame_*.md``.
"""

from dpcert.transformations.frame.bound import make_bound_contributions, then_bound_contributions
from dpcert.transformations.frame.filter import make_frame_filter, then_frame_filter
from dpcert.transformations.frame.group_by import make_group_by, then_group_by
from dpcert.transformations.frame.stats import (
    make_select_stat,
    per_group_change,
    then_select_stat,
)

__all__ = [
    "make_bound_contributions",
    "make_frame_filter",
    "make_group_by",
    "make_select_stat",
    "per_group_change",
    "then_bound_contributions",
    "then_frame_filter",
    "then_group_by",
    "then_select_stat",
]
