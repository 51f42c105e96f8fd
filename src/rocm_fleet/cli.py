"""The ``rocm-fleet`` command line."""

from __future__ import annotations

import argparse
import sys

from rocm_fleet import __version__
from rocm_fleet.collection import NotInstalled
from rocm_fleet.lab.inventory import InventoryError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rocm-fleet", description=__doc__)
    parser.add_argument("--version", action="version", version=f"rocm-fleet {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    from rocm_fleet.drift.cli import register as register_drift
    from rocm_fleet.drift.engine import collect
    from rocm_fleet.lab.cli import register as register_lab

    register_lab(subparsers)
    register_drift(subparsers, collect=collect)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 1
    try:
        return args.func(args)
    except NotInstalled as error:  # run installed, for something only a checkout has: say what to do
        print(f"rocm-fleet: {error}", file=sys.stderr)
        return 2
    except InventoryError as error:  # the lab's inventory names what is wrong and where: no traceback
        print(f"rocm-fleet {args.command}: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
