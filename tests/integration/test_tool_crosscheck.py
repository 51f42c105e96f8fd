"""Real rocm-smi and amd-smi of three Debian releases judge the lab's hardware model.

Every hardware profile is rendered (src/rocm_fleet/hardware) and each tool runs on
it inside a root of its own Debian release (src/rocm_fleet/lab/toolroots.py):
rocm-smi 5.2.3 (bookworm), rocm-smi 6.1.2 and amd-smi 6.1.2 (trixie), rocm-smi
6.4.1 and amd-smi 27.1 (forky). Their JSON and text outputs go through the
collection's own parsers and gpu_facts' collectors, and must agree with
collect_sysfs and the profile on count, PCI address, device ID, product, gfx
target, VRAM, the link matrix and NUMA affinity. Where the lab cannot supply an
answer (it comes from a DRM or KFD ioctl), tests/fleet_testing/tool_limits.py
says why and the test asserts that documented behaviour instead. Every message
names the tool and its version, so a new forky release that breaks it says so.
"""

import re

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.runner import TOOL_ENV
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.amd_smi import report as amd_smi
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.merge import merge_reports
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import SOURCES, GpuParseError
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.rocm_smi import report as rocm_smi
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.rocm_smi.text import parse_rocm_smi_text
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.rocminfo import collect_rocminfo
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.sysfs.devices import collect_sysfs
from fleet_testing.tool_limits import CPX_VIEWS, NOT_THE_GPU, UNKNOWN, upstream_version
from fleet_testing.toolcheck import RenderedHost, ToolUnderTest, prefetch, runner, tool_version

from rocm_fleet.hardware import available_profiles, load_profile
from rocm_fleet.hardware.sandbox import sandbox_problem
from rocm_fleet.lab.toolroots import TOOL_ROOTS, ensure_tool_roots

pytestmark = pytest.mark.lab

TOOLS = (
    ToolUnderTest("rocm-smi", "bookworm"),
    ToolUnderTest("rocm-smi", "trixie"),
    ToolUnderTest("rocm-smi", "forky"),
    ToolUnderTest("amd-smi", "trixie"),
    ToolUnderTest("amd-smi", "forky"),
)
FIELDS = ("pci_bus", "device_id", "product", "gfx_target", "vram_bytes", "numa_node")
LINKS = ("link_type", "hops", "weight")
# The commands gpu_facts runs, JSON first, and the parser of each (the text ones are its fallback).
TEXT_PARSERS = {
    "rocm-smi": [(list(args), parse_rocm_smi_text) for args in rocm_smi.ROCM_SMI_TEXT_COMMANDS],
    "amd-smi": [
        (amd_smi.AMD_SMI_LIST_TEXT_ARGS, amd_smi.parse_amd_smi_list_text),
        (amd_smi.AMD_SMI_STATIC_TEXT_ARGS, amd_smi.parse_amd_smi_static_text),
        (amd_smi.AMD_SMI_TOPOLOGY_TEXT_ARGS, amd_smi.parse_amd_smi_topology_text),
    ],
}
JSON_PARSERS = {
    "rocm-smi": [(rocm_smi.ROCM_SMI_JSON_ARGS, rocm_smi.parse_rocm_smi_json)],
    "amd-smi": [
        (amd_smi.AMD_SMI_LIST_JSON_ARGS, amd_smi.parse_amd_smi_list_json),
        (amd_smi.AMD_SMI_STATIC_JSON_ARGS, amd_smi.parse_amd_smi_static_json),
        (amd_smi.AMD_SMI_TOPOLOGY_JSON_ARGS, amd_smi.parse_amd_smi_topology_json),
    ],
}
FAULTS = {
    "mi300x-8 without GPU 5": lambda: load_profile("mi300x-8").without_gpu(5),
    "mi300x-8 with 0-4 on PCIe": lambda: load_profile("mi300x-8").with_link(0, 4, "PCIE"),
    "mi250x-8gcd with 0-1 on PCIe": lambda: load_profile("mi250x-8gcd").with_link(0, 1, "PCIE"),
}


@pytest.fixture(scope="session")
def tool_roots():
    problem = sandbox_problem()
    if problem:
        pytest.skip("tool cross-check %s" % problem)
    # tests/run-all builds every root in the background (rocm_fleet.lab.prepare); this waits for that build.
    roots = ensure_tool_roots(tuple(TOOL_ROOTS), lambda message: None)
    failures = {suite: error for suite, error in roots.items() if isinstance(error, Exception)}
    assert not failures, "tool roots did not build: %s" % failures
    return roots


