"""value_syntax: what each file the roles write takes as a value, checked per character, length and shape."""

import subprocess
from pathlib import Path

import pytest
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.value_syntax import (
    SYNTAXES,
    declared_problems,
    shown_character,
    syntax_problem,
)

ROLES = Path(__file__).resolve().parents[5] / "roles"

# The bad kinds of the issue: each must be refused by every syntax that lists it below.
NEWLINE, QUOTE, SUBSHELL, BACKTICK, SEMICOLON, NUL = "x\ny", 'x"y', "x$(id)", "x`id`", "x;id", "x\x00y"
ALL_BAD = [NEWLINE, QUOTE, SUBSHELL, BACKTICK, SEMICOLON, NUL]
# Quoted (profile.d) or literal (systemd, sysctl.d, no shell reads them): $(), backticks and ; stay values.
SHELL_INERT = {"env_value", "sysctl_value", "armored_key"}


def refused(syntax, value):
    return syntax_problem("v", value, syntax) is not None


@pytest.mark.parametrize("syntax", sorted(SYNTAXES))
def test_every_syntax_refuses_nul_and_over_long_values(syntax):
    assert refused(syntax, NUL)
    long_value = "1" * (SYNTAXES[syntax].max_length + 1)
    assert "is %d characters long (at most %d)" % (len(long_value), SYNTAXES[syntax].max_length) in syntax_problem(
        "v", long_value, syntax)


@pytest.mark.parametrize("syntax", sorted(set(SYNTAXES) - {"armored_key"}))
def test_every_one_line_syntax_refuses_newlines_carriage_returns_and_double_quotes(syntax):
    for value in (NEWLINE, "x\ry", QUOTE):
        assert refused(syntax, value), value


@pytest.mark.parametrize("syntax", sorted(set(SYNTAXES) - SHELL_INERT))
def test_shell_characters_are_refused_where_a_file_is_shell_or_splits_words(syntax):
    for value in (SUBSHELL, BACKTICK, SEMICOLON, "x\\y", "x'y", "x#y"):
        assert refused(syntax, value), value
    # An apt pin expression has blanks ("origin repo.radeon.com"); every other file splits words at them.
    assert refused(syntax, "x y") == (syntax != "apt_pin")


