# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Gather the ``gpu`` fact from every wanted source: shared by gpu_facts and node_compliance.

``gather(params, get_bin_path, rocm_bin_dirs)`` takes the options as a plain
dict (``sysfs_root``, ``sources``, ``timeout``, ``rocm_smi_path``,
``amd_smi_path``, ``rocminfo_path``) and ``get_bin_path(name, required,
opt_dirs)`` (``AnsibleModule.get_bin_path``), so any module can gather the
same fact without a second module call.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import SOURCES
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.runner import ToolTimeout
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.status import (
    SOURCE_FAILED,
    SOURCE_MISSING,
    SOURCE_OK,
    SOURCE_SKIPPED,
    SOURCE_TIMEOUT,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.merge import merge_reports
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.sysfs.devices import collect_sysfs


# Each tool's parsers are imported when its source is read: a module runs from a zip, where Python compiles
# every module it imports on every run, and a nightly check reads sysfs only. (Ansible still packs them: it
# finds imports inside functions too.)
def _collect_rocm_smi(run):
    from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.rocm_smi.report import collect_rocm_smi

    return collect_rocm_smi(run)


def _collect_amd_smi(run):
    from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.amd_smi.report import collect_amd_smi

    return collect_amd_smi(run)


def _collect_rocminfo(run):
    from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.rocminfo import collect_rocminfo

    return collect_rocminfo(run)


def _runner(binary, timeout):
    from ansible_collections.rocm_fleet.core.plugins.module_utils.common.runner import make_runner

    return make_runner(binary, timeout)


TOOLS = {
    "rocm_smi": ("rocm-smi", "rocm_smi_path", _collect_rocm_smi),
    "amd_smi": ("amd-smi", "amd_smi_path", _collect_amd_smi),
    "rocminfo": ("rocminfo", "rocminfo_path", _collect_rocminfo),
}
DEFAULT_ROCM_BIN_DIRS = ("/opt/rocm/bin",)
DEFAULT_TIMEOUT = 30


def find_tool(get_bin_path, name, explicit, rocm_bin_dirs):
    if explicit:
        return explicit if os.path.isfile(explicit) and os.access(explicit, os.X_OK) else None
    return get_bin_path(name, required=False, opt_dirs=list(rocm_bin_dirs))


def read_tool(params, source, warnings, get_bin_path, rocm_bin_dirs):
    name, option, collect = TOOLS[source]
    explicit = params.get(option)
    timeout = params.get("timeout") or DEFAULT_TIMEOUT
    binary = find_tool(get_bin_path, name, explicit, rocm_bin_dirs)
    if binary is None:
        if explicit:
            warnings.append("%s: %s is not an executable file" % (name, explicit))
        return SOURCE_MISSING, None
    try:
        state, report = collect(_runner(binary, timeout))
    except ToolTimeout as exc:
        warnings.append("%s: killed after %ss: %s" % (name, timeout, exc))
        return SOURCE_TIMEOUT, None
    except Exception as exc:  # a parser bug must cost one source, never the play
        warnings.append("%s: could not be read (%s: %s)" % (name, type(exc).__name__, exc))
        return SOURCE_FAILED, None
    if state != SOURCE_OK:
        warnings.extend((report or {}).get("warnings") or [])
        return SOURCE_FAILED, None
    return SOURCE_OK, report


def read_rocm_install(root):
    """The default release: {version, path}, both None where none is installed.

    The legacy stream's /opt/rocm is update-alternatives' link to /opt/rocm-<release>, whose
    .info/version rocm-core writes (7.2.3-90). The ROCm Core SDK's /opt/rocm is a directory: its
    default release is the core alternative /opt/rocm/core -> /opt/rocm/core-<series>, whose
    .info/version holds the release (10.1.0).
    """
    base = os.path.join(root, "opt/rocm")
    link = os.path.join(base, "core") if os.path.lexists(os.path.join(base, "core")) else base
    if not os.path.isdir(link):
        return {"version": None, "path": None}
    version = None
    try:
        with open(os.path.join(link, ".info/version")) as handle:
            version = handle.read().strip() or None
    except (IOError, OSError):
        pass
    path = os.path.realpath(link)
    if root not in ("", "/"):
        path = "/" + os.path.relpath(path, os.path.realpath(root))
    return {"version": version, "path": path}


def gather(params, get_bin_path, rocm_bin_dirs=DEFAULT_ROCM_BIN_DIRS):
    """The merged ``gpu`` fact (schema 1) from the sources in ``params['sources']``."""
    root = params.get("sysfs_root") or "/"
    wanted = params.get("sources") or ()
    states, reports, warnings = {}, {}, []
    for source in SOURCES:
        if source not in wanted:
            states[source] = SOURCE_SKIPPED
        elif source == "sysfs":
            try:
                states[source], reports[source] = collect_sysfs(root)
            except Exception as exc:
                warnings.append("sysfs: could not be read (%s: %s)" % (type(exc).__name__, exc))
                states[source] = SOURCE_FAILED
            if states[source] != SOURCE_OK and reports.get(source):
                warnings.extend(reports.pop(source).get("warnings") or [])
        else:
            states[source], reports[source] = read_tool(params, source, warnings, get_bin_path, rocm_bin_dirs)
    return merge_reports(reports, states, warnings, read_rocm_install(root))
