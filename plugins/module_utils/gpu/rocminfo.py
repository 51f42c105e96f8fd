# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""rocminfo text -> SourceReport (GPU agents only).

rocminfo has no machine-readable mode, so the text is read agent by agent.
Only agents with 'Device Type: GPU' count; CPU and DSP (aie2) agents do not.
Fields are read by context (agent body, Pool Info, ISA Info) rather than by
indentation, because pasted output loses its padding.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import (
    GpuParseError,
    clean_lines,
    new_device,
    new_report,
    normalize_hex_id,
    pci_bus_from_bdfid,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.status import SOURCE_OK
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.tools import (
    DOMAINLESS_BDF,
    add_warning,
    domainless_bdf,
    failed,
    first_line,
    guarded,
    normalize_gfx_target,
    product_name,
    tool_int,
)

TOOL = "rocminfo"
ROCMINFO_ARGS = []

_ROCK_LOADED = re.compile(r"^ROCk module(?: version (\S+))? is loaded")
_AGENT = re.compile(r"^\*+$")
_AGENT_TITLE = re.compile(r"^Agent (\d+)$")
_FIELD = re.compile(r"^([A-Za-z][^:]*?):\s*(.*)$")
_NUMBER = re.compile(r"^(\d+)")
_ISA_TARGET = re.compile(r"--(gfx[0-9a-f]+)")
_KFD_OPEN = re.compile(r"Unable to open /dev/kfd(?: read-write)?:?\s*(.*)$", re.I)
# Name the cause and the fix: /dev/kfd belongs to group render (video on older distributions).
KFD_DENIED_MESSAGE = (
    "cannot open /dev/kfd (permission denied): the user running rocminfo must be in the 'render' "
    "group (and 'video' on older distributions), or the container must be given /dev/kfd and /dev/dri"
)
KFD_NO_DRIVER_MESSAGE = (
    "cannot open /dev/kfd (no such device): the device node exists but no amdgpu KFD answers it; "
    "load amdgpu and check that it found the GPUs (dmesg)"
)
KFD_MISSING_MESSAGE = (
    "cannot open /dev/kfd (no such file): the amdgpu driver is not loaded, or the container "
    "was not given /dev/kfd and /dev/dri"
)
_FATAL = (
    re.compile(r"HSA_STATUS_ERROR|hsa api call failure|Failed to get", re.I),
    re.compile(r"^Traceback|Segmentation fault|Aborted", re.I),
)
# Printed under sudo and in containers when the login name is unknown; the agents follow
# as usual (ROCm/ROCm#928, comment 4), so it is a warning, not a failure. rocminfo 6.1.2
# and 7.2.4 name the root group where older releases name video.
_NOT_FATAL = (re.compile(r"^Failed to get user name to check for \S+ group membership", re.I),)


def parse_rocminfo(text):
    """Parse rocminfo output; raise GpuParseError if it is not rocminfo output or an error report."""
    lines = clean_lines(text)
    report = new_report()
    agents = []
    agent = None
    context = "system"
    recognized = False
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        loaded = _ROCK_LOADED.match(line)
        if loaded:
            recognized = True
            report["driver_version"] = loaded.group(1)
            continue
        if _KFD_OPEN.search(line):
            raise GpuParseError(_kfd_open_problem(_KFD_OPEN.search(line).group(1)), line)
        if any(pattern.search(line) for pattern in _NOT_FATAL):
            add_warning(report, "%s: %s" % (TOOL, line))
            continue
        if any(pattern.search(line) for pattern in _FATAL):
            raise GpuParseError("rocminfo reported an error", line)
        title = _AGENT_TITLE.match(line)
        if title:
            agent = {"fields": {}, "pools": [], "isa": []}
            agents.append(agent)
            context = "agent"
            recognized = True
            continue
        if _AGENT.match(line) or line.startswith("==") or line == "*** Done ***":
            continue
        field = _FIELD.match(line)
        if not field:
            continue
        key, value = field.group(1).strip(), field.group(2).strip()
        if agent is None:
            recognized = _read_system_field(report, key, value) or recognized
            continue
        context = _next_context(context, key)
        _read_agent_field(agent, context, key, value)
    if not recognized:
        raise GpuParseError("not rocminfo output", first_line(text) or "<empty output>")
    for agent in agents:
        device = _gpu_device(agent, len(report["devices"]))
        if device is not None:
            report["devices"].append(device)
    return report


def collect_rocminfo(run):
    return guarded(TOOL, _collect, run)


def _collect(run):
    rc, stdout, stderr = run(list(ROCMINFO_ARGS))
    report = new_report()
    try:
        report = parse_rocminfo(stdout + "\n" + stderr if _KFD_OPEN.search(stderr or "") else stdout)
    except GpuParseError as error:
        return failed(report, TOOL, str(error), error.line)
    if rc != 0:
        if not report["devices"]:
            return failed(report, TOOL, "exit status %d and no GPU agents" % rc, first_line(stderr, stdout))
        add_warning(report, "%s: exit status %d; the agents listed before the error are kept" % (TOOL, rc))
    return SOURCE_OK, report


def _kfd_open_problem(reason):
    lowered = reason.lower()
    if "permission" in lowered:
        return KFD_DENIED_MESSAGE
    if "no such file" in lowered:
        return KFD_MISSING_MESSAGE
    if "no such device" in lowered:
        return KFD_NO_DRIVER_MESSAGE
    return "cannot open /dev/kfd (%s): check that amdgpu is loaded and matches this ROCm release" % (
        reason.strip() or "no reason given"
    )


def _read_system_field(report, key, value):
    if key == "Runtime Version":
        report["rocm_version"] = None  # HSA runtime version is not the ROCm release
        report["tool_version"] = "HSA runtime %s" % value
        return True
    if key == "Runtime Ext Version" and report["tool_version"]:
        report["tool_version"] += ", ext %s" % value
        return True
    return key in ("System Timestamp Freq.", "Machine Model", "System Endianness")


def _next_context(context, key):
    if key == "Pool Info":
        return "pool"
    if key == "ISA Info":
        return "isa"
    if key == "Cache Info":
        return "cache"
    if context == "cache" and not key.startswith("L"):
        return "agent"
    return context


def _read_agent_field(agent, context, key, value):
    if context == "pool":
        if key == "Segment":
            agent["pools"].append({"segment": value})
        elif agent["pools"] and key not in agent["pools"][-1]:
            agent["pools"][-1][key] = value
    elif context == "isa":
        if key == "Name":
            agent["isa"].append(value)
    elif context == "agent" and key not in agent["fields"]:
        agent["fields"][key] = value


def _gpu_device(agent, index):
    fields = agent["fields"]
    if (fields.get("Device Type") or "").upper() != "GPU":
        return None
    gfx = normalize_gfx_target(fields.get("Name"))
    if gfx is None:
        for isa in agent["isa"]:
            match = _ISA_TARGET.search(isa)
            if match:
                gfx = normalize_gfx_target(match.group(1))
                break
    chip = _NUMBER.match(fields.get("Chip ID") or "")
    bdfid = tool_int(fields.get("BDFID"))
    device = new_device(
        index=index,
        device_id=normalize_hex_id(int(chip.group(1))) if chip and int(chip.group(1)) else None,
        product=product_name(fields.get("Marketing Name")),
        gfx_target=gfx,
        vram_bytes=_device_local_bytes(agent["pools"]),
        kfd_node=tool_int(fields.get("Node")),
    )
    # BDFID has no PCI domain: keep bus:device.function only, never as domain 0000.
    device[DOMAINLESS_BDF] = domainless_bdf(pci_bus_from_bdfid(bdfid)) if bdfid else None
    return device


def _device_local_bytes(pools):
    """Size of the first GLOBAL coarse-grained pool (the device-local VRAM), KB -> bytes."""
    for pool in pools:
        segment = pool.get("segment", "").upper()
        if segment.startswith("GLOBAL") and "COARSE GRAINED" in segment:
            size = _NUMBER.match(pool.get("Size", ""))
            if size and "KB" in pool.get("Size", "").upper():
                return int(size.group(1)) * 1024
    return None
