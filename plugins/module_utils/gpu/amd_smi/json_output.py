# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""amd-smi --json output (list, static, topology) -> SourceReport.

Before amd-smi 26 every subcommand prints a bare list of per-device objects. From 26
(ROCm 7.0) 'static' and 'metric' print one object whose lists are keyed by device kind,
"cpu_data" and "core_data" before "gpu_data" (ROCm/rocm-systems projects/amdsmi/amdsmi_cli/
amdsmi_logger.py@d11f630e, combine_arrays_to_json), and 'list' prints one list per device
kind, one document after another. The GPUs are the "gpu_data" list and, in bare lists, the
objects with a "gpu" number; CPU, core and NIC entries are not GPUs and are passed over.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.amd_smi.text import (
    TOOL,
    drop_shared_buses,
    raise_on_error_lines,
    read_bdf,
    read_static_entry,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.amd_smi.topology import topology_report_from_entries
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import (
    GpuParseError,
    new_device,
    new_report,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.tool_json import json_documents
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.tools import (
    add_warning,
    first_line,
    tool_int,
)

GPU_LIST_KEY = "gpu_data"
# Entries of other device kinds in bare lists, keyed by their own number instead of "gpu".
_OTHER_DEVICE_KEYS = ("cpu", "core", "nic", "ainic", "ai_nic", "brcm_nic", "switch")


def parse_amd_smi_list_json(text):
    report = new_report()
    for entry in _gpu_entries(text, report):
        report["devices"].append(
            new_device(
                index=tool_int(entry.get("gpu")),
                pci_bus=read_bdf(report, entry.get("bdf")),
                kfd_node=tool_int(entry.get("node_id")),
                partition_id=tool_int(entry.get("partition_id")),
            )
        )
    return drop_shared_buses(report, "list --json")


def parse_amd_smi_static_json(text):
    report = new_report()
    for entry in _gpu_entries(text, report):
        read_static_entry(report, entry)
    return drop_shared_buses(report, "static --json")


def parse_amd_smi_topology_json(text):
    """Both layouts -> report with one device per row (index, bus when given) and a topology."""
    notes = new_report()
    report = topology_report_from_entries(_gpu_entries(text, notes))
    for warning in notes["warnings"]:
        add_warning(report, warning)
    return drop_shared_buses(report, "topology --json")


def _gpu_entries(text, report):
    """The GPU objects of every JSON document in ``text``; other lines become warnings of ``report``."""
    raise_on_error_lines(text)
    documents, notes = json_documents(text)
    for note in notes:
        add_warning(report, "%s: %s" % (TOOL, " ".join(note.split())))
    entries, unknown = [], 0
    for document in documents:
        found, passed_over = gpu_entries_of(document, text)
        entries.extend(found)
        unknown += passed_over
    if unknown:
        add_warning(report, "%s: %d JSON entries without a 'gpu' number passed over" % (TOOL, unknown))
    return entries


def gpu_entries_of(document, text=""):
    """The GPU objects of one parsed amd-smi JSON document (any subcommand, bare list or "gpu_data"), and how many
    entries were neither a GPU nor another known device kind. CPU, core and NIC entries are passed over."""
    entries, unknown = [], 0
    for entry in _device_list(document, text):
        if not isinstance(entry, dict):
            raise GpuParseError("amd-smi JSON list holds a non-object entry", first_line(text))
        if tool_int(entry.get("gpu")) is not None:
            entries.append(entry)
        elif not any(key in entry for key in _OTHER_DEVICE_KEYS):
            unknown += 1
    return entries, unknown


def _device_list(document, text):
    if isinstance(document, list):
        return document
    if isinstance(document, dict) and isinstance(document.get(GPU_LIST_KEY), list):
        return document[GPU_LIST_KEY]
    if (
        isinstance(document, dict)
        and GPU_LIST_KEY not in document
        and document
        and all(str(key).endswith("_data") for key in document)
    ):
        return []  # {"cpu_data": [...]} and the like: no GPU in this document
    raise GpuParseError(
        "amd-smi JSON is neither a list of devices nor an object with %r" % GPU_LIST_KEY, first_line(text)
    )
