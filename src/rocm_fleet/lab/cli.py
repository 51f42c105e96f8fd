"""`rocm-fleet lab ...`: up, down, status, reset and fault injection."""

from __future__ import annotations

import argparse
import json
import os
import sys

from rocm_fleet.lab import cli_faults, faults, lab, paths


def register(subparsers) -> None:
    parser = subparsers.add_parser("lab", help="the lab of simulated GPU servers", description=__doc__)
    commands = parser.add_subparsers(dest="lab_command", metavar="ACTION", required=True)

    up = commands.add_parser("up", help="make the running lab match inventory/lab (builds the base on first use)")
    up.add_argument("count", nargs="?", type=int, default=None, help="add this many generated hosts (scale-NN)")
    up.add_argument("--hosts", type=int, default=0, help="same as COUNT")
    up.set_defaults(func=_up)

    commands.add_parser("down", help="stop every lab process and remove every lab mount").set_defaults(func=_down)
    commands.add_parser("reset", help="down, then drop every host's disk").set_defaults(func=_reset)
    status = commands.add_parser("status", help="each host: state, port, profile, boot_id, pid, systemd")
    status.add_argument("--json", action="store_true")
    status.set_defaults(func=_status)

    fault = commands.add_parser(
        "fault",
        help="inject a fault",
        description="HOST stop|start|hang-tool TOOL|corrupt-tool TOOL|remove-gpu INDEX|degrade-link I J|"
        "unload-amdgpu|clear|"
        + cli_faults.USAGE
        + ", or: mirror down|up|wrong-key|next-key|rotated-key|missing-package:NAME|clear",
    )
    fault.add_argument("target", help="a lab host, or 'mirror'")
    fault.add_argument("fault")
    fault.add_argument("arguments", nargs=argparse.REMAINDER)
    fault.set_defaults(func=_fault)


def _require_root() -> None:
    if os.geteuid() != 0:
        raise SystemExit("rocm-fleet lab: run as root (the lab needs namespaces and mounts)")


def _require_lab_keys() -> None:
    """The lab signs its mirror with keys only a checkout has (built packages carry no secret key)."""
    from rocm_fleet.lab.mirror import signing

    try:
        signing.require_secret_keys()
    except signing.LabKeysMissing as error:
        raise SystemExit(f"rocm-fleet lab: {error}") from None


def _up(args) -> int:
    _require_lab_keys()
    _require_root()
    result = lab.up(extra_hosts=args.count if args.count is not None else args.hosts)
    for change in result["reinstalled"]:
        print(f"reinstall {change}: its disk was dropped")
    systemd = result.get("systemd", {})
    for name in result["started"]:
        print(f"started   {name}, systemd {systemd.get(name, '-')}")
    for name in result["already_up"]:
        print(f"up        {name} (unchanged), systemd {systemd.get(name, '-')}")
    for name in result["stopped"]:
        print(f"stopped   {name} (not in the inventory)")
    if result["mirror"]:
        print(f"mirror    {result['mirror']}")
    if result["generated_inventory"]:
        print(f"inventory {result['generated_inventory']} (generated hosts)")
    print(f"lab up in {result['seconds']} s; state in {paths.state_dir()}")
    if result["not_ready"]:
        print(f"NOT REACHABLE: {', '.join(result['not_ready'])} (see hosts/<name>/boot.log)", file=sys.stderr)
        for name in result["not_ready"]:
            print(_log_tails(name), file=sys.stderr)
        return 1
    booting = {name: state for name, state in systemd.items() if state != "running"}
    for name, state in booting.items():
        print(f"{name}: systemd is {state} (journalctl -b inside the host says why)", file=sys.stderr)
    return 1 if any(not state.startswith("degraded") for state in booting.values()) else 0


def _log_tails(name: str, lines: int = 15) -> str:
    """The last lines of a host's supervisor and boot logs: why it did not come up, where CI keeps no state."""
    parts = []
    for log in ("supervisor.log", "boot.log"):
        path = paths.host_dir(name) / log
        try:
            tail = path.read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            tail = ["(none)"]
        parts.append(f"--- {name}: {log}, last {lines} lines\n" + "\n".join(tail))
    return "\n".join(parts)


def _down(args) -> int:
    _require_root()
    result = lab.down()
    print(f"lab down: stopped {len(result['stopped'])} host(s)")
    if result["leftover_processes"] or result["leftover_mounts"]:
        print(
            f"LEFT OVER: processes {result['leftover_processes']}, mounts {result['leftover_mounts']}", file=sys.stderr
        )
        return 1
    return 0


def _reset(args) -> int:
    _require_root()
    lab.reset()
    print(f"lab reset: hosts removed from {paths.state_dir()}")
    return 0


def _status(args) -> int:
    rows = lab.status()
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(
        f"{'HOST':<14} {'STATE':<8} {'PORT':>5}  {'PROFILE':<17} {'OS':<11} {'AMDGPU':<6} {'PID':>7}  "
        f"{'BOOT_ID':<36}  SYSTEMD"
    )
    for row in rows:
        amdgpu = {True: "loaded", False: "no", None: "-"}[row["amdgpu"]]
        print(
            f"{row['host']:<14} {row['state']:<8} {row['port']:>5}  {row['profile']:<17} {row['system']:<11} "
            f"{amdgpu:<6} {row['pid'] or '-':>7}  {row['boot_id'] or '-':<36}  {row['systemd'] or '-'}"
        )
    return 0


def _fault(args) -> int:
    _require_root()
    if args.target == "mirror":
        if args.fault not in ("down", "up"):  # the others sign the indexes again
            _require_lab_keys()
        from rocm_fleet.lab import mirror
        from rocm_fleet.lab.mirror.build import lab_mirror_info

        mirror.set_mirror_fault(lab_mirror_info(), None if args.fault == "clear" else args.fault)
        print(f"mirror: {args.fault}")
        return 0
    host = lab.host_by_name(args.target)
    numbers = [int(value) for value in args.arguments if value.lstrip("-").isdigit()]
    match args.fault:
        case "stop":
            host.stop()
        case "start":
            if not lab.start_host(host):
                raise SystemExit(f"{host.spec.name} did not come back (see its boot.log)")
        case "hang-tool" | "corrupt-tool":
            faults.break_tool(host, args.arguments[0], "hang" if args.fault == "hang-tool" else "corrupt")
        case "remove-gpu":
            faults.remove_gpu(host, numbers[0])
        case "degrade-link":
            faults.degrade_link(host, numbers[0], numbers[1])
        case "unload-amdgpu":
            faults.unload_amdgpu(host)
        case "clear":
            faults.clear(host)
        case name if name in cli_faults.FAULTS:
            print(f"{host.spec.name}: {cli_faults.run(host, name, args.arguments)}")
            return 0
        case _:
            raise SystemExit(f"unknown fault {args.fault!r} (see rocm-fleet lab fault --help)")
    print(f"{host.spec.name}: {args.fault} {' '.join(args.arguments)}".rstrip())
    return 0
