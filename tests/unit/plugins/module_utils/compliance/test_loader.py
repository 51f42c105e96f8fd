"""runtime_libraries items (ROCM-ENV-008): the loader resolves the ROCm runtime libraries to the default release.

Every tree here holds real ELF shared objects (gcc -shared -Wl,-soname,...), real ld.so.conf files, and a
cache the real ``ldconfig -r <root>`` built from them; the checker reads it with ``ldconfig -p -C``.
"""

import fnmatch
import os
import shutil
import subprocess

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.core import HostView
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.evaluate import evaluate_item
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.loader import (
    _machine,
    conf_lines,
    first_for_arch,
    read_cache,
)
from fleet_testing.compliance_tree import write

pytestmark = pytest.mark.skipif(
    not shutil.which("gcc") or not shutil.which("ldconfig", path="/sbin:/usr/sbin"),
    reason="builds shared objects with gcc and a cache with ldconfig",
)

ROLE_CONF = "/etc/ld.so.conf.d/rocm.conf"
# Debian's own linker file (libc6): the multiarch directories, where its HSA runtime and amd-smi library are.
DEBIAN_MULTIARCH = "# Multiarch support\n/usr/local/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n"
PERSON = "a person: remove the ld.so.conf.d file or line named, then run ldconfig"
# A release's runtime: HIP, the HSA runtime, AMD SMI (soname, file name).
RUNTIME = {
    "6.4.1": [
        ("libamdhip64.so.6", "libamdhip64.so.6.4.60401"),
        ("libhsa-runtime64.so.1", "libhsa-runtime64.so.1.15.0"),
        ("libamd_smi.so.25", "libamd_smi.so.25.5"),
    ],
    "6.3.3": [
        ("libamdhip64.so.6", "libamdhip64.so.6.3.60303"),
        ("libhsa-runtime64.so.1", "libhsa-runtime64.so.1.14.0"),
    ],
    "5.7.1": [("libamdhip64.so.5", "libamdhip64.so.5.7.50701")],
    # Debian 13's libamd-smi0 (6.1.2), which its amd-smi package pulls in: another soname than 6.4.1's.
    "debian-amd-smi": [("libamd_smi.so.0", "libamd_smi.so.0.0")],
}


@pytest.fixture(scope="module")
def objects(tmp_path_factory):
    """One shared object per soname, built once."""
    build = tmp_path_factory.mktemp("elf")
    (build / "f.c").write_text("int rocm_fleet_test(void) { return 1; }\n")
    built = {}
    for soname in sorted({soname for libraries in RUNTIME.values() for soname, _name in libraries}):
        out = build / soname
        subprocess.run(
            ["gcc", "-shared", "-fPIC", "-Wl,-soname," + soname, "-o", str(out), str(build / "f.c")],
            check=True,
            capture_output=True,
        )
        built[soname] = out
    return built


def install(root, objects, release, directory=None):
    """The release's runtime libraries in ``directory`` (its lib directory), as its packages install them."""
    directory = root / (directory or "opt/rocm-%s/lib" % release).lstrip("/")
    directory.mkdir(parents=True, exist_ok=True)
    for soname, name in RUNTIME[release]:
        shutil.copy(objects[soname], directory / name)
        if not (directory / soname).exists():
            os.symlink(name, directory / soname)


def ldconfig(root):
    """The real ldconfig builds <root>/etc/ld.so.cache from <root>/etc/ld.so.conf (it chroots: root, or a user
    namespace that maps this user to root)."""
    argv = [shutil.which("ldconfig", path="/sbin:/usr/sbin"), "-r", str(root)]
    if os.geteuid() != 0:
        if not shutil.which("unshare"):
            pytest.skip("ldconfig -r chroots: needs root or unshare")
        argv = ["unshare", "--user", "--map-root-user"] + argv
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0 and not (root / "etc/ld.so.cache").exists():
        pytest.skip("ldconfig -r could not run here: %s" % done.stderr.strip())


@pytest.fixture
def root(tmp_path, objects):
    """A legacy-stream host: /opt/rocm links to /opt/rocm-6.4.1, the role's rocm.conf lists its lib directory."""
    write(tmp_path, "/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n")
    write(tmp_path, ROLE_CONF, "# Ansible managed\n/opt/rocm/lib\n/opt/rocm/lib64\n")
    install(tmp_path, objects, "6.4.1")
    os.symlink("/opt/rocm-6.4.1", tmp_path / "opt/rocm")
    return tmp_path


