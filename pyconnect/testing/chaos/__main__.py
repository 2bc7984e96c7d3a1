"""``python -m pyconnect.testing.chaos --seed N --duration S --out DIR``: one chaos run and its report.

Exit code 0 when every promise held, 1 when one broke (the report says which), 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pyconnect.testing.chaos import nemesis
from pyconnect.testing.chaos.run import RunConfig, run

AVAILABLE = nemesis.KINDS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pyconnect.testing.chaos", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--seed", type=int, required=True, help="the nemesis's seed (replays a run)")
    parser.add_argument("--duration", type=float, required=True, help="seconds of faults")
    parser.add_argument("--out", type=Path, required=True, help="run directory (clusters, logs, report)")
    parser.add_argument(
        "--kinds", default=",".join(AVAILABLE), help=f"fault kinds (default {','.join(AVAILABLE)})"
    )
    parser.add_argument("--eos", action="store_true", help="exactly.once.source.support=enabled")
    parser.add_argument("--rate", type=float, default=20.0, help="records/s per partition (20)")
    parser.add_argument("--max-faults", type=int, default=40)
    parser.add_argument("--audits", action="store_true", help="also run the Spark audits")
    args = parser.parse_args(argv)
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in AVAILABLE]
    if unknown or not kinds:
        parser.error(f"--kinds: expected some of {', '.join(AVAILABLE)}, got {args.kinds!r}")
    if args.duration <= 0 or args.rate <= 0:
        parser.error("--duration and --rate must be positive")
    report = run(
        RunConfig(
            seed=args.seed,
            duration_s=args.duration,
            out_dir=args.out,
            kinds=kinds,
            exactly_once=args.eos,
            rate=args.rate,
            max_faults=args.max_faults,
            audits=args.audits,
        )
    )
    broken = report["verdict"]["broken_promises"]
    for line in broken:
        print(f"BROKEN: {line}", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
