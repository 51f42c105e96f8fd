"""host_facts: setup's OS, kernel and CPU facts, checked against this machine and against ansible's own collectors.

The processor list is checked against this machine's /proc/cpuinfo, read at
test time and split into its per-CPU blocks here (index, vendor_id, model name
on x86, the layout setup reports), and against broken cpuinfo text fed to the
same ansible-core code the module runs.
"""

import platform
from pathlib import Path

import pytest
from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.facts.hardware import linux as linux_hardware
from ansible.module_utils.facts.system.distribution import DistributionFactCollector
from ansible.module_utils.facts.system.platform import PlatformFactCollector
from ansible.module_utils.testing import patch_module_args
from ansible_collections.rocm_fleet.core.plugins.module_utils.host import facts as host_facts

CPUINFO = Path("/proc/cpuinfo")
ON_LINUX = pytest.mark.skipif(platform.system() != "Linux", reason="/proc/cpuinfo is Linux's")


@pytest.fixture
def module():
    with patch_module_args({}):
        return AnsibleModule(argument_spec={})


@pytest.fixture
def cpuinfo_lines(monkeypatch):
    """Feed cpuinfo text to ansible-core's LinuxHardware.get_cpu_facts in place of /proc/cpuinfo."""
    real_get_file_lines = linux_hardware.get_file_lines

    def feed(text):
        def get_file_lines(path, *args, **kwargs):
            if path == "/proc/cpuinfo":
                return text.splitlines()
            return real_get_file_lines(path, *args, **kwargs)

        monkeypatch.setattr(linux_hardware, "get_file_lines", get_file_lines)

    return feed


def cpu_blocks(text):
    """[{key: value}] per logical CPU of a cpuinfo text (blocks are separated by blank lines)."""
    blocks = []
    for chunk in text.split("\n\n"):
        fields = dict(
            (key.strip(), value.strip()) for key, _, value in (line.partition(":") for line in chunk.splitlines())
        )
        if "processor" in fields:
            blocks.append(fields)
    return blocks


def x86_processor_list(text):
    return [
        value for block in cpu_blocks(text) for value in (block["processor"], block["vendor_id"], block["model name"])
    ]


def machine_cpuinfo():
    text = CPUINFO.read_text()
    blocks = cpu_blocks(text)
    if not blocks or not all("vendor_id" in block and "model name" in block for block in blocks):
        pytest.skip("this machine's /proc/cpuinfo is not in the x86 layout (vendor_id, model name per CPU)")
    return text, blocks


@ON_LINUX
def test_processor_of_this_machine_is_index_vendor_model_per_cpu(module):
    text, blocks = machine_cpuinfo()
    processor = host_facts.read_processor(module, platform.machine())
    assert processor == x86_processor_list(text)
    assert len(processor) == 3 * len(blocks)
    assert [processor[i] for i in range(0, len(processor), 3)] == [str(i) for i in range(len(blocks))]


@ON_LINUX
def test_this_machines_cpuinfo_fed_as_text_reads_the_same(module, cpuinfo_lines):
    text, _ = machine_cpuinfo()
    cpuinfo_lines(text)
    assert host_facts.read_processor(module, platform.machine()) == x86_processor_list(text)


@ON_LINUX
def test_a_cut_off_cpuinfo_gives_the_cpus_it_has(module, cpuinfo_lines):
    text, _ = machine_cpuinfo()
    first = text.split("\n\n")[0]
    cut = first + "\n\n" + "processor\t: 1\nvendor_id\t: Auth"  # the second CPU's block ends mid-line
    cpuinfo_lines(cut)
    processor = host_facts.read_processor(module, platform.machine())
    assert processor == x86_processor_list(first) + ["1", "Auth"]


@ON_LINUX
@pytest.mark.parametrize(
    "text",
    [
        "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Xeon\ncpu cores\t: many\n",  # int() of a count
        "processor\t: 0\nsiblings\t: \n",  # an empty count
        "# processors : x\n",  # s390x's count, not a number
    ],
)
def test_malformed_cpuinfo_is_a_warning_not_a_traceback(module, cpuinfo_lines, text):
    cpuinfo_lines(text)
    facts, warnings = host_facts.gather_host_facts(module)
    assert "ansible_processor" not in facts
    assert len(warnings) == 1 and "processor" in warnings[0] and "/proc/cpuinfo" in warnings[0], warnings
    assert "ValueError" in warnings[0]
    assert {"ansible_distribution", "ansible_kernel", "ansible_architecture"} <= set(facts)


@ON_LINUX
def test_garbage_without_fields_gives_no_cpu_and_no_error(module, cpuinfo_lines):
    cpuinfo_lines("\x00\xff\nno colon here\n\n:\n")
    facts, warnings = host_facts.gather_host_facts(module)
    assert warnings == []
    assert facts["ansible_processor"] == []