def check(root, **expect):
    expect.setdefault("release_dir", "/opt/rocm-6.4.1")
    expect.setdefault("role_files", [ROLE_CONF])
    item = {"id": "ROCM-ENV-008", "kind": "runtime_libraries", "expect": expect, "repair": PERSON}
    return evaluate_item(item, 0, HostView(str(root)))


def test_the_default_releases_libraries_pass(root):
    ldconfig(root)
    result = check(root)
    assert result["status"] == "pass", result["message"]
    assert result["message"] == (
        "the loader resolves libamd_smi.so.25 (/opt/rocm/lib/libamd_smi.so.25), libamdhip64.so.6 "
        "(/opt/rocm/lib/libamdhip64.so.6), libhsa-runtime64.so.1 (/opt/rocm/lib/libhsa-runtime64.so.1) to the "
        "default release /opt/rocm (/opt/rocm-6.4.1)"
    )
    assert result["actual"]["listed"] == [{"directory": "/opt/rocm/lib", "path": ROLE_CONF, "line": 2}]


def test_another_releases_directory_listed_first_wins_and_fails(root, objects):
    install(root, objects, "6.3.3")
    write(root, "/etc/ld.so.conf.d/00-hip-old.conf", "/opt/rocm-6.3.3/lib\n")
    ldconfig(root)
    result = check(root)
    assert result["status"] == "fail"
    assert result["message"] == (
        "libamdhip64.so.6 resolves to /opt/rocm-6.3.3/lib/libamdhip64.so.6 (release /opt/rocm-6.3.3), not the default "
        "release /opt/rocm (/opt/rocm-6.4.1): /etc/ld.so.conf.d/00-hip-old.conf:1 lists /opt/rocm-6.3.3/lib; "
        "libhsa-runtime64.so.1 resolves to /opt/rocm-6.3.3/lib/libhsa-runtime64.so.1 (release /opt/rocm-6.3.3), not "
        "the default release /opt/rocm (/opt/rocm-6.4.1): /etc/ld.so.conf.d/00-hip-old.conf:1 lists "
        "/opt/rocm-6.3.3/lib"
    )
    assert result["actual"]["resolves"]["libamdhip64.so.6"] == "/opt/rocm-6.3.3/lib/libamdhip64.so.6"
    assert result["repair"] == PERSON  # not the role's file


def test_another_release_in_the_cache_fails_though_it_does_not_win(root, objects):
    install(root, objects, "6.3.3")
    write(root, "/etc/ld.so.conf.d/zz-hip-old.conf", "/opt/rocm-6.3.3/lib\n")
    ldconfig(root)
    result = check(root)
    assert result["status"] == "fail"
    assert result["actual"]["resolves"]["libamdhip64.so.6"] == "/opt/rocm/lib/libamdhip64.so.6"
    assert result["message"] == (
        "libamdhip64.so.6, libhsa-runtime64.so.1 of release /opt/rocm-6.3.3 are in the loader's cache too (from "
        "/opt/rocm-6.3.3/lib), behind the default release's: /etc/ld.so.conf.d/zz-hip-old.conf:1 lists "
        "/opt/rocm-6.3.3/lib"
    )


def test_an_older_major_wins_its_own_soname(root, objects):
    install(root, objects, "5.7.1")
    write(root, "/etc/ld.so.conf.d/zz-hip5.conf", "/opt/rocm-5.7.1/lib\n")
    ldconfig(root)
    assert check(root)["message"] == (
        "libamdhip64.so.5 resolves to /opt/rocm-5.7.1/lib/libamdhip64.so.5 (release /opt/rocm-5.7.1), not the default "
        "release /opt/rocm (/opt/rocm-6.4.1): /etc/ld.so.conf.d/zz-hip5.conf:1 lists /opt/rocm-5.7.1/lib"
    )


