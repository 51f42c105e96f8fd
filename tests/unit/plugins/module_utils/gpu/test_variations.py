"""Real captures, varied here the way real runs vary them, through the parsers and collectors.

Every variation is made programmatically from an unedited capture; none is written by hand:
- a WARNING line after rocm-smi's JSON (rocm-smi prints its warnings on stdout, the
  low-power one is taken from a real capture);
- terminal control sequences: `tput sgr0` prints ESC ( B ESC [ m; 8-bit CSI is 0x9b;
- amd-smi 26's object output, {"cpu_data": [...], "gpu_data": [...]} with cpu_data first
  (ROCm/rocm-systems projects/amdsmi/amdsmi_cli/amdsmi_logger.py@d11f630e,
  combine_arrays_to_json), and measured values as {"value": N, "unit": "..."};
- a second JSON document after `amd-smi list --json`'s GPU list (list_devices.py@1bc8b9e3
  prints the AI NIC list after the GPU list);
- keys removed (an amd-smi without a bus.bdf for a GPU), N/A in rocm-smi's concise row.
"""

import json
import re
from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu import rocminfo
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.amd_smi import report as amd_smi
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import GpuParseError
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.rocm_smi import report as rocm_smi
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.rocm_smi.text import parse_rocm_smi_text

CAPTURES = Path(__file__).resolve().parents[4] / "fixtures" / "captures"
LOW_POWER = "mi300a-node-nodriver_rocm7.1_rocm-smi-default_no-gpus-lowpower-warning.txt"
ROCM_SMI_JSON = [
    "rx6800-2gpu_rocm5.4_rocm-smi-alldevices-json-showallinfo.json",
    "rx6600xt-1gpu_unknown_rocm-smi-showallinfo-json-via-jq_firmware-versions.txt",
]
TOPOLOGY_JSON = "unknown-2gpu-pcie_rocm6.1.1_amd-smi-topology-a-t-json.txt"
OLD_TOPOLOGY_JSON = "unknown-2gpu-pcie_rocm6.1.0_amd-smi-topology-json_oldformat.txt"
POLLARA_LIST = "mi210-1gpu-plus-pollara-nic_amdsmi-dev2026_amd-smi-list.txt"
MI325X_STATIC = "mi325x-vf-unknowncount_unknown_amd-smi-static-g0_snipped-by-poster.txt"
MI355X_SUMMARY = "mi355x-8gpu_rocm7.0.2_amd-smi-default.txt"
SGR0 = "\x1b(B\x1b[m"  # what `tput sgr0` prints on xterm-like terminals


def capture(name):
    return (CAPTURES / name).read_text(encoding="utf-8")


def captures(marker):
    return sorted(path.name for path in CAPTURES.iterdir() if marker in path.name and "json" not in path.name)


def low_power_warning():
    return next(line for line in capture(LOW_POWER).splitlines() if "low-power" in line)


def recording_run(responses):
    calls = []

    def run(args):
        calls.append(list(args))
        return responses.get(tuple(args), (1, "", ""))

    run.calls = calls
    return run


# rocm-smi JSON followed by a WARNING line


@pytest.mark.parametrize("name", ROCM_SMI_JSON)
def test_rocm_smi_json_then_a_warning_line_needs_one_call(name):
    plain = rocm_smi.parse_rocm_smi_json(capture(name))
    run = recording_run(
        {tuple(rocm_smi.ROCM_SMI_JSON_ARGS): (0, capture(name) + "\n" + low_power_warning() + "\n", "")}
    )
    state, report = rocm_smi.collect_rocm_smi(run)
    assert state == "ok" and len(run.calls) == 1
    assert report["devices"] == plain["devices"]
    assert report["warnings"] == ["rocm-smi: " + low_power_warning()]


def test_rocm_smi_json_between_warning_lines_keeps_both():
    text = low_power_warning() + "\n" + capture(ROCM_SMI_JSON[0]) + "\nWARNING: One or more commands failed\n"
    report = rocm_smi.parse_rocm_smi_json(text)
    assert len(report["devices"]) == 2
    assert report["warnings"] == ["rocm-smi: " + low_power_warning(), "rocm-smi: WARNING: One or more commands failed"]


# Terminal control sequences


def sgr0_after_every_line(text):
    return "".join(line.rstrip("\n") + SGR0 + "\n" for line in text.splitlines(True))


