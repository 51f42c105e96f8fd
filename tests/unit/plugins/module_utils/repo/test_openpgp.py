"""Primary key fingerprints of keyrings that gpg itself generated and exported."""

import os
import shutil
import struct
import subprocess

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.repo.openpgp import (
    OpenPgpError,
    iter_packets,
    keyring_fingerprints,
    normalize_fingerprint,
)

pytestmark = pytest.mark.skipif(shutil.which("gpg") is None, reason="gpg is not installed")


def gpg(home, *args):
    return subprocess.run(
        ["gpg", "--homedir", str(home), "--batch", "--no-tty", *args], check=True, capture_output=True
    ).stdout


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    """Two keys (ed25519 and RSA), their fingerprints as gpg prints them, and exports."""
    home = tmp_path_factory.mktemp("gnupg")
    os.chmod(home, 0o700)
    for uid, algo in (("Ed <ed@example.invalid>", "ed25519"), ("Rsa <rsa@example.invalid>", "rsa2048")):
        gpg(home, "--passphrase", "", "--quick-gen-key", uid, algo, "sign", "never")
    listing = gpg(home, "--with-colons", "--list-keys").decode()
    fingerprints, previous = [], ""
    for line in listing.splitlines():
        if line.startswith("fpr:") and previous.startswith("pub:"):
            fingerprints.append(line.split(":")[9])
        previous = line
    assert len(fingerprints) == 2, listing
    return {
        "home": home,
        "fingerprints": fingerprints,
        "binary": [gpg(home, "--export", fpr) for fpr in fingerprints],
        "armored": [gpg(home, "--armor", "--export", fpr) for fpr in fingerprints],
    }


def new_format(packets, partial=False):
    """Re-encode packets with new-format headers, optionally in partial body chunks."""
    out = bytearray()
    for tag, body in packets:
        out.append(0xC0 | tag)
        if partial and len(body) > 64:
            out.append(224 + 6)  # a 64-octet partial chunk, then the rest with a normal length
            out += body[:64]
            body = body[64:]
        length = len(body)
        if length < 192:
            out.append(length)
        elif length < 8384:
            length -= 192
            out += bytes([(length >> 8) + 192, length & 0xFF])
        else:
            out += b"\xff" + struct.pack(">I", length)
        out += body
    return bytes(out)


def test_binary_export_gives_gpgs_fingerprint(keys):
    for fingerprint, data in zip(keys["fingerprints"], keys["binary"], strict=True):
        assert keyring_fingerprints(data) == [fingerprint]


def test_armored_export_gives_gpgs_fingerprint(keys):
    for fingerprint, data in zip(keys["fingerprints"], keys["armored"], strict=True):
        assert keyring_fingerprints(data) == [fingerprint]


def test_keyring_with_two_keys_lists_both_primaries_not_subkeys(keys):
    assert keyring_fingerprints(b"".join(keys["binary"])) == keys["fingerprints"]


def test_new_format_headers_including_two_octet_and_partial_lengths(keys):
    rsa_packets = list(iter_packets(keys["binary"][1]))
    assert max(len(body) for _, body in rsa_packets) >= 192, "the RSA key must exercise 2-octet lengths"
    for fingerprint, data in zip(keys["fingerprints"], keys["binary"], strict=True):
        packets = list(iter_packets(data))
        assert keyring_fingerprints(new_format(packets)) == [fingerprint]
        assert keyring_fingerprints(new_format(packets, partial=True)) == [fingerprint]


def test_truncated_keyring_is_an_error(keys):
    with pytest.raises(OpenPgpError, match="runs past the end"):
        keyring_fingerprints(keys["binary"][1][:100])


def test_corrupted_armor_checksum_is_an_error(keys):
    text = keys["armored"][0].decode()
    lines = text.splitlines()
    body_line = next(i for i, line in enumerate(lines) if len(line) > 40)
    lines[body_line] = lines[body_line][::-1]
    with pytest.raises(OpenPgpError):
        keyring_fingerprints("\n".join(lines).encode())


def test_non_openpgp_data_is_an_error():
    with pytest.raises(OpenPgpError, match="not a packet header"):
        keyring_fingerprints(b"hello world")


def test_normalize_fingerprint():
    assert normalize_fingerprint("0xe8c5 8744 aa") == "E8C58744AA"