@pytest.fixture(scope="session")
def outputs():
    return {}  # (tool root, host, tool, args) -> (rc, stdout, stderr), shared by collectors and tests


@pytest.fixture(scope="session")
def hosts(tmp_path_factory):
    rendered = {}

    def host(name, profile=None):
        if name not in rendered:
            rendered[name] = RenderedHost.render(profile or load_profile(name), tmp_path_factory.mktemp(name))
        return rendered[name]

    return host


@pytest.fixture(scope="session")
def versions(tool_roots, hosts):
    return {tool: tool_version(tool, tool_roots[tool.suite], hosts("mi300x-8")) for tool in TOOLS}


def crosscheck(tool, host, tool_roots, versions, outputs):
    version = versions[tool]
    limits, note = version.limits()
    label = "%s%s on %s" % (version.label, note, host.name)
    state, sysfs = collect_sysfs(str(host.root))
    assert state == "ok", sysfs["warnings"]
    assert sysfs["topology"] == host.profile.expected_topology()

    run = runner(tool_roots[tool.suite], host, tool.tool, TOOL_ENV, outputs)
    parsers = JSON_PARSERS[tool.tool] + TEXT_PARSERS[tool.tool]
    prefetch(run, [args for args, _ in parsers])
    for args, parse in parsers:
        where = "%s, `%s %s`" % (label, tool.tool, " ".join(args))
        broken_by = [limit for limit in limits.values() if args and args[0] in limit.breaks]
        if broken_by:
            unusable_output(where, parse, run(args)[1], broken_by, sysfs)
        else:
            agree_where_known(where, parse(run(args)[1]), sysfs, limits)

    collector = rocm_smi.collect_rocm_smi if tool.tool == "rocm-smi" else amd_smi.collect_amd_smi
    state, report = collector(run)
    where = "%s, gpu_facts' collector" % label
    assert state == "ok", "%s: %s" % (where, report["warnings"])
    agree_everywhere(where, report, sysfs, limits, numbered_like_sysfs=tool.tool == "rocm-smi")
    facts_agree("%s, gpu_facts' merge with sysfs" % label, tool, report, sysfs, limits)


def facts_agree(where, tool, report, sysfs, limits):
    """The gpu fact: the sysfs values and no conflict; a value the tool documentedly gets wrong is a warning."""
    source = tool.tool.replace("-", "_")
    states = {name: "missing" for name in SOURCES}
    states.update({"sysfs": "ok", source: "ok"})
    facts = merge_reports({"sysfs": sysfs, source: report}, states, [])
    assert facts["conflicts"] == [], "%s: conflicts %r" % (where, facts["conflicts"])
    for merged, expected in zip(facts["devices"], sysfs["devices"], strict=True):
        for field in FIELDS:
            assert merged[field] == expected[field], "%s: GPU %s %s" % (where, expected["index"], field)
    if sysfs["topology"] is not None and len(sysfs["devices"]) > 1:
        assert {key: facts["topology"][key] for key in sysfs["topology"]} == sysfs["topology"], where


def pairs(devices, sysfs_devices):
    """(tool device, sysfs device): by PCI bus where the tool names real, distinct ones (amd-smi 27.1
    numbers GPUs in BDF order, not in card order), else by index (rocm-smi numbers them as DRM does)."""
    by_bus = {device["pci_bus"]: device for device in sysfs_devices}
    buses = [device["pci_bus"] for device in devices]
    if all(bus in by_bus for bus in buses) and len(set(buses)) == len(buses):
        return [(device, by_bus[device["pci_bus"]]) for device in devices]
    by_index = {device["index"]: device for device in sysfs_devices}
    return [(device, by_index.get(device["index"])) for device in devices]


