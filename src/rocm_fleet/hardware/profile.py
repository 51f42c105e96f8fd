"""Load and validate hardware profiles: YAML descriptions of simulated GPU servers.

A profile file has these top-level keys (every number cites its source in
``sources``):

* ``name``, ``description``
* ``driver``: ``{loaded: bool, version: str}`` (``/sys/module/amdgpu/version``)
* ``cpus``: one entry per NUMA node, ``{numa_node, cores, cpulist, model}``
* ``numa_distance``: the ACPI SLIT matrix; KFD uses it as CPU-CPU link weight
* ``gpu_model``: defaults for every GPU (keys of ``model.Gpu``)
* ``gpus``: per-GPU ``{bus, numa_node, ...overrides}``, in probe order
* ``xgmi``: ``{all_pairs: {weight}}`` or ``{pairs: [{gpus: [i, j], weight}]}``
* ``boot_firmware``: ``bios`` (default: no /sys/firmware/efi) or ``uefi`` (efivars, Secure Boot off)
* ``sources``: key -> where the value comes from

Health keys of a GPU (``gpu_model`` or per GPU): ``firmware`` ({fw_version name: version},
e.g. ``smc: 0x00558200``) and ``ras_blocks`` ("umc, sdma, ..."; absent: no RAS), see
``render_health.py``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import yaml

from rocm_fleet.hardware.model import (
    BUS_PATTERN,
    GFX_PATTERN,
    MAX_XCP,
    MEMORY_PARTITIONS_OF_MODE,
    PARTITIONS_OF_MODE,
    XGMI_HOP_WEIGHT,
    CpuNode,
    Gpu,
    Link,
    Profile,
    ProfileError,
)
from rocm_fleet.hardware.render_health import FIRMWARE_NAMES, RAS_BLOCKS

PROFILE_DIR = Path(__file__).with_name("profiles")
_TOP_KEYS = {
    "name",
    "description",
    "driver",
    "cpus",
    "numa_distance",
    "gpu_model",
    "gpus",
    "xgmi",
    "sources",
    "boot_firmware",
}
BOOT_FIRMWARE = ("bios", "uefi")
_GPU_FIELDS = {field.name: field for field in dataclasses.fields(Gpu)}
_CPU_FIELDS = {field.name for field in dataclasses.fields(CpuNode)}


def available_profiles():
    return sorted(path.stem for path in PROFILE_DIR.glob("*.yml"))


def load_profile(name_or_path):
    """Load a profile by name (``mi300x-8``) or path; raise ProfileError when it is invalid."""
    path = Path(name_or_path)
    if path.suffix not in (".yml", ".yaml"):
        path = PROFILE_DIR / ("%s.yml" % name_or_path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        known = ", ".join(available_profiles())
        raise ProfileError("cannot read profile %s: %s (known profiles: %s)" % (path, exc.strerror, known)) from None
    except yaml.YAMLError as exc:
        raise ProfileError("%s: not valid YAML: %s" % (path, exc)) from None
    return profile_from_dict(data, origin=str(path))


def profile_from_dict(data, origin="<profile>"):
    """Validate a parsed profile document and build the Profile it describes."""

    def fail(where, message):
        raise ProfileError("%s: %s: %s" % (origin, where, message))

    if not isinstance(data, dict):
        fail("document", "must be a mapping")
    _reject_unknown(data, _TOP_KEYS, "top level", fail)
    for key in ("name", "driver", "cpus", "gpus"):
        if key not in data:
            fail(key, "missing")

    driver = data["driver"]
    if not isinstance(driver, dict) or not isinstance(driver.get("loaded"), bool):
        fail("driver", "needs 'loaded: true|false'")
    if driver["loaded"] and not isinstance(driver.get("version"), str):
        fail("driver.version", "a loaded driver needs its version string (quote it)")

    cpus = tuple(_build_cpu(entry, "cpus[%d]" % i, fail) for i, entry in enumerate(_list(data["cpus"], "cpus", fail)))
    if not cpus:
        fail("cpus", "a server has at least one NUMA node")
    numa_nodes = [cpu.numa_node for cpu in cpus]
    if numa_nodes != list(range(len(cpus))):
        # KFD numbers CPU nodes in NUMA order from 0; the lab keeps both equal.
        fail("cpus", "numa_node values must be 0..%d in order, got %s" % (len(cpus) - 1, numa_nodes))
    distance = _numa_distance(data.get("numa_distance"), len(cpus), fail)

    defaults = data.get("gpu_model") or {}
    if not isinstance(defaults, dict):
        fail("gpu_model", "must be a mapping")
    gpus = tuple(
        _build_gpu(defaults, entry, "gpus[%d]" % i, numa_nodes, fail)
        for i, entry in enumerate(_list(data["gpus"], "gpus", fail))
    )
    boot_firmware = data.get("boot_firmware", "bios")
    if boot_firmware not in BOOT_FIRMWARE:
        fail("boot_firmware", "must be one of %s, got %r" % (BOOT_FIRMWARE, boot_firmware))
    buses = [gpu.bus for gpu in gpus]
    if len(set(buses)) != len(buses):
        fail("gpus", "PCI bus addresses repeat: %s" % buses)

    return Profile(
        name=str(data["name"]),
        description=str(data.get("description") or ""),
        driver_loaded=driver["loaded"],
        driver_version=str(driver.get("version") or ""),
        cpus=cpus,
        numa_distance=distance,
        gpus=gpus,
        links=_xgmi_links(data.get("xgmi"), len(gpus), fail),
        sources=dict(data.get("sources") or {}),
        boot_firmware=boot_firmware,
        xgmi_hive=bool(data.get("xgmi")),
    )


def _reject_unknown(mapping, allowed, where, fail):
    unknown = sorted(set(mapping) - set(allowed))
    if unknown:
        fail(where, "unknown keys %s (allowed: %s)" % (unknown, sorted(allowed)))


def _list(value, where, fail):
    if not isinstance(value, list):
        fail(where, "must be a list")
    return value


def _int(value, where, fail, minimum=0):
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        fail(where, "must be an integer >= %d, got %r" % (minimum, value))
    return value


def _build_cpu(entry, where, fail):
    if not isinstance(entry, dict):
        fail(where, "must be a mapping")
    _reject_unknown(entry, _CPU_FIELDS, where, fail)
    missing = sorted(_CPU_FIELDS - set(entry))
    if missing:
        fail(where, "missing %s" % missing)
    return CpuNode(
        numa_node=_int(entry["numa_node"], where + ".numa_node", fail),
        cores=_int(entry["cores"], where + ".cores", fail, minimum=1),
        cpulist=str(entry["cpulist"]),
        model=str(entry["model"]),
    )


def _numa_distance(matrix, size, fail):
    if matrix is None:
        # Linux's default SLIT when firmware gives none: 10 local, 20 remote.
        return tuple(tuple(10 if i == j else 20 for j in range(size)) for i in range(size))
    rows = _list(matrix, "numa_distance", fail)
    if len(rows) != size or any(not isinstance(row, list) or len(row) != size for row in rows):
        fail("numa_distance", "must be a %dx%d matrix (one row per cpus entry)" % (size, size))
    for i, row in enumerate(rows):
        for j, value in enumerate(row):
            _int(value, "numa_distance[%d][%d]" % (i, j), fail, minimum=1)
            if value != rows[j][i]:
                fail("numa_distance", "not symmetric at [%d][%d]" % (i, j))
    return tuple(tuple(row) for row in rows)


def _build_gpu(defaults, entry, where, numa_nodes, fail):
    if not isinstance(entry, dict):
        fail(where, "must be a mapping")
    values = dict(defaults)
    values.update(entry)
    _reject_unknown(values, _GPU_FIELDS, where, fail)
    required = sorted(
        name
        for name, field in _GPU_FIELDS.items()
        if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
    )
    missing = [name for name in required if name not in values]
    if missing:
        fail(where, "missing %s (set them in gpu_model or on the GPU)" % missing)
    for name, field in _GPU_FIELDS.items():
        value = values.get(name, field.default)
        if field.type == "int":
            _int(value, "%s.%s" % (where, name), fail)
        elif field.type.startswith("str") and value is not None and not isinstance(value, str):
            fail("%s.%s" % (where, name), "must be a string, got %r" % (value,))
    if "-" not in values["vbios_version"]:
        # amdgpu always exports one; rocm-smi reads the SKU between the first two dashes.
        fail(where + ".vbios_version", "must look like 113-<SKU>-<build>, got %r" % values["vbios_version"])
    if not BUS_PATTERN.match(values["bus"]):
        fail(where + ".bus", "must look like 0000:0c:00.0 (lower-case hex), got %r" % values["bus"])
    if not GFX_PATTERN.match(values["gfx_target"]):
        fail(where + ".gfx_target", "must look like gfx942 or gfx90a, got %r" % values["gfx_target"])
    if values["numa_node"] not in numa_nodes:
        fail(where + ".numa_node", "%r is not one of the cpus' NUMA nodes %s" % (values["numa_node"], numa_nodes))
    values["firmware"] = _firmware(values.get("firmware"), where + ".firmware", fail)
    unknown_blocks = sorted(set(_split(values.get("ras_blocks"))) - set(RAS_BLOCKS))
    if unknown_blocks:
        fail(where + ".ras_blocks", "unknown RAS blocks %s (amdgpu names: %s)" % (unknown_blocks, list(RAS_BLOCKS)))
    gpu = Gpu(**values)
    _check_partitions(gpu, where, fail)
    return gpu


def _split(text):
    return [name.strip() for name in (text or "").split(",") if name.strip()]


def _firmware(mapping, where, fail):
    """{name: version} -> ((name, version), ...) in amdgpu's attribute order."""
    if not mapping:
        return ()
    if not isinstance(mapping, dict):
        fail(where, "must be a mapping of fw_version names to versions")
    for name, version in mapping.items():
        if name not in FIRMWARE_NAMES:
            fail(where, "%r is not an amdgpu fw_version name (%s)" % (name, ", ".join(FIRMWARE_NAMES)))
        _int(version, "%s.%s" % (where, name), fail)
    return tuple((name, mapping[name]) for name in FIRMWARE_NAMES if name in mapping)