def csi8_colour(text):
    """Each non-blank line wrapped in 8-bit CSI bold red ... reset."""
    return "".join(
        ("\x9b1;31m" + line.rstrip("\n") + "\x9b0m\n") if line.strip() else line for line in text.splitlines(True)
    )


@pytest.mark.parametrize("vary", [sgr0_after_every_line, csi8_colour], ids=["tput-sgr0", "8-bit-csi"])
@pytest.mark.parametrize("name", captures("_rocm-smi-"))
def test_rocm_smi_text_with_control_sequences_parses_as_plain(name, vary):
    assert parse_rocm_smi_text(vary(capture(name))) == parse_rocm_smi_text(capture(name))


@pytest.mark.parametrize("vary", [sgr0_after_every_line, csi8_colour], ids=["tput-sgr0", "8-bit-csi"])
@pytest.mark.parametrize(
    ("name", "parser"),
    [
        (POLLARA_LIST, amd_smi.parse_amd_smi_list_text),
        (MI325X_STATIC, amd_smi.parse_amd_smi_static_text),
        (MI355X_SUMMARY, amd_smi.parse_amd_smi_summary),
        ("mi300x-8gpu_rocm6.1.0_amd-smi-topology.txt", amd_smi.parse_amd_smi_topology_text),
        ("mi300x-4gpu_rocm6.0-6.1_rocminfo.txt", rocminfo.parse_rocminfo),
    ],
)
def test_amd_smi_and_rocminfo_text_with_control_sequences_parse_as_plain(name, parser, vary):
    assert parser(vary(capture(name))) == parser(capture(name))


def test_rocm_smi_json_with_coloured_warning_lines():
    text = "\x1b[33m" + low_power_warning() + SGR0 + "\n" + capture(ROCM_SMI_JSON[0])
    report = rocm_smi.parse_rocm_smi_json(text)
    assert len(report["devices"]) == 2 and report["warnings"] == ["rocm-smi: " + low_power_warning()]


# rocm-smi concise rows with N/A identifiers


def test_new_concise_row_with_na_node_and_guid_is_kept():
    text = capture("rx7900xtx-1gpu_rocm6.3.1_rocm-smi-default.txt")
    row = re.compile(r"^(0\s+)1(\s+0x744c,\s+)47521", re.M)
    varied = row.sub(lambda m: m.group(1) + "N/A" + m.group(2) + "N/A  ", text)
    assert varied != text
    devices = parse_rocm_smi_text(varied)["devices"]
    assert [(d["index"], d["kfd_node"], d["device_id"]) for d in devices] == [(0, None, "0x744c")]


# amd-smi JSON: amd-smi 26 objects, other device kinds, several documents, {"value", "unit"}


def topology_entries(name=TOPOLOGY_JSON):
    return json.loads(capture(name))


@pytest.mark.parametrize(
    "name", [TOPOLOGY_JSON, OLD_TOPOLOGY_JSON, "rx6600xt-1gpu_unknown_amd-smi-topology-json_bare-list-self-link.txt"]
)
@pytest.mark.parametrize(
    "wrap",
    [
        lambda entries: {"gpu_data": entries},
        lambda entries: {"cpu_data": [{"cpu": 0}, {"cpu": 1}], "gpu_data": entries},
        lambda entries: {"cpu_data": [{"cpu": 0}], "core_data": [{"core": 0}], "gpu_data": entries, "nic_data": []},
    ],
    ids=["gpu-data", "cpu-data-first", "cpu-core-nic-data"],
)
def test_amd_smi_26_objects_are_read_by_the_gpu_data_key(name, wrap):
    bare = amd_smi.parse_amd_smi_topology_json(capture(name))
    wrapped = amd_smi.parse_amd_smi_topology_json(json.dumps(wrap(topology_entries(name)), indent=4))
    assert wrapped == bare and bare["devices"]


def test_amd_smi_object_without_gpus_is_zero_gpus_not_an_error():
    report = amd_smi.parse_amd_smi_static_json(json.dumps({"cpu_data": [{"cpu": 0}]}))
    assert report["devices"] == []


def ai_nic_entries():
    """The AI_NIC block of the real pollara `amd-smi list`, as its JSON entry (keys lower-case)."""
    block = capture(POLLARA_LIST).split("AI_NIC: 0")[1]
    entry = {"nic": 0}
    for line in block.strip().splitlines():
        key, _, value = line.strip().partition(": ")
        entry[key.lower()] = value
    return [entry]