def agree_where_known(where, report, sysfs, limits):
    """One command's parse: every GPU it names, and every value it gives, is the sysfs one."""
    matched = pairs(report["devices"], sysfs["devices"])
    # Every command here lists the GPUs it reads from the rendered /sys (the concise and detail tables, the
    # topology's NUMA lines or BDF rows, list and static), so a parse with none, or fewer, lost them: never a
    # pass with nothing compared. Outputs the lab cannot make readable are unusable_output's, not here.
    assert len(report["devices"]) == len(sysfs["devices"]), "%s: GPU count %d, sysfs %d (%s)" % (
        where, len(report["devices"]), len(sysfs["devices"]), report["warnings"])
    assert all(expected is not None for _, expected in matched), "%s: GPU numbering" % where
    for device, expected in matched:
        for field in FIELDS:
            if device[field] is not None:
                check_field(where, device, expected, field, limits)
    if report["topology"] is not None:
        expected = in_tool_order(sysfs, matched)
        for key in (*LINKS, "numa_affinity"):
            if report["topology"][key] is not None:
                check_topology(where, report["topology"], expected, key, limits)


def unusable_output(where, parse, text, broken_by, sysfs):
    """Output keyed by a field the lab cannot supply: unreadable, or at least never the real values."""
    try:
        report = parse(text)
    except GpuParseError:
        return
    for limit in broken_by:
        real = {device[limit.field] for device in sysfs["devices"]}
        shown = {device[limit.field] for device in report["devices"]}
        assert not shown & real, "%s: %s %s documented as not the GPU's: %s" % (where, limit.field, shown, limit.why)


def agree_everywhere(where, report, sysfs, limits, numbered_like_sysfs):
    """What gpu_facts concludes from the tool: all of it, or the documented limit."""
    assert len(report["devices"]) == len(sysfs["devices"]), "%s: GPU count %d, sysfs %d" % (
        where,
        len(report["devices"]),
        len(sysfs["devices"]),
    )
    matched = pairs(report["devices"], sysfs["devices"])
    for device, expected in matched:
        assert expected is not None, "%s: GPU %s is not one sysfs has" % (where, device)
        if numbered_like_sysfs:
            assert device["index"] == expected["index"], "%s: GPU numbering" % where
        for field in FIELDS:
            check_field(where, device, expected, field, limits)
    if sysfs["topology"] is None or len(sysfs["devices"]) < 2:
        return
    assert report["topology"] is not None, "%s: no topology" % where
    expected = in_tool_order(sysfs, matched)
    for key in (*LINKS, "numa_affinity"):
        check_topology(where, report["topology"], expected, key, limits)


def in_tool_order(sysfs, matched):
    """The sysfs topology with rows and columns in the tool's GPU order."""
    position = {device["index"]: n for n, device in enumerate(sysfs["devices"])}
    order = [position[expected["index"]] for _, expected in matched] or list(range(len(sysfs["devices"])))
    topology = sysfs["topology"]
    permuted = {key: [[topology[key][i][j] for j in order] for i in order] for key in LINKS}
    permuted["numa_affinity"] = [topology["numa_affinity"][i] for i in order]
    return permuted


def check_field(where, device, expected, field, limits):
    value, real = device[field], expected[field]
    limit = limits.get(field)
    message = "%s: GPU %s %s is %r, sysfs %r" % (where, expected["index"], field, value, real)
    if limit is None:
        assert value == real, message
    elif limit.shows == NOT_THE_GPU:
        assert value != real, message + " (documented as not the GPU's: %s)" % limit.why
    else:
        assert limit.shows == UNKNOWN and value is None, message + " (documented as unknown: %s)" % limit.why


def check_topology(where, topology, expected, key, limits):
    limit = limits.get(key)
    message = "%s: topology %s %r, sysfs %r" % (where, key, topology[key], expected[key])
    if limit is None:
        assert topology[key] == expected[key], message
    else:
        assert topology[key] is None, message + " (documented as unknown: %s)" % limit.why


# Partitioned profiles: the tools' partition views differ from gpu_facts' by design (CPX_VIEWS).
UNPARTITIONED = [name for name in available_profiles() if not load_profile(name).partitioned]


@pytest.mark.parametrize("tool", TOOLS, ids=lambda tool: "%s-%s" % (tool.tool, tool.suite))
@pytest.mark.parametrize("name", [name for name in UNPARTITIONED if load_profile(name).gpus])
def test_tool_agrees_with_the_hardware_model(name, tool, hosts, tool_roots, versions, outputs):
    crosscheck(tool, hosts(name), tool_roots, versions, outputs)


@pytest.mark.parametrize("tool", [TOOLS[0], TOOLS[4]], ids=lambda tool: "%s-%s" % (tool.tool, tool.suite))
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_tool_agrees_on_faults(fault, tool, hosts, tool_roots, versions, outputs):
    crosscheck(tool, hosts(fault, FAULTS[fault]()), tool_roots, versions, outputs)