def _check_partitions(gpu, where, fail):
    """A compute/memory mode pair the GPU can be in (amdgpu refuses the others)."""
    compute, memory = gpu.compute_partition, gpu.memory_partition
    if compute is not None and compute not in (*PARTITIONS_OF_MODE, "CPX"):
        fail(where + ".compute_partition", "must be one of SPX, DPX, TPX, QPX, CPX, got %r" % compute)
    if memory is not None and memory not in MEMORY_PARTITIONS_OF_MODE:
        fail(where + ".memory_partition", "must be one of %s, got %r" % (sorted(MEMORY_PARTITIONS_OF_MODE), memory))
    if not 1 <= gpu.xcc_count <= MAX_XCP:
        fail(where + ".xcc_count", "must be 1..%d, got %d" % (MAX_XCP, gpu.xcc_count))
    count = gpu.partition_count
    if gpu.xcc_count % count or gpu.compute_units % count:
        fail(
            where + ".compute_partition",
            "%s does not split %d XCCs and %d CUs evenly" % (compute, gpu.xcc_count, gpu.compute_units),
        )
    if memory is not None and count % MEMORY_PARTITIONS_OF_MODE[memory]:
        # KFD_XCP_MEMORY_SIZE: each memory partition is shared by whole compute partitions (no SPX/NPS4).
        fail(
            where + ".memory_partition", "%s with %s: %d partitions cannot share %s" % (compute, memory, count, memory)
        )