def test_amd_smi_list_json_then_the_ai_nic_list_document():
    text = capture(TOPOLOGY_JSON) + "\n" + json.dumps(ai_nic_entries(), indent=4) + "\n"
    report = amd_smi.parse_amd_smi_list_json(text)
    assert [device["pci_bus"] for device in report["devices"]] == ["0000:08:00.0", "0000:44:00.0"]
    assert report["warnings"] == []


def test_amd_smi_bare_list_with_an_ai_nic_entry():
    text = json.dumps(topology_entries() + ai_nic_entries())
    assert [device["index"] for device in amd_smi.parse_amd_smi_list_json(text)["devices"]] == [0, 1]


def test_amd_smi_value_unit_objects_parse():
    entries = topology_entries(OLD_TOPOLOGY_JSON)
    for entry in entries:
        for field in ("weight", "hops"):
            entry[field] = dict((key, {"value": value, "unit": ""}) for key, value in entry[field].items())
    report = amd_smi.parse_amd_smi_topology_json(json.dumps({"gpu_data": entries}))
    assert report["topology"]["weight"] == [[0, 40], [40, 0]] and report["topology"]["hops"] == [[0, 2], [2, 0]]


@pytest.mark.parametrize("text", ["[1, 2]", '{"error": "x"}', '{"gpu_data": 3}', capture(TOPOLOGY_JSON)[:120]])
def test_amd_smi_json_that_holds_no_device_list_is_refused(text):
    with pytest.raises(GpuParseError):
        amd_smi.parse_amd_smi_list_json(text)


# amd-smi static: the JSON form of the real text capture, with keys removed


def static_json_entries(name=MI325X_STATIC):
    """Undo amd-smi's human-readable rendering (upper-cased keys, 4 spaces per level) of a static capture."""
    entries, stack = [], None
    for line in capture(name).splitlines():
        header = re.match(r"^GPU: (\d+)$", line)
        if header:
            entries.append({"gpu": int(header.group(1))})
            stack = [entries[-1]]
            continue
        key, _, value = line.strip().partition(":")
        if stack is None or not line.startswith(" ") or not key:
            stack = None if not line.startswith(" ") else stack
            continue
        depth = (len(line) - len(line.lstrip())) // 4
        del stack[depth:]
        if value.strip():
            stack[-1][key.lower()] = value.strip()
        else:
            stack[-1][key.lower()] = {}
            stack.append(stack[-1][key.lower()])
    return entries


def test_amd_smi_static_json_fields_and_the_text_agree():
    from_json = amd_smi.parse_amd_smi_static_json(json.dumps({"gpu_data": static_json_entries()}))
    from_text = amd_smi.parse_amd_smi_static_text(capture(MI325X_STATIC))
    assert from_json["devices"] == from_text["devices"]
    device = from_text["devices"][0]
    assert (device["pci_bus"], device["device_id"], device["subsystem_device_id"]) == (
        "0000:83:00.0",
        "0x74b9",
        "0x74a5",
    )
    assert (device["product"], device["gfx_target"]) == ("AMD Instinct Mi325X VF", "gfx942")


def list_without_bdfs():
    entries = topology_entries()
    for entry in entries:
        entry.pop("bdf")
        entry.pop("links")
    return json.dumps(entries)


def static_for(buses):
    entries = []
    for index, bus in enumerate(buses):
        entry = static_json_entries()[0]
        entry["gpu"], entry["bus"]["bdf"] = index, bus
        entries.append(entry)
    return json.dumps({"gpu_data": entries})


def test_amd_smi_list_without_bdfs_is_filled_from_static_by_index():
    run = recording_run(
        {
            tuple(amd_smi.AMD_SMI_LIST_JSON_ARGS): (0, list_without_bdfs(), ""),
            tuple(amd_smi.AMD_SMI_STATIC_JSON_ARGS): (0, static_for(["0000:08:00.0", "0000:44:00.0"]), ""),
        }
    )
    state, report = amd_smi.collect_amd_smi(run)
    assert state == "ok"
    assert [(d["index"], d["pci_bus"], d["device_id"]) for d in report["devices"]] == [
        (0, "0000:08:00.0", "0x74b9"),
        (1, "0000:44:00.0", "0x74b9"),
    ]


