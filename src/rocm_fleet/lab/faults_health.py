"""Health faults of a GPU: a degraded PCIe link, RAS errors, old firmware, a failed amdgpu probe.

Each is a record in faults.json (see health_state.py), shown at once by a running host
(its /sys is re-rendered, as the driver's counters and link state change under a running
system) and at every boot. ``lab fault HOST clear`` drops them.
"""

from __future__ import annotations

import re

from rocm_fleet.hardware.render_health import FIRMWARE_NAMES, ras_block_names
from rocm_fleet.lab import hwsys
from rocm_fleet.lab.faults import FaultError, ask_supervisor, load_faults, save_faults
from rocm_fleet.lab.host import LabHost

# The speeds amdgpu/PCI core print in current_link_speed (drivers/pci/pci-sysfs.c, pci_speed_string).
LINK_SPEEDS = ("2.5 GT/s PCIe", "5.0 GT/s PCIe", "8.0 GT/s PCIe", "16.0 GT/s PCIe", "32.0 GT/s PCIe", "64.0 GT/s PCIe")
LINK_WIDTHS = (1, 2, 4, 8, 12, 16, 32)


def _gpu(host: LabHost, faults: dict, index: int):
    profile = hwsys.load_faulted_profile(host.spec.profile, faults)
    if not 0 <= index < len(profile.gpus):
        raise FaultError(f"{host.spec.name} has GPUs 0..{len(profile.gpus) - 1} now; no GPU {index}")
    return profile.gpus[index]


def _record(host: LabHost, key: str, entry, replaces=None) -> None:
    faults = load_faults(host)
    entries = [old for old in faults.get(key, []) if replaces is None or not replaces(old)]
    faults[key] = [*entries, entry]
    hwsys.load_faulted_profile(host.spec.profile, faults)  # validates before anything changes
    save_faults(host, faults)
    ask_supervisor(host, {"action": "rerender"})


def degrade_pcie_link(
    host: LabHost, index: int, width: int | None, speed: str | None, performance_level: str | None = None
) -> None:
    gpu = _gpu(host, load_faults(host), index)
    width = width or gpu.pcie_width
    speed = speed or gpu.pcie_speed
    if speed not in LINK_SPEEDS or width not in LINK_WIDTHS:
        raise FaultError(f"a PCIe link trains at one of {', '.join(LINK_SPEEDS)} and x{LINK_WIDTHS}")
    if LINK_SPEEDS.index(speed) > LINK_SPEEDS.index(gpu.pcie_speed) or width > gpu.pcie_width:
        raise FaultError(f"GPU {index}'s link maximum is {gpu.pcie_speed} x{gpu.pcie_width}")
    entry = {"gpu": index, "speed": speed, "width": width}
    if performance_level:
        entry["performance_level"] = performance_level
    _record(host, "pcie_links", entry, lambda old: old["gpu"] == index)


def ras_errors(host: LabHost, index: int, block: str, ue: int, ce: int) -> None:
    gpu = _gpu(host, load_faults(host), index)
    blocks = ras_block_names(gpu)
    if not blocks:
        raise FaultError(f"GPU {index} ({gpu.product}) has no RAS: amdgpu exports no ras/ directory for it")
    if block not in blocks:
        raise FaultError(f"GPU {index} has RAS blocks {', '.join(blocks)}; no {block}")
    if ue < 0 or ce < 0:
        raise FaultError("error counts are >= 0")
    entry = {"gpu": index, "block": block, "ue": ue, "ce": ce}
    _record(host, "ras_errors", entry, lambda old: (old["gpu"], old["block"]) == (index, block))


# amd-smi prints these 4 bytes dotted in decimal (PM 00.85.129.03, VCN 09.11.80.15), the others in hex
# (PLDM_BUNDLE 01.25.03.12 = 0x01250312, TA_RAS 1B.36.02.1A).
DOTTED_DECIMAL = ("smc", "vcn")


def parse_firmware_version(text: str, fw: str = "smc") -> int:
    """0x00558103, 5603587, or amd-smi's dotted bytes (00.85.129.03 for smc, 01.25.03.12 for pldm)."""
    if re.fullmatch(r"[0-9A-Fa-f]{1,3}(\.[0-9A-Fa-f]{1,3}){3}", text):
        parts = [int(part, 10 if fw in DOTTED_DECIMAL else 16) for part in text.split(".")]
        if max(parts) < 256:
            return int.from_bytes(bytes(parts), "big")
    try:
        value = int(text, 0)
    except ValueError:
        raise FaultError(f"firmware version {text!r}: give 0x%08x, a number or amd-smi's dotted form") from None
    if not 0 <= value < 2**32:
        raise FaultError("a firmware version is 32 bits")
    return value


def old_firmware(host: LabHost, index: int, fw: str, version: str) -> int:
    _gpu(host, load_faults(host), index)
    if fw not in FIRMWARE_NAMES:
        raise FaultError(f"{fw!r} is not an amdgpu fw_version name ({', '.join(FIRMWARE_NAMES)})")
    value = parse_firmware_version(version, fw)
    _record(
        host, "firmware", {"gpu": index, "fw": fw, "version": value}, lambda old: (old["gpu"], old["fw"]) == (index, fw)
    )
    return value


def init_failure(host: LabHost, index: int) -> None:
    faults = load_faults(host)
    _gpu(host, faults, index)
    if index in faults.get("init_failed_gpus", []):
        return
    faults.setdefault("init_failed_gpus", []).append(index)
    save_faults(host, faults)
    ask_supervisor(host, {"action": "rerender"})
