"""``dpcert example NAME``: run a bundled worked example and print its release and privacy cost."""

from __future__ import annotations

import argparse
import json

from dpcert.cli._parsers import Subparsers

__all__ = ["register", "run", "framework_example"]


def framework_example(data: list[float] | None = None) -> dict[str, object]:
    """The OpenDP framework example: clamp to [0, 12] → sum → Laplace(25); privacy at d_in = 1.

    Examples
    --------
    >>> out = framework_example()
    >>> out["epsilon"]
    0.48000076293945315
    """
    import dpcert as dp
    from dpcert._numbers import round_up

    u = [12.0, 10.0, 8.0, 7.0] if data is None else data
    space = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())
    m = space >> dp.t.then_clamp(0.0, 12.0) >> dp.t.then_sum() >> dp.m.then_laplace(25.0)
    eps = m.map(1)
    return {
        "example": "framework",
        "data": u,
        "pipeline": m.name,
        "release": m(u),
        "d_in": 1,
        "epsilon": round_up(eps),
        "epsilon_exact": str(eps),
        "accuracy_95": float(m.accuracy(0.05)),
    }


EXAMPLES = {"framework": framework_example}


def run(args: argparse.Namespace) -> int:
    """Run the example named on the command line."""
    out = EXAMPLES[args.name]()
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"example {out['example']}: {out['pipeline']} on {out['data']}")
    print(f"  DP release:   {out['release']:.4f}")
    print(f"  privacy:      ε = {out['epsilon']} for d_in = {out['d_in']} "
          f"(exact {out['epsilon_exact']})")
    print(f"  accuracy:     |noise| ≤ {out['accuracy_95']:.2f} with probability 95%")
    return 0


def register(sub: Subparsers) -> None:
    """Add the ``example`` sub-command."""
    p = sub.add_parser("example", help="run a bundled worked example")
    p.add_argument("name", choices=sorted(EXAMPLES), help="which example")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)
