"""host.facts_digest: the digest follows what the distribution and processor facts are read from, not the clock.

(host_facts' own tests check that a matching digest leaves those facts out and a changed one reads them again.)
"""

from ansible_collections.rocm_fleet.core.plugins.module_utils.host.facts_digest import (
    read_sources_digest,
    sources_digest,
)

UNAME = ("6.1.0-28-amd64", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)", "x86_64")
RELEASES = {"/etc/os-release": b'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nVERSION_ID="12"\n',
            "/etc/debian_version": b"12.8\n", "/etc/lsb-release": None}
CPU = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu MHz\t\t: 2400.000\nmodel name\t: AMD EPYC 9654\n"


def test_the_digest_follows_the_release_files_the_kernel_and_the_cpus_but_not_the_clock():
    digest = sources_digest("Linux", UNAME, RELEASES, CPU)
    assert digest == sources_digest("Linux", UNAME, dict(reversed(list(RELEASES.items()))), CPU)
    assert digest == sources_digest("Linux", UNAME, RELEASES, CPU.replace("2400.000", "3701.122"))
    changed = [
        sources_digest("Linux", UNAME, dict(RELEASES, **{"/etc/debian_version": b"12.9\n"}), CPU),
        sources_digest("Linux", UNAME, dict(RELEASES, **{"/etc/lsb-release": b""}), CPU),  # appeared
        sources_digest("Linux", UNAME, dict(RELEASES, **{"/etc/redhat-release": None}), CPU),
        sources_digest("Linux", ("6.1.0-29-amd64",) + UNAME[1:], RELEASES, CPU),
        sources_digest("Linux", UNAME, RELEASES, CPU.replace("9654", "9754")),
        sources_digest("Linux", UNAME, RELEASES, CPU + "\nprocessor\t: 1\n"),
    ]
    assert len({digest, *changed}) == len(changed) + 1



def test_this_hosts_digest_is_stable_between_two_reads():
    assert read_sources_digest("Linux") == read_sources_digest("Linux")
