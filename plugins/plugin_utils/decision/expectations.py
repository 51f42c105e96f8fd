# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a host's GPU class expects of its live state (node_compliance's gpu_expect).

The expectations come from the same GPU catalog and support matrix that
preflight decides with, so the compliance checks hold a host to exactly what
provisioning set out to build.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.classification import GIB, nominal_vram_gib
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.data import RocmDataError, release_streams
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.streams import StreamError, version_file

# Firmware and the driver reserve part of the nominal VRAM: a GPU must show 90% of it.
VRAM_SHARE_VISIBLE = 0.9


def gpu_class_expectations(class_names, catalog, matrix, gpu_count, rocm_version=None, min_vram_gib=0,
                           numa_affinity=None, amdgpu_from_amd=True, rocm_from_amd=True, driver=None, kernel=None,
                           partitions_per_gpu=1):
    """The gpu_expect mapping for a host of ``class_names`` with ``gpu_count`` GPUs.

    A single class gives product, VRAM and topology expectations; a mixed host is
    held to its count, gfx targets and driver only. ``amdgpu_from_amd``: the host runs
    AMD's amdgpu-dkms of ``driver`` (the decided driver line), whose module reports
    its kernel_module version; ``kernel`` (the host's release) tells the in-tree driver apart.
    ``partitions_per_gpu`` > 1 (a declared compute mode such as CPX): ``gpu_count`` counts logical
    GPUs, each with its share of the VRAM (its KFD memory bank), and the links between partitions
    weigh what amdkfd gives partitions (13 within a GPU, 41 between two), not the class's weight.
    """
    missing = [name for name in class_names if name not in catalog]
    if missing:
        raise ValueError("unknown GPU class(es): %s" % ", ".join(missing))
    classes = [catalog[name] for name in class_names]
    count = int(gpu_count)
    expect = {"count": count}
    if count > 0 and classes:
        expect["gfx_targets"] = sorted(set(entry["gfx_target"] for entry in classes))
    if count > 0 and len(classes) == 1:
        _single_class(expect, classes[0], count, min_vram_gib, max(1, int(partitions_per_gpu or 1)))
    elif count > 0 and min_vram_gib:
        expect["vram_bytes_min"] = int(float(min_vram_gib) * GIB)
    if count > 0:
        expect["driver"] = {"loaded": True}
        if amdgpu_from_amd:
            # No module version (an unsourced line, or none decided) is checked as unknown, never as any version.
            expect["driver"].update(line=(driver or {}).get("line"), version=(driver or {}).get("kernel_module"))
            if kernel:
                expect["driver"]["kernel"] = str(kernel)
    if numa_affinity is not None:
        expect["numa_affinity"] = list(numa_affinity)
    if rocm_from_amd and rocm_version:
        expect["rocm_version"] = _version_file(matrix, rocm_version)
    return expect


def _version_file(matrix, rocm_version):
    """What .info/version holds with ``rocm_version`` the default: a glob given stays (the packages plan's
    version_file); a release of the matrix gets its stream's (release_streams.yml: 7.2.3-*, 10.1.0)."""
    if any(char in rocm_version for char in "*?["):
        return rocm_version
    try:
        return version_file(release_streams()[0], matrix, rocm_version)
    except (StreamError, RocmDataError):
        return rocm_version + "-*"


def _single_class(expect, entry, count, min_vram_gib, partitions=1):
    # "AMD Radeon RX 6700 XT / 6750 XT" names variants: the first name, as a prefix, matches each.
    expect["products"] = entry["product"].split(" / ")[0] + "*"
    nominal_gib = nominal_vram_gib(entry)
    nominal_gib = nominal_gib / partitions if nominal_gib else nominal_gib
    per_device_gib = nominal_gib * VRAM_SHARE_VISIBLE if nominal_gib else 0.0
    needed_gib = max(per_device_gib, float(min_vram_gib or 0))
    if needed_gib > 0:
        expect["vram_bytes_min"] = int(needed_gib * GIB)
    topology = dict((key, value) for key, value in (entry.get("expected_topology") or {}).items() if value is not None)
    if partitions > 1:
        # kfd_crat.c weighs partition links by where they run (KFD_CRAT_INTRA_SOCKET_WEIGHT), not as the class's.
        topology.pop("weight", None)
    if topology and count > 1:
        expect["topology"] = topology