def test_amd_smi_static_without_a_bdf_matches_by_index():
    entries = json.loads(static_for(["0000:08:00.0", "0000:44:00.0"]))
    del entries["gpu_data"][1]["bus"]["bdf"]
    run = recording_run(
        {
            tuple(amd_smi.AMD_SMI_LIST_JSON_ARGS): (0, capture(TOPOLOGY_JSON), ""),
            tuple(amd_smi.AMD_SMI_STATIC_JSON_ARGS): (0, json.dumps(entries), ""),
        }
    )
    devices = amd_smi.collect_amd_smi(run)[1]["devices"]
    assert [d["device_id"] for d in devices] == ["0x74b9", "0x74b9"]


# Each amd-smi subcommand is evidence on its own


LIST_FAILS = (1, "", "Traceback (most recent call last):\n  KeyError: 'kfd_id'\n")


@pytest.mark.parametrize(
    ("responses", "expected"),
    [
        (
            {tuple(amd_smi.AMD_SMI_STATIC_JSON_ARGS): (0, static_for(["0000:08:00.0", "0000:44:00.0"]), "")},
            ["0000:08:00.0", "0000:44:00.0"],
        ),
        (
            {tuple(amd_smi.AMD_SMI_TOPOLOGY_JSON_ARGS): (0, capture(TOPOLOGY_JSON), "")},
            ["0000:08:00.0", "0000:44:00.0"],
        ),
        ({tuple(amd_smi.AMD_SMI_STATIC_TEXT_ARGS): (0, capture(MI325X_STATIC), "")}, ["0000:83:00.0"]),
        (
            {tuple(amd_smi.AMD_SMI_TOPOLOGY_TEXT_ARGS): (0, capture("mi300x-8gpu_rocm6.1.0_amd-smi-topology.txt"), "")},
            ["0000:%s:00.0" % bus for bus in ("0c", "22", "38", "5c", "9f", "af", "bf", "df")],
        ),
    ],
    ids=["static-json", "topology-json", "static-text", "topology-text"],
)
def test_amd_smi_without_a_working_list_names_gpus_from_another_subcommand(responses, expected):
    responses = dict(responses)
    responses.setdefault(tuple(amd_smi.AMD_SMI_LIST_JSON_ARGS), LIST_FAILS)
    state, report = amd_smi.collect_amd_smi(recording_run(responses))
    assert state == "ok"
    assert [device["pci_bus"] for device in report["devices"]] == expected
    assert any("list --json" in warning and "Traceback" in warning for warning in report["warnings"])


def test_amd_smi_without_json_support_skips_the_other_json_calls():
    reject = (2, "", "amd-smi: error: unrecognized arguments: --json\n")
    run = recording_run(
        {
            tuple(amd_smi.AMD_SMI_LIST_JSON_ARGS): reject,
            tuple(amd_smi.AMD_SMI_LIST_TEXT_ARGS): (0, capture(POLLARA_LIST), ""),
        }
    )
    state, report = amd_smi.collect_amd_smi(run)
    assert state == "ok" and [d["pci_bus"] for d in report["devices"]] == ["0000:23:00.0"]
    assert run.calls == [list(amd_smi.AMD_SMI_LIST_JSON_ARGS)] + [list(args) for args in amd_smi.AMD_SMI_TEXT_COMMANDS]


# amd-smi's default table: a cut market name and a missing BDF


def summary_with_first_name(name):
    text = capture(MI355X_SUMMARY)
    return text.replace("0000:0d:00.0    AMD Instinct MI355X", "0000:0d:00.0 " + name.rjust(22), 1)


def test_amd_smi_summary_cut_market_name_is_no_product():
    # amd-smi prints a name over 22 characters as '...' + its last 19 (print_default_output);
    # the name is the real one of rocm-smi's MI300A capture.
    long_name = "Aqua Vanjaram [Instinct MI300A]"
    report = amd_smi.parse_amd_smi_summary(summary_with_first_name("..." + long_name[-19:]))
    assert [device["product"] for device in report["devices"]] == [None] + ["AMD Instinct MI355X"] * 7


def test_amd_smi_summary_row_without_a_bdf_is_kept():
    # amd-smi prints N/A for a BDF it cannot read (a BDF of any length but 12, print_default_output).
    text = capture(MI355X_SUMMARY).replace("| 0000:0d:00.0 ", "| N/A          ", 1)
    devices = amd_smi.parse_amd_smi_summary(text)["devices"]
    assert len(devices) == 8 and devices[0]["pci_bus"] is None and devices[0]["product"] == "AMD Instinct MI355X"