def test_a_conf_file_written_after_the_cache_is_pending_ldconfig(root, objects):
    os.rename(root / ROLE_CONF.lstrip("/"), root / "rocm.conf.later")
    ldconfig(root)
    # The role's file, written after the cache was built: site.yml runs ldconfig.
    os.rename(root / "rocm.conf.later", root / ROLE_CONF.lstrip("/"))
    result = check(root)
    assert result["status"] == "fail"
    assert result["message"] == (
        "pending ldconfig: /etc/ld.so.conf.d/rocm.conf:2 lists /opt/rocm/lib, whose libamd_smi.so.25, "
        "libamdhip64.so.6, libhsa-runtime64.so.1 the loader's cache does not have yet (ldconfig rebuilds it)"
    )
    assert result["actual"]["pending"] == [
        {
            "path": ROLE_CONF,
            "line": 2,
            "directory": "/opt/rocm/lib",
            "libraries": [
                "libamd_smi.so.25",
                "libamd_smi.so.25.5",
                "libamdhip64.so.6",
                "libamdhip64.so.6.4.60401",
                "libhsa-runtime64.so.1",
                "libhsa-runtime64.so.1.15.0",
            ],
        }
    ]
    assert result["repair"] == (
        "site.yml writes /etc/ld.so.conf.d/rocm.conf (ROCM-ENV-003) and runs ldconfig where "
        "the loader's cache lacks what it lists"
    )
    # Another release listed by a file of its own, not in the cache yet: fails as that, and pending; a person's.
    install(root, objects, "6.3.3")
    write(root, "/etc/ld.so.conf.d/zz-hip-old.conf", "/opt/rocm-6.3.3/lib\n")
    result = check(root)
    assert (
        "/etc/ld.so.conf.d/zz-hip-old.conf:1 lists /opt/rocm-6.3.3/lib, which holds libamdhip64.so.6, "
        "libhsa-runtime64.so.1 of release /opt/rocm-6.3.3, not the default release /opt/rocm (/opt/rocm-6.4.1)"
    ) in result["message"]
    assert "pending ldconfig: /etc/ld.so.conf.d/zz-hip-old.conf:1 lists /opt/rocm-6.3.3/lib" in result["message"]
    assert result["repair"] == (
        PERSON + "; site.yml writes /etc/ld.so.conf.d/rocm.conf (ROCM-ENV-003) and runs "
        "ldconfig where the loader's cache lacks what it lists"
    )
    # Rebuilt: only the other release's finding is left.
    ldconfig(root)
    assert "pending" not in check(root)["message"]


def test_a_file_removed_after_the_cache_leaves_a_stale_entry(root, objects):
    install(root, objects, "6.3.3")
    write(root, "/etc/ld.so.conf.d/zz-hip-old.conf", "/opt/rocm-6.3.3/lib\n")
    ldconfig(root)
    os.remove(root / "etc/ld.so.conf.d/zz-hip-old.conf")
    assert check(root)["message"] == (
        "libamdhip64.so.6, libhsa-runtime64.so.1 of release /opt/rocm-6.3.3 are in the loader's cache too (from "
        "/opt/rocm-6.3.3/lib), behind the default release's: no ld.so.conf file lists it now (pending ldconfig)"
    )


def test_no_runtime_library_in_the_release_is_skipped_saying_so(tmp_path, objects):
    write(tmp_path, "/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n")
    write(tmp_path, ROLE_CONF, "/opt/rocm/lib\n")
    (tmp_path / "opt/rocm-6.4.1/bin").mkdir(parents=True)  # the tools only
    os.symlink("/opt/rocm-6.4.1", tmp_path / "opt/rocm")
    ldconfig(tmp_path)
    result = check(tmp_path)
    assert (result["status"], result["message"]) == (
        "skipped",
        "the default release /opt/rocm (/opt/rocm-6.4.1) has no ROCm runtime library (libamdhip64.so.*, "
        "libhsa-runtime64.so.*, libamd_smi.so*): nothing of it to resolve (a host with the tools only)",
    )
    # The distribution's HSA runtime (under its own rocminfo) is said, not failed: the release has none.
    install(tmp_path, objects, "6.3.3", "usr/lib/x86_64-linux-gnu")
    write(tmp_path, "/etc/ld.so.conf.d/x86_64-linux-gnu.conf", DEBIAN_MULTIARCH)
    ldconfig(tmp_path)
    result = check(tmp_path)
    assert result["status"] == "skipped"
    assert result["message"].endswith(
        "(a host with the tools only); libamdhip64.so.6 resolves to /usr/lib/x86_64-linux-gnu/libamdhip64.so.6, and "
        "the default release has no libamdhip64.so.6; libhsa-runtime64.so.1 resolves to "
        "/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1, and the default release has no libhsa-runtime64.so.1"
    )
    # Another release's, though, fails.
    install(tmp_path, objects, "5.7.1")
    write(tmp_path, "/etc/ld.so.conf.d/zz-hip5.conf", "/opt/rocm-5.7.1/lib\n")
    ldconfig(tmp_path)
    assert check(tmp_path)["status"] == "fail"


