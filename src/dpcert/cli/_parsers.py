"""The argparse type every sub-command module's ``register`` receives."""

from __future__ import annotations

import argparse
from typing import TypeAlias

#: What ``ArgumentParser.add_subparsers()`` returns: each sub-command adds its parser to it.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
