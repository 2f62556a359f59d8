"""Engine backends: the data work of a release (schema, filter, keyed bounding, grouped integer
statistics) behind one protocol, :class:`dpcert.backends.base.FrameOps`."""

from dpcert.backends.base import BoundSpec, FrameOps, GroupedStats, StatKind, StatSpec

__all__ = ["BoundSpec", "FrameOps", "GroupedStats", "StatKind", "StatSpec"]