@pytest.mark.parametrize(("syntax", "values"), [
    # Real GRUB parameters, amdgpu options and sysctls.
    ("kernel_param", ["iommu=pt", "amdgpu.ppfeaturemask=0xffffffff", "pci=realloc=off", "amd_iommu=on",
                      "modprobe.blacklist=radeon,amdgpu", "console=ttyS0,115200n8", "amdgpu.lockup_timeout=10000",
                      "root=/dev/mapper/vg-root", "hugepagesz=1G", "isolcpus=1-7", "foo+bar@x"]),
    ("modprobe_module", ["amdgpu", "snd_hda_intel", "kvm-amd"]),
    ("modprobe_param", ["noretry", "ppfeaturemask", "lockup_timeout", "mcbp", "sched-policy"]),
    ("modprobe_value", ["0", "-1", "0xffffffff", "10000,10000,10000,10000", "0000:04:00.0,1", "Y",
                        "/lib/firmware/amdgpu", "1:2", 0, 1, True, 1.5]),
    ("sysctl_key", ["kernel.numa_balancing", "vm.max_map_count", "net/ipv4/ip_forward",
                    "net.ipv4.conf.eth0/100.rp_filter", "net.ipv4.conf.*.rp_filter"]),
    ("sysctl_value", ["0", "32768 60999", "|/usr/share/apport/apport -p%p -s%s -c%c %E", "4096\t87380\t6291456",
                      65530, "x$(id)", "x;y"]),
    ("env_name", ["HSA_OVERRIDE_GFX_VERSION", "PYTORCH_ROCM_ARCH", "_X", "hip_visible_devices"]),
    ("env_value", ["10.3.0", "gfx90a;gfx942", "0,1,2,3", "/scratch/$USER/miopen", "a b", "x`id`", "it's", "100%",
                   "ünïcode", 11.0]),
    ("absolute_path", ["/opt/rocm", "/opt/rocm-6.4.1/lib", "/etc/profile.d/rocm.sh", "/srv/sw/rocm@6.4", "/a/b_c+d",
                       "/var/lib/rocm-fleet/upgrade.json", "/opt/~x,y:z%20"]),
    ("url", ["", "https://repo.radeon.com/rocm/apt", "http://127.0.0.1:8752/amdgpu",
             "https://mirror.example.org:8443/rocm/apt/?token=a%2Fb&x=1", "file:///srv/mirror/rocm",
             "http://[::1]:8080/rocm", "https://user@mirror.example.org/rocm#x"]),
    ("apt_suite", ["", "jammy", "noble", "stable/updates", "bookworm-backports"]),
    ("apt_pin", ["o=repo.radeon.com", "origin repo.radeon.com", "o=AMD,l=ROCm,n=jammy", "release a=stable, v=7.*"]),
    ("release", ["6.4.1", "7.2", "30.30.3", ""]),
    ("kernel_release", ["6.1.0-19-amd64", "5.15.0-101-generic", "5.14.0-427.13.1.el9_4.x86_64", "6.8.0+1~x"]),
    ("fingerprint", ["CA8BB4727A47B4D09B4EE8969386B48A1A693C5C", "CA8B B472 7A47 B4D0 9B4E  E896 9386 B48A 1A69 3C5C",
                     "0xca8bb4727a47b4d09b4ee8969386b48a1a693c5c"]),
    ("armored_key", ["-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINBF...+/=\n=abcd\n"
                     "-----END PGP PUBLIC KEY BLOCK-----\r\n"]),
    ("account_name", ["render", "video", "fleet", "_svc", "first.last", "ml-team1"]),
    ("file_mode", ["0660", "0666", "660"]),
    ("package_name", ["rocm-hip-runtime6.4.1", "g++-12", "libstdc++6:amd64", "rocm-dev=6.4.1.60401-83~22.04",
                      "python3.11"]),
    ("partition_mode", ["SPX", "CPX", "NPS1", "NPS4"]),
])
def test_real_world_values_stay_allowed(syntax, values):
    for value in values:
        assert syntax_problem("v", value, syntax) is None, value


@pytest.mark.parametrize(("syntax", "value"), [
    ("kernel_param", ""), ("kernel_param", "a=b c"), ("kernel_param", 'quiet"'), ("kernel_param", "x${IFS}"),
    ("modprobe_module", "amd gpu"), ("modprobe_module", ""), ("modprobe_param", "no.retry"),
    ("modprobe_value", "0 install"), ("modprobe_value", "0#"),
    ("sysctl_key", "-kernel.x"), ("sysctl_key", "kernel.x=1"), ("sysctl_key", "kernel x"), ("sysctl_key", ""),
    ("sysctl_value", " 1"), ("sysctl_value", "1 "), ("sysctl_value", "a'b"), ("sysctl_value", "a\\b"),
    ("env_name", "1X"), ("env_name", "A-B"), ("env_name", "A B"), ("env_name", ""), ("env_value", "a\\nb"),
    ("env_value", "a\tb\x1b[0m"),
    ("absolute_path", "opt/rocm"), ("absolute_path", "/opt/ro cm"), ("absolute_path", "/opt/rocm#x"),
    ("absolute_path", "/opt/rocm=lib"), ("absolute_path", ""),
    ("url", "repo.radeon.com/rocm"), ("url", "https://host/$basearch"), ("url", "https://host/a b"),
    ("url", "https://host/(x)"), ("apt_suite", "jammy main"), ("apt_pin", "o=x\nPin-Priority: 1001"),
    ("release", "6.4.1;x"), ("release", "6.4.1-rc"), ("kernel_release", "6.1.0 amd64"), ("fingerprint", "zz"),
    ("account_name", "1user"), ("account_name", "user name"), ("account_name", "a" * 33), ("file_mode", "0668"),
    ("file_mode", "rw"), ("package_name", "-oDpkg::Pre-Invoke=x"), ("partition_mode", "SPX "),
])
def test_values_that_break_out_are_refused(syntax, value):
    assert refused(syntax, value)


