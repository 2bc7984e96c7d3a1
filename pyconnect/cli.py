"""The ``pyconnect`` command line."""

from __future__ import annotations

import argparse
import sys

from pyconnect import __version__
from pyconnect.testing.distribution import KAFKA_VERSION


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pyconnect",
        description="An asyncio Kafka Connect runtime compatible with Apache Kafka Connect, hosting MirrorMaker 2.",
    )
    parser.add_argument(
        "--version", action="version", version=f"pyconnect {__version__} (Kafka Connect {KAFKA_VERSION} compatible)"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    parser.parse_args(argv)
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