def _xgmi_links(spec, gpu_count, fail):
    if not spec:
        return {}
    if not isinstance(spec, dict):
        fail("xgmi", "must be a mapping")
    _reject_unknown(spec, {"all_pairs", "pairs"}, "xgmi", fail)
    links = {}
    if "all_pairs" in spec:
        weight = _int((spec["all_pairs"] or {}).get("weight", XGMI_HOP_WEIGHT), "xgmi.all_pairs.weight", fail, 1)
        for i in range(gpu_count):
            for j in range(i + 1, gpu_count):
                links[frozenset((i, j))] = Link("XGMI", weight)
    for n, pair in enumerate(_list(spec.get("pairs", []), "xgmi.pairs", fail)):
        where = "xgmi.pairs[%d]" % n
        if not isinstance(pair, dict) or not isinstance(pair.get("gpus"), list) or len(pair["gpus"]) != 2:
            fail(where, "needs 'gpus: [i, j]'")
        i, j = (_int(index, where + ".gpus", fail) for index in pair["gpus"])
        if i == j or max(i, j) >= gpu_count:
            fail(where, "GPU indices must differ and be below %d, got %s" % (gpu_count, pair["gpus"]))
        if frozenset((i, j)) in links:
            fail(where, "link %d-%d listed twice" % (i, j))
        weight = _int(pair.get("weight", XGMI_HOP_WEIGHT), where + ".weight", fail, 1)
        links[frozenset((i, j))] = Link("XGMI", weight, _int(pair.get("links", 1), where + ".links", fail))
    return links
