"""apt_source (deb822 and one-line, with the keyring's pinned fingerprint) and apt_pin items."""

import os
import shutil
import subprocess

import pytest
from fleet_testing.compliance_tree import check as check_item
from fleet_testing.compliance_tree import write

KEYRING = "/etc/apt/keyrings/rocm.gpg"
URI = "https://repo.example.invalid/rocm/apt/6.4.1"
DEB822 = """Types: deb
URIs: %s
Suites: jammy
Components: main
Architectures: amd64
Signed-By: %s
""" % (URI, KEYRING)
PIN = """Package: *
Pin: origin repo.example.invalid
Pin-Priority: 600
"""




@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    """Two gpg-generated keys: (fingerprint, binary export) each."""
    if shutil.which("gpg") is None:
        pytest.skip("gpg is not installed")
    home = tmp_path_factory.mktemp("gnupg")
    os.chmod(home, 0o700)
    found = []
    for uid in ("A <a@example.invalid>", "B <b@example.invalid>"):
        gpg = ["gpg", "--homedir", str(home), "--batch", "--no-tty"]
        subprocess.run(
            [*gpg, "--passphrase", "", "--quick-gen-key", uid, "ed25519", "sign", "never"],
            check=True,
            capture_output=True,
        )
        listing = subprocess.run(
            [*gpg, "--with-colons", "--list-keys", uid], check=True, capture_output=True, text=True
        ).stdout
        fingerprint = next(line.split(":")[9] for line in listing.splitlines() if line.startswith("fpr:"))
        found.append(
            (fingerprint, subprocess.run([*gpg, "--export", fingerprint], check=True, capture_output=True).stdout)
        )
    return found


def check(root, kind, **expect):
    return check_item(root, kind, item_id="ROCM-REPO-001", **expect)


def source(root, keys, path="/etc/apt/sources.list.d/rocm.sources", fingerprint_index=0, **expect):
    values = {"path": path, "signed_by": KEYRING, "uris": [URI], "suites": ["jammy"], "components": ["main"]}
    values["fingerprint"] = keys[fingerprint_index][0]
    values.update(expect)
    return check(root, "apt_source", **values)


def test_deb822_source_with_pinned_key_passes(tmp_path, keys):
    write(tmp_path, "/etc/apt/sources.list.d/rocm.sources", DEB822)
    write(tmp_path, KEYRING, keys[0][1])
    result = source(tmp_path, keys)
    assert result["status"] == "pass", result["message"]
    assert result["actual"]["keyring_fingerprints"] == [keys[0][0]]


def test_wrong_key_in_keyring_fails_naming_both(tmp_path, keys):
    write(tmp_path, "/etc/apt/sources.list.d/rocm.sources", DEB822)
    write(tmp_path, KEYRING, keys[1][1])
    result = source(tmp_path, keys)
    assert result["status"] == "fail"
    assert "holds %s, which repo_signing_keys does not list (it lists %s)" % (
        keys[1][0], keys[0][0]) in result["message"]


def test_extra_key_in_keyring_fails(tmp_path, keys):
    write(tmp_path, "/etc/apt/sources.list.d/rocm.sources", DEB822)
    write(tmp_path, KEYRING, keys[0][1] + keys[1][1])
    assert "holds %s, which" % keys[1][0] in source(tmp_path, keys)["message"]


@pytest.mark.parametrize("installed", [[0], [1], [0, 1]])
def test_a_rotation_pins_both_keys_and_either_or_both_pass(tmp_path, keys, installed):
    """fingerprints (the role's list): the current key, the next one, or both in the keyring all pass."""
    write(tmp_path, "/etc/apt/sources.list.d/rocm.sources", DEB822)
    write(tmp_path, KEYRING, b"".join(keys[index][1] for index in installed))
    values = {"path": "/etc/apt/sources.list.d/rocm.sources", "signed_by": KEYRING, "uris": [URI],
              "fingerprints": [keys[0][0], keys[1][0]]}
    result = check(tmp_path, "apt_source", **values)
    assert result["status"] == "pass", result["message"]
    assert result["actual"]["keyring_fingerprints"] == [keys[index][0] for index in installed]