def test_the_message_names_the_path_every_character_escaped_and_what_to_do():
    message = syntax_problem("kernel_modprobe_options.amdgpu.noretry", "0\ninstall amdgpu /bin/sh -c id",
                             "modprobe_value")
    assert message.startswith("kernel_modprobe_options.amdgpu.noretry contains '\\n' (newline), ' ' (blank)")
    assert "but must be a module option value in modprobe.d" in message
    assert "change the value in the inventory" in message
    assert shown_character("\x00") == "'\\x00' (NUL)"
    assert shown_character('"') == "'\"' (double quote)"
    assert shown_character("`") == "'`' (backtick)"
    assert shown_character("(") == "'('"
    long_and_bad = syntax_problem("x", "a\"" * 600, "kernel_param")
    assert "is 1200 characters long (at most 1024) and contains '\"' (double quote)" in long_and_bad


def test_a_declaration_walks_lists_mappings_keys_and_fields_naming_full_paths():
    modprobe = {"keys": "modprobe_module", "values": {"keys": "modprobe_param", "values": "modprobe_value"}}
    problems = declared_problems("kernel_modprobe_options", {
        "amdgpu": {"noretry": "0\ninstall amdgpu /bin/sh -c id", "ppfeaturemask": "0xffffffff"},
        "bad module": {"x": "1"}, "kvm": {"no\nretry": "1"}, "radeon": "not a mapping"}, modprobe)
    assert [problem.split(" contains")[0].split(" must")[0] for problem in problems] == [
        "kernel_modprobe_options.amdgpu.noretry",
        "kernel_modprobe_options (the key 'bad module')",
        "kernel_modprobe_options.kvm (the key 'no\\nretry')",
        "kernel_modprobe_options.radeon",
    ]
    assert declared_problems("kernel_boot_params", ["iommu=pt", "a;b"], "kernel_param")[0].startswith(
        "kernel_boot_params[1] contains ';' (semicolon)")
    users = declared_problems("access_users", [{"name": "fleet"}, {"name": "x\ny", "create": True}],
                              {"options": {"name": "account_name"}})
    assert len(users) == 1 and users[0].startswith("access_users[1].name contains '\\n' (newline)")
    assert declared_problems("x", {"A": {"nested": 1}}, {"keys": "env_name", "values": "env_value"}) == [
        "x.A must be a string, got dict"]
    assert declared_problems("x", None, "env_value") == []
    # A list inside a mapping would be written as its repr (["it's"] has double quotes).
    assert declared_problems("x", {"A": ["it's"]}, {"keys": "env_name", "values": "env_value"}) == [
        "x.A must be a string or a mapping, got list"]
    assert declared_problems("x", [["a"]], "kernel_param") == ["x[0] must be a string or a mapping, got list"]
    assert declared_problems("x", "anything\n", {"not_written": "compared only"}) == []
    quoted = {"keys": "env_name", "values": {"not_written": "quoted"}}
    assert declared_problems("x", {"A-B": "1"}, quoted)[0].startswith("x (the key 'A-B') contains '-'")


def test_profile_d_quoting_keeps_shell_characters_literal_for_a_real_shell(tmp_path):
    # The role's own rocm.sh template, rendered by Ansible: sh must read back exactly the value, running nothing.
    loader = DataLoader()
    source = (ROLES / "environment" / "templates" / "rocm.sh.j2").read_text()
    for value in ["gfx90a;gfx942", "x$(touch %s/pwned)" % tmp_path, "x`touch %s/pwned`" % tmp_path, "it's", "a b"]:
        assert syntax_problem("v", value, "env_value") is None
        variables = {"ansible_managed": "managed", "environment_rocm_path": "/opt/rocm",
                     "__environment_variables": {"ROCM_FLEET_T": value}}
        profile = tmp_path / "rocm.sh"
        profile.write_text(Templar(loader=loader, variables=variables).template(trust_as_template(source)))
        read_back = subprocess.run(["sh", "-c", '. "$1"; printf %s "$ROCM_FLEET_T"', "sh", str(profile)],
                                   capture_output=True, text=True, check=True).stdout
        assert read_back == value
    assert not (tmp_path / "pwned").exists()