def test_the_distributions_runtime_listed_before_the_release_wins_and_fails(root, objects):
    install(root, objects, "6.3.3", "usr/lib/x86_64-linux-gnu")
    write(root, "/etc/ld.so.conf.d/x86_64-linux-gnu.conf", DEBIAN_MULTIARCH)
    ldconfig(root)
    assert check(root)["status"] == "pass"  # rocm.conf comes first in name order
    os.rename(root / ROLE_CONF.lstrip("/"), root / "etc/ld.so.conf.d/zz-rocm.conf")
    ldconfig(root)
    result = check(root, role_files=["/etc/ld.so.conf.d/zz-rocm.conf"])
    assert result["status"] == "fail"
    assert result["message"].startswith(
        "libamdhip64.so.6 resolves to /usr/lib/x86_64-linux-gnu/libamdhip64.so.6, not the default release /opt/rocm "
        "(/opt/rocm-6.4.1): /etc/ld.so.conf.d/x86_64-linux-gnu.conf:3 lists /usr/lib/x86_64-linux-gnu; "
    )
    assert result["repair"] == PERSON


def test_the_release_libraries_that_no_file_lists_fail(root):
    os.remove(root / ROLE_CONF.lstrip("/"))
    ldconfig(root)
    result = check(root)
    assert result["status"] == "fail"
    assert result["message"].startswith(
        "the loader's cache has no libamd_smi of the default release (/opt/rocm-6.4.1/lib has libamd_smi.so.25) "
        "and no ld.so.conf file lists that directory; the loader's cache has no libamdhip64 "
    )
    # The role's rocm.conf (ROCM-ENV-003) lists it: site.yml, and ROCM-ENV-003's failure is the one reported.
    assert result["repair"].startswith("site.yml writes /etc/ld.so.conf.d/rocm.conf")
    assert result["actual"]["role_files_only"] is True
    assert check(root, role_files=[])["repair"] == PERSON


def test_the_roles_file_removed_after_the_cache_is_its_finding_not_a_persons(root):
    """The cache still resolves the release, from a directory no file lists now: the role's rocm.conf is gone, so
    ROCM-ENV-003's failure is the one reported and site.yml writes it back (one cause, one failed check)."""
    ldconfig(root)
    os.remove(root / ROLE_CONF.lstrip("/"))
    result = check(root)
    assert result["status"] == "fail"
    assert result["message"].startswith("pending ldconfig: the loader's cache has libhsa-runtime64.so.1 => ")
    assert (
        "the loader's cache has libamd_smi.so.25 => /opt/rocm/lib/libamd_smi.so.25, from /opt/rocm/lib, which no "
        "ld.so.conf file lists now" in result["message"]
    )
    assert result["actual"]["role_files_only"] is True
    assert result["repair"].startswith("site.yml writes /etc/ld.so.conf.d/rocm.conf")
    # Without a role file (the role writes none: environment_ld_library_dirs empty) it is a person's.
    assert check(root, role_files=[])["repair"] == PERSON


def test_a_core_sdk_host_resolves_through_the_release_link(tmp_path, objects):
    write(tmp_path, "/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n")
    write(tmp_path, ROLE_CONF, "/opt/rocm/lib\n")
    install(tmp_path, objects, "6.4.1", "opt/rocm/core-10.1/lib")
    install(tmp_path, objects, "6.3.3", "opt/rocm/core-10.0/lib")
    os.symlink("/opt/rocm/core-10.1/lib", tmp_path / "opt/rocm/lib")
    ldconfig(tmp_path)
    assert check(tmp_path, release_dir="/opt/rocm/core-10.1")["status"] == "pass"
    write(tmp_path, "/etc/ld.so.conf.d/00-core-10.0.conf", "/opt/rocm/core-10.0/lib\n")
    ldconfig(tmp_path)
    result = check(tmp_path, release_dir="/opt/rocm/core-10.1")
    assert result["status"] == "fail"
    assert result["message"].startswith(
        "libamdhip64.so.6 resolves to /opt/rocm/core-10.0/lib/libamdhip64.so.6 (release /opt/rocm/core-10.0), not "
        "the default release /opt/rocm (/opt/rocm/core-10.1): /etc/ld.so.conf.d/00-core-10.0.conf:1 lists"
    )