def test_a_lab_key_passes_only_where_the_item_says_lab(tmp_path, keys):
    """The repo role's signing_key object passes lab_fingerprints and lab: compliance refuses as preflight does."""
    write(tmp_path, "/etc/apt/sources.list.d/rocm.sources", DEB822)
    write(tmp_path, KEYRING, keys[0][1])
    values = {"path": "/etc/apt/sources.list.d/rocm.sources", "signed_by": KEYRING, "uris": [URI],
              "fingerprints": [keys[0][0]], "lab_fingerprints": [keys[0][0]]}
    refused = check(tmp_path, "apt_source", **values)
    assert refused["status"] == "fail"
    assert "lists %s, a signing key of the rocm-fleet lab" % keys[0][0] in refused["message"]
    assert check(tmp_path, "apt_source", lab=True, **values)["status"] == "pass"


def test_an_empty_pin_list_fails_instead_of_skipping_the_keyring(tmp_path, keys):
    write(tmp_path, "/etc/apt/sources.list.d/rocm.sources", DEB822)
    write(tmp_path, KEYRING, keys[0][1])
    result = check(tmp_path, "apt_source", path="/etc/apt/sources.list.d/rocm.sources", signed_by=KEYRING,
                   uris=[URI], fingerprints=[])
    assert result["status"] == "fail" and "repo_signing_keys is empty" in result["message"]


def test_a_malformed_pin_is_an_error_of_the_item(tmp_path, keys):
    write(tmp_path, "/etc/apt/sources.list.d/rocm.sources", DEB822)
    write(tmp_path, KEYRING, keys[0][1])
    result = source(tmp_path, keys, fingerprint="not-hex")
    assert result["status"] == "fail"
    assert "'not-hex' is not an OpenPGP fingerprint" in result["message"]


def test_missing_or_garbage_keyring_fails(tmp_path, keys):
    write(tmp_path, "/etc/apt/sources.list.d/rocm.sources", DEB822)
    assert "keyring /etc/apt/keyrings/rocm.gpg does not exist" in source(tmp_path, keys)["message"]
    write(tmp_path, KEYRING, b"not a key")
    assert "is not an OpenPGP keyring" in source(tmp_path, keys)["message"]


def test_signed_by_and_suite_drift(tmp_path, keys):
    text = DEB822.replace("Suites: jammy", "Suites: noble").replace(KEYRING, "/usr/share/keyrings/other.gpg")
    write(tmp_path, "/etc/apt/sources.list.d/rocm.sources", text)
    write(tmp_path, KEYRING, keys[0][1])
    message = source(tmp_path, keys)["message"]
    assert "%s lacks suite jammy" % URI in message
    assert "is signed-by /usr/share/keyrings/other.gpg, expected %s" % KEYRING in message


def test_disabled_stanza_does_not_count(tmp_path, keys):
    write(tmp_path, "/etc/apt/sources.list.d/rocm.sources", DEB822 + "Enabled: no\n")
    write(tmp_path, KEYRING, keys[0][1])
    assert "no enabled entry for %s" % URI in source(tmp_path, keys)["message"]


def test_one_line_list_file(tmp_path, keys):
    line = "deb [arch=amd64 signed-by=%s] %s/ jammy main\n" % (KEYRING, URI)
    write(tmp_path, "/etc/apt/sources.list.d/rocm.list", "# ROCm\n" + line)
    write(tmp_path, KEYRING, keys[0][1])
    result = source(tmp_path, keys, path="/etc/apt/sources.list.d/rocm.list")
    assert result["status"] == "pass", result["message"]


def test_fingerprint_without_signed_by_is_invalid(tmp_path):
    result = check(tmp_path, "apt_source", path="/x.sources", fingerprint="AB")
    assert (result["status"], result["message"]) == (
        "error",
        "ROCM-REPO-001: expect.fingerprint: needs signed_by (the keyring whose key it pins)",
    )


def test_apt_pin(tmp_path):
    write(tmp_path, "/etc/apt/preferences.d/rocm-pin-600", PIN)
    pin = {"path": "/etc/apt/preferences.d/rocm-pin-600", "package": "*", "pin": "origin repo.example.invalid"}
    assert check(tmp_path, "apt_pin", priority=600, **pin)["status"] == "pass"
    low = check(tmp_path, "apt_pin", priority=1001, **pin)
    assert low["message"] == "/etc/apt/preferences.d/rocm-pin-600: Pin-Priority 600, expected 1001"
    other = check(tmp_path, "apt_pin", priority=600, **dict(pin, pin="release o=ROCm"))
    assert other["status"] == "fail"
    assert "has no stanza 'Package: *' with 'Pin: release o=ROCm'" in other["message"]
    assert check(tmp_path, "apt_pin", priority="600", **pin)["status"] == "error"
