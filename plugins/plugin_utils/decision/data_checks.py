# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Validation of the GPU catalog and the support matrix, built-in or extended from inventory.

A typo in preflight_gpu_catalog_extra must fail preflight with the key it is
in, not turn into a wrong decision later.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.classification import FAMILIES, SEGMENTS
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import normalize_hex_id
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.overrides import override_problem
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.partitions import catalog_partition_problems
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.versions import (
    normalize_rocm_version,
    parse_version,
)

_GFX = re.compile(r"^gfx[0-9]{1,2}[0-9a-f]{2}$")
LINK_TYPES = ("XGMI", "PCIE", "mixed")
KERNEL_CERTAINTY = ("documented", "inferred", None)


def _version_or_none(value):
    return value is None or normalize_rocm_version(value) is not None


def _catalog_entry_problems(name, entry):
    where = "gpu catalog class %s" % name
    if not isinstance(entry, dict):
        return ["%s: must be a mapping" % where]
    problems = []
    if not str(entry.get("source") or "").strip():
        problems.append("%s: has no source" % where)
    if not entry.get("product"):
        problems.append("%s: has no product" % where)
    device_ids = (entry.get("match") or {}).get("device_ids") or []
    if not device_ids or any(normalize_hex_id(value) is None for value in device_ids):
        problems.append("%s: match.device_ids must list PCI device IDs like '0x74a1'" % where)
    if any(normalize_hex_id(value) is None for value in (entry.get("match") or {}).get("subsystem_ids") or []):
        problems.append("%s: match.subsystem_ids must be PCI IDs" % where)
    if not _GFX.match(str(entry.get("gfx_target") or "")):
        problems.append("%s: gfx_target %r is not an LLVM target like gfx942" % (where, entry.get("gfx_target")))
    if entry.get("segment") not in SEGMENTS:
        problems.append("%s: segment must be one of %s" % (where, ", ".join(SEGMENTS)))
    if entry.get("family") not in FAMILIES:
        problems.append("%s: family must be one of %s" % (where, ", ".join(FAMILIES)))
    listed = entry.get("rocm_listed")
    if not (listed is None or listed is False or isinstance(listed, dict)):
        problems.append("%s: rocm_listed must be {min, max}, false or null" % where)
    elif isinstance(listed, dict) and not (_version_or_none(listed.get("min")) and _version_or_none(listed.get("max"))):
        problems.append("%s: rocm_listed bounds must be ROCm versions" % where)
    for rule in entry.get("hsa_override") or []:
        text = override_problem(entry.get("gfx_target"), (rule or {}).get("value"))
        if text:
            problems.append("%s: %s" % (where, text))
        if not (_version_or_none(rule.get("rocm_min")) and _version_or_none(rule.get("rocm_below"))):
            problems.append("%s: hsa_override bounds must be ROCm versions" % where)
    topology = entry.get("expected_topology")
    if topology and topology.get("link_type") not in LINK_TYPES:
        problems.append("%s: expected_topology.link_type must be one of %s" % (where, ", ".join(LINK_TYPES)))
    problems.extend(catalog_partition_problems(where, entry.get("partitions")))
    return problems


def _release_problems(version, release, catalog):
    where = "support matrix ROCm %s" % version
    if normalize_rocm_version(version) != str(version):
        return ["%s: key must be a full version like 6.4.0" % where]
    if not isinstance(release, dict):
        return ["%s: must be a mapping" % where]
    problems = []
    if not str(release.get("source") or "").strip():
        problems.append("%s: has no source" % where)
    os_map = release.get("os")
    if not isinstance(os_map, dict) or not os_map or not all(isinstance(v, list) for v in os_map.values()):
        problems.append("%s: os must map OS keys to lists of releases" % where)
    targets = release.get("gfx_targets") or []
    if not targets or not all(_GFX.match(str(target)) for target in targets):
        problems.append("%s: gfx_targets must list LLVM targets" % where)
    kernel = release.get("kernel") or {}
    for bound in ("min", "max"):
        if kernel.get(bound) is not None and parse_version(kernel[bound]) is None:
            problems.append("%s: kernel.%s %r is not a version" % (where, bound, kernel[bound]))
    if kernel.get("max_certainty") not in KERNEL_CERTAINTY:
        problems.append("%s: kernel.max_certainty must be documented, inferred or null" % where)
    for position, rule in enumerate(release.get("restrictions") or []):
        forms = [key for key in ("only_for", "only_on", "not_on") if rule.get(key) is not None]
        if len(forms) != 1 or (("only_for" in forms) != (rule.get("os") is not None)):
            problems.append(
                "%s: restriction #%d needs either os + only_for, or gpu + only_on/not_on" % (where, position + 1)
            )
            continue
        selector = rule.get("only_for") if forms == ["only_for"] else rule.get("gpu") or {}
        unknown = sorted(set(selector.get("classes") or []) - set(catalog or {}))
        if catalog and unknown:
            problems.append("%s: restriction #%d names unknown classes %s" % (where, position + 1, ", ".join(unknown)))
    return problems


def data_problems(catalog, matrix):
    """Every problem found in the merged catalog and matrix, as sentences; empty when both are usable."""
    problems = []
    for name in sorted(catalog or {}):
        problems.extend(_catalog_entry_problems(name, catalog[name]))
    for version in sorted(matrix or {}):
        problems.extend(_release_problems(version, matrix[version], catalog))
    return problems