def test_an_unreadable_cache_is_unknown_unless_a_file_lists_another_release(root, objects):
    result = check(root)  # no ldconfig ran: no cache
    assert result["status"] == "unknown"
    assert result["message"].startswith("unknown: the loader's cache: ldconfig -p exited 1: ")
    assert "Can't open cache file %s/etc/ld.so.cache" % root in result["message"]
    install(root, objects, "6.3.3")
    write(root, "/etc/ld.so.conf.d/zz-hip-old.conf", "/opt/rocm-6.3.3/lib\n")
    result = check(root)
    assert result["status"] == "fail"
    assert result["message"].endswith("; not seen: the loader's cache: " + result["actual"]["cache"]["reason"])


def test_the_conf_files_are_read_as_ldconfig_reads_them(tmp_path):
    files = {
        "/etc/ld.so.conf": "include ld.so.conf.d/*.conf\n/usr/local/lib # local\nhwcap 1 nosegneg\n",
        "/etc/ld.so.conf.d/a.conf": "# comment\n/opt/rocm/lib/\n/opt/old=libc6\ninclude /etc/more.conf\n",
        "/etc/ld.so.conf.d/b.conf": "/opt/b\n",
        "/etc/more.conf": "/opt/more\n",
    }

    def expand(pattern):
        return sorted(path for path in files if fnmatch.fnmatchcase(path, pattern))

    assert [(entry["directory"], entry["path"], entry["line"]) for entry in conf_lines(files.get, expand)] == [
        ("/opt/rocm/lib", "/etc/ld.so.conf.d/a.conf", 2),
        ("/opt/old", "/etc/ld.so.conf.d/a.conf", 3),
        ("/opt/more", "/etc/more.conf", 1),
        ("/opt/b", "/etc/ld.so.conf.d/b.conf", 1),
        ("/usr/local/lib", "/etc/ld.so.conf", 2),
    ]


def test_the_first_entry_of_the_architecture_is_the_one_the_loader_takes(root, objects):
    install(root, objects, "6.3.3")
    write(root, "/etc/ld.so.conf.d/00-hip-old.conf", "/opt/rocm-6.3.3/lib\n")
    ldconfig(root)
    entries, reason = read_cache(HostView(str(root)), 10)
    assert reason is None
    hip = [entry["path"] for entry in entries if entry["soname"] == "libamdhip64.so.6"]
    assert hip == ["/opt/rocm-6.3.3/lib/libamdhip64.so.6", "/opt/rocm/lib/libamdhip64.so.6"]
    assert first_for_arch(entries, _machine())["libamdhip64.so.6"]["path"] == hip[0]
    # An entry of another architecture (a 32-bit library: "libc6" alone) is not the loader's, even first.
    first = entries[0]
    assert first_for_arch([dict(first, flags=["libc6"])] + entries, _machine())[first["soname"]] is first


def test_invalid_items_are_errors():
    result = evaluate_item(
        {"id": "X-1", "kind": "runtime_libraries", "expect": {"libraries": []}}, 0, HostView("/nonexistent")
    )
    assert (result["status"], result["message"]) == ("error", "X-1: expect.libraries: must not be empty")


def test_the_distributions_library_of_a_soname_the_release_lacks_is_said_not_failed(root, objects):
    # Debian's libamd_smi.so.0 (its amd-smi's) beside the release's libamd_smi.so.25: a program built for
    # .so.0 can load no library of the release, so the loader's choice is no drift of the release's.
    install(root, objects, "debian-amd-smi", "usr/lib/x86_64-linux-gnu")
    write(root, "/etc/ld.so.conf.d/x86_64-linux-gnu.conf", DEBIAN_MULTIARCH)
    ldconfig(root)
    result = check(root)
    assert result["status"] == "pass", result["message"]
    assert result["message"].endswith(
        "; libamd_smi.so.0 resolves to /usr/lib/x86_64-linux-gnu/libamd_smi.so.0, and the default release has no "
        "libamd_smi.so.0"
    )
    # The same soname as the release's, in the distribution's directory, wins over it: that one fails.
    install(root, objects, "6.4.1", "usr/lib/x86_64-linux-gnu")
    os.rename(root / "etc/ld.so.conf.d/rocm.conf", root / "etc/ld.so.conf.d/zz-rocm.conf")
    ldconfig(root)
    failed = check(root, role_files=["/etc/ld.so.conf.d/zz-rocm.conf"])
    assert failed["status"] == "fail" and "resolves to /usr/lib/x86_64-linux-gnu/" in failed["message"], failed
