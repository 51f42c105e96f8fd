"""``rocm-fleet drift``: arguments, and the steps around the engine that looks at the hosts.

The engine is passed in as ``collect(inventory, limit, progress)`` and returns
``(report, host_groups)``: the report with every host's checks and pending
changes, and each host's inventory groups (for waiver patterns that name a
group). Everything else happens here: waivers are read before any host is
contacted, applied to the report, the report is written in every asked-for
form, the summary printed, and the exit status follows ``model.exit_code``.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import TextIO

from rocm_fleet.drift.model import EXIT_CANNOT_RUN, DriftReport, exit_code
from rocm_fleet.drift.summary import format_summary
from rocm_fleet.drift.waivers import WaiverError, apply_waivers, load_waivers
from rocm_fleet.drift.writers import FORMATS, write_all

Collector = Callable[[str, "str | None", Callable[[str], None]], tuple[DriftReport, Mapping[str, Iterable[str]]]]

DEFAULT_OUTPUT_DIR = "."


def _formats(value: str) -> list[str]:
    chosen = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in FORMATS]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"choose from {', '.join(FORMATS)} (comma-separated), not {value!r}")
    return chosen


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-i", "--inventory", required=True, help="Ansible inventory that declares the fleet")
    parser.add_argument("-l", "--limit", help="Ansible host pattern: look only at these hosts")
    parser.add_argument(
        "--output-dir", default=DEFAULT_OUTPUT_DIR, help="where drift.json, .junit.xml, .html and .prom go"
    )
    parser.add_argument(
        "--textfile-dir", help="node_exporter textfile collector directory; rocm_fleet_drift.prom is written there"
    )
    parser.add_argument("--waivers", help="YAML waiver file (check, hosts, reason, expires)")
    parser.add_argument(
        "-e", "--extra-vars", dest="extra_vars", action="append", default=[], metavar="VARS",
        help="variables as ansible-playbook -e takes them (key=value, JSON or @file), winning over the inventory",
    )
    parser.add_argument(
        "--format",
        dest="formats",
        type=_formats,
        default=list(FORMATS),
        help=f"report forms to write, comma-separated (default: {','.join(FORMATS)})",
    )


def register(subparsers: argparse._SubParsersAction, collect: Collector) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "drift",
        help="report everything that differs from the inventory, on every host",
        description="Find every item site.yml --check would change and every failed compliance check. "
        "Exit 0: all hosts comply; 2: drift or failed checks; 3: a host was unreachable; 1: could not run.",
    )
    add_arguments(parser)
    parser.set_defaults(func=lambda args: run_drift(args, collect))
    return parser


def run_drift(
    args: argparse.Namespace,
    collect: Collector,
    out: TextIO | None = None,
    err: TextIO | None = None,
    today: datetime.date | None = None,
) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    waivers = []
    if args.waivers:
        try:
            waivers = load_waivers(args.waivers)
        except WaiverError as exc:
            print(f"rocm-fleet drift: {exc}", file=err)
            return EXIT_CANNOT_RUN

    def progress(line: str) -> None:
        print(line, file=err, flush=True)

    try:
        # As site.yml would be run with them, so drift and --check compare under the same overrides.
        options = {"extra_vars": args.extra_vars} if getattr(args, "extra_vars", None) else {}
        report, host_groups = collect(args.inventory, args.limit, progress, **options)
    except Exception as exc:  # the engine failing is the one case the command itself fails
        print(f"rocm-fleet drift: could not run: {exc}", file=err)
        return EXIT_CANNOT_RUN
    today = today or datetime.datetime.now(datetime.UTC).date()
    report = apply_waivers(report, waivers, today, host_groups)
    try:
        paths = write_all(report, args.output_dir, formats=args.formats, textfile_dir=args.textfile_dir)
    except OSError as exc:
        print(f"rocm-fleet drift: could not write the report: {exc}", file=err)
        return EXIT_CANNOT_RUN
    print(format_summary(report), file=out)
    print("Report files:", file=out)
    for name, path in paths.items():
        print(f"  {name}: {path}", file=out)
    return exit_code(report)