@ON_LINUX
def test_unreadable_cpuinfo_is_a_warning(module, monkeypatch):
    monkeypatch.setattr(linux_hardware.LinuxHardware, "get_cpu_facts", lambda self, collected_facts=None: {})
    facts, warnings = host_facts.gather_host_facts(module)
    assert "ansible_processor" not in facts
    assert warnings == ["host_facts: processor could not be read: /proc/cpuinfo is not readable"]


def test_a_failing_collector_costs_only_its_facts(module, monkeypatch):
    def broken(self, module=None, collected_facts=None):
        raise OSError("no /etc/os-release")

    monkeypatch.setattr(DistributionFactCollector, "collect", broken)
    facts, warnings = host_facts.gather_host_facts(module)
    assert not any(name.startswith("ansible_distribution") or name == "ansible_os_family" for name in facts)
    assert "ansible_kernel" in facts
    assert warnings[0] == "host_facts: distribution could not be read (OSError: no /etc/os-release)"


def test_only_linux_reads_the_processor(module, monkeypatch):
    monkeypatch.setattr(
        PlatformFactCollector,
        "collect",
        lambda self, module=None, collected_facts=None: {
            "kernel": "14.1-RELEASE",
            "kernel_version": "FreeBSD 14.1",
            "architecture": "amd64",
            "fqdn": "x",
        },
    )
    facts, warnings = host_facts.gather_host_facts(module, system="FreeBSD")
    assert (facts["ansible_kernel"], facts["ansible_architecture"]) == ("14.1-RELEASE", "amd64")
    assert "ansible_processor" not in facts and "ansible_fqdn" not in facts
    assert len(warnings) == 1 and "Linux only" in warnings[0] and "FreeBSD" in warnings[0]


def test_distribution_facts_are_the_collectors(module):
    facts, _ = host_facts.gather_host_facts(module)
    collected = DistributionFactCollector().collect(module=module)
    for name in host_facts.DISTRIBUTION_FACTS:
        assert facts["ansible_" + name] == collected[name], name


def test_platform_facts_are_the_collectors(module):
    collected = PlatformFactCollector().collect(module=module)
    facts, _ = host_facts.gather_host_facts(module)
    for name in host_facts.PLATFORM_FACTS:
        assert facts["ansible_" + name] == collected[name], name


@pytest.mark.parametrize(
    ("machine", "architecture"),
    [
        ("x86_64", "x86_64"),
        ("i686", "i386"),
        ("i386", "i386"),
        ("aarch64", "aarch64"),
        ("ppc64le", "ppc64le"),
        ("s390x", "s390x"),
        ("armv7l", "armv7l"),
    ],
)
def test_architecture_maps_as_the_platform_collector(machine, architecture, monkeypatch):
    assert host_facts.architecture_of(machine) == architecture
    monkeypatch.setattr(platform, "machine", lambda: machine)
    monkeypatch.setattr(platform, "system", lambda: "Linux")
    assert PlatformFactCollector().collect(module=None)["architecture"] == architecture


def test_prefixed_keeps_only_the_wanted_facts_under_setups_names():
    facts = {name: name.upper() for name in host_facts.HOST_FACTS}
    facts.update(distribution_file_path="/etc/os-release", fqdn="x")
    assert host_facts.prefixed(facts) == {"ansible_" + name: name.upper() for name in host_facts.HOST_FACTS}


@ON_LINUX
def test_a_digest_that_still_matches_leaves_out_the_facts_read_from_its_sources(module, monkeypatch):
    first, warnings = host_facts.gather_host_facts(module)
    assert warnings == [] and len(first["ansible_host_facts_digest"]) == 64

    def never(*args, **kwargs):
        raise AssertionError("the collectors ran although nothing they read changed")

    monkeypatch.setattr(DistributionFactCollector, "collect", never)
    monkeypatch.setattr(linux_hardware.LinuxHardware, "get_cpu_facts", never)
    again, warnings = host_facts.gather_host_facts(module, known_digest=first["ansible_host_facts_digest"])
    assert warnings == []
    assert again == {name: first[name] for name in
                     ("ansible_kernel", "ansible_kernel_version", "ansible_architecture", "ansible_host_facts_digest")}


@ON_LINUX
def test_a_digest_that_changed_reads_every_fact_again(module):
    first, _warnings = host_facts.gather_host_facts(module)
    again, warnings = host_facts.gather_host_facts(module, known_digest="0" * 64)
    assert warnings == [] and again == first


@ON_LINUX
def test_facts_read_with_a_warning_carry_no_digest_so_the_next_call_reads_them_again(module, monkeypatch):
    def broken(self, module=None, collected_facts=None):
        raise ValueError("no release file parses")

    monkeypatch.setattr(DistributionFactCollector, "collect", broken)
    facts, warnings = host_facts.gather_host_facts(module)
    assert len(warnings) == 1 and "ansible_host_facts_digest" not in facts and "ansible_distribution" not in facts