@pytest.mark.parametrize("tool", [TOOLS[0], TOOLS[4]], ids=lambda tool: "%s-%s" % (tool.tool, tool.suite))
def test_tools_number_gpus_like_sysfs_when_cards_are_not_in_bus_order(tool, hosts, tool_roots, versions, outputs):
    profile = load_profile("mi300x-8")
    gpus = list(profile.gpus)
    gpus[0], gpus[5] = gpus[5], gpus[0]
    swapped = type(profile)(**{**profile.__dict__, "name": "mi300x-8 cards 0 and 5 swapped", "gpus": tuple(gpus)})
    crosscheck(tool, hosts(swapped.name, swapped), tool_roots, versions, outputs)


@pytest.mark.parametrize("tool", TOOLS, ids=lambda tool: "%s-%s" % (tool.tool, tool.suite))
@pytest.mark.parametrize("name", ["nogpu", "mi300x-8 without amdgpu"])
def test_no_driver_is_never_reported_as_gpus(name, tool, hosts, tool_roots, versions, outputs):
    profile = load_profile("mi300x-8").with_driver_loaded(False) if "without" in name else load_profile(name)
    host = hosts(name, profile)
    run = runner(tool_roots[tool.suite], host, tool.tool, TOOL_ENV, outputs)
    collector = rocm_smi.collect_rocm_smi if tool.tool == "rocm-smi" else amd_smi.collect_amd_smi
    state, report = collector(run)
    assert state != "ok" or not report["devices"], "%s on %s: %s" % (versions[tool].label, name, report)


@pytest.mark.parametrize("suite", ["trixie", "forky"])
def test_rocminfo_names_dev_kfd_as_what_it_lacks(suite, hosts, tool_roots, outputs):
    tool = ToolUnderTest("rocminfo", suite)
    version = tool_version(tool, tool_roots[suite], hosts("mi300x-8"))
    state, report = collect_rocminfo(runner(tool_roots[suite], hosts("mi300x-8"), "rocminfo", TOOL_ENV, outputs))
    # ROCMINFO_LIMIT (tool_limits.py): no amdkfd behind /dev/kfd, so no agent; never 0 healthy GPUs.
    assert state == "failed", "%s: %s" % (version.label, report)
    assert "/dev/kfd" in " ".join(report["warnings"]), "%s: %s" % (version.label, report["warnings"])


CONCISE_ROW = re.compile(r"^(\d+)\s+\d+\s+\S+,\s+\d+\s+.*?(N/A|NPS\d), (N/A|[SDTQC]PX), (\d+)", re.M)


@pytest.mark.parametrize("tool", TOOLS, ids=lambda tool: "%s-%s" % (tool.tool, tool.suite))
def test_tools_on_the_cpx_profile(tool, hosts, tool_roots, versions, outputs):
    """What each real tool prints for 8x MI300X in CPX/NPS4: devices, modes, partition IDs (CPX_VIEWS)."""
    host = hosts("mi300x-8-cpx-nps4")
    version = versions[tool]
    listed, with_modes, ids, why = CPX_VIEWS[(tool.tool, upstream_version(version.debian))]
    where = "%s on %s (%s)" % (version.label, host.name, why)
    run = runner(tool_roots[tool.suite], host, tool.tool, TOOL_ENV, outputs)
    if tool.tool == "rocm-smi":
        text = run([])[1]
        rows = [line for line in text.splitlines() if re.match(r"^\d+\s", line)]
        parts = CONCISE_ROW.findall(text)
        shown = [int(part[3]) for part in parts]
        modes = sum(1 for part in parts if part[1:3] == ("NPS4", "CPX"))
    else:
        text = run(["static", "--partition"])[1]
        rows = re.findall(r"^GPU: \d+", text, re.M)
        modes = len(re.findall(r"(?:COMPUTE|ACCELERATOR)_PARTITION: CPX\s+MEMORY_PARTITION: NPS4", text))
        shown = [int(value) for value in re.findall(r"PARTITION_ID: (\d+)", text)]
    assert len(rows) == listed, "%s: %d devices" % (where, len(rows))
    assert modes == with_modes, "%s: %d show NPS4, CPX" % (where, modes)
    expected = {None: [], "all 0": [0] * listed, "0-7": [i % 8 for i in range(listed)]}[ids]
    assert shown == expected, "%s: partition IDs %s" % (where, shown)
