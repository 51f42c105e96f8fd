"""The built artifacts (sdist, wheel, collection tarball) hold no secret key material.

The lab's signing keys stay committed in the checkout (they are lab keys, public
knowledge), which is exactly why nothing built from it may carry them: a site that
installs the wheel or the collection must not receive a key that signs for the lab.
Keys are recognised by their content (armor lines, PEM and OpenSSH headers, binary
OpenPGP secret-key packets), not by file names.
"""

from __future__ import annotations

import base64
import io
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import yaml
from ansible_collections.rocm_fleet.core.plugins.module_utils.repo.openpgp import OpenPgpError, iter_packets

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
LAB_KEYS = REPO / "src" / "rocm_fleet" / "lab" / "keys"

# PEM ("RSA PRIVATE KEY", "PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "OPENSSH PRIVATE KEY", ...) and
# OpenPGP armor ("PGP PRIVATE KEY BLOCK"); PuTTY's key files; GnuPG's private-keys-v1.d S-expressions.
SECRET_TEXT = re.compile(
    rb"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-\d|\((?:protected-|shadowed-)?private-key\b"
)
OPENSSH_BINARY = b"openssh-key-v1\x00"
# Spelled in two parts, so this file, which the collection tarball carries, is no match itself.
PGP_SECRET_ARMOR = "-----BEGIN PGP " + "PRIVATE KEY BLOCK-----"
# OpenPGP packet tags of secret keys and secret subkeys.
SECRET_PACKET_TAGS = {5, 7}


def secret_key_material(data: bytes) -> str | None:
    """What kind of secret key ``data`` holds, or None."""
    match = SECRET_TEXT.search(data)
    if match:
        return match.group(0).decode("ascii", "replace")
    if OPENSSH_BINARY in data:
        return "binary OpenSSH private key"
    try:
        tags = [tag for tag, _body in iter_packets(data)] if data else []
    except OpenPgpError:
        return None  # not a binary OpenPGP file
    if SECRET_PACKET_TAGS & set(tags):
        return "binary OpenPGP secret key packets"
    return None


def archive_members(path: Path) -> dict[str, bytes]:
    """{member name: content} of the regular files of a zip (wheel) or tar (sdist, collection) archive."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            return {name: archive.read(name) for name in archive.namelist() if not name.endswith("/")}
    with tarfile.open(path) as archive:
        return {member.name: archive.extractfile(member).read() for member in archive if member.isfile()}


def secrets_in(path: Path) -> dict[str, str]:
    return {name: kind for name, data in archive_members(path).items() if (kind := secret_key_material(data))}


@pytest.fixture(scope="module")
def tracked_copy(tmp_path_factory) -> Path:
    """The committed tree (and what is staged), as a fresh clone builds: no egg-info or build/ of this checkout."""
    if not (REPO / ".git").exists() or not shutil.which("git"):
        pytest.skip("needs a git checkout")
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    copy = tmp_path_factory.mktemp("tree") / "rocm-fleet"
    for name in filter(None, files.decode().split("\0")):
        source = REPO / name
        if source.is_file() or source.is_symlink():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name, follow_symlinks=False)
    return copy


@pytest.fixture(scope="module")
def python_artifacts(tracked_copy, tmp_path_factory) -> list[Path]:
    out = tmp_path_factory.mktemp("dist")
    result = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--sdist", "--wheel", "--outdir", str(out),
         str(tracked_copy)],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return sorted(out.iterdir())


@pytest.fixture(scope="module")
def collection_tarball(tracked_copy, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("collection")
    result = subprocess.run(
        [str(BIN / "ansible-galaxy"), "collection", "build", "--output-path", str(out), str(tracked_copy)],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (tarball,) = out.glob("*.tar.gz")
    return tarball


@pytest.mark.parametrize("secret", sorted(LAB_KEYS.glob("*.secret.asc")), ids=lambda path: path.name)
def test_the_detector_finds_the_lab_keys_armored_and_binary(secret, tmp_path):
    assert secret_key_material(secret.read_bytes()) == PGP_SECRET_ARMOR
    if shutil.which("gpg"):
        binary = subprocess.run(["gpg", "--dearmor"], input=secret.read_bytes(), capture_output=True, check=True).stdout
        assert secret_key_material(binary) == "binary OpenPGP secret key packets"


def test_the_detector_finds_openssh_and_pem_keys(tmp_path):
    if not shutil.which("ssh-keygen"):
        pytest.skip("needs ssh-keygen")
    for name, options in {"openssh": [], "pem": ["-m", "PEM", "-t", "rsa", "-b", "1024"]}.items():
        key = tmp_path / name
        subprocess.run(["ssh-keygen", "-q", "-N", "", "-f", str(key), *(options or ["-t", "ed25519"])], check=True)
        assert secret_key_material(key.read_bytes()) is not None, name
        assert secret_key_material(key.with_suffix(".pub").read_bytes()) is None, name
    body = b"\n".join((tmp_path / "openssh").read_bytes().splitlines()[1:-1])
    assert secret_key_material(base64.b64decode(body)) == "binary OpenSSH private key"


@pytest.mark.parametrize("public", sorted(LAB_KEYS.glob("*.pub.asc")) + sorted(LAB_KEYS.glob("*.pem")),
                         ids=lambda path: path.name)
def test_public_keys_and_certificates_are_not_secrets(public):
    assert secret_key_material(public.read_bytes()) is None


@pytest.mark.slow
def test_sdist_and_wheel_hold_no_secret_key(python_artifacts):
    by_kind = {path.suffix: path for path in python_artifacts}
    assert sorted(by_kind) == [".gz", ".whl"], python_artifacts
    for artifact in python_artifacts:
        assert secrets_in(artifact) == {}, artifact.name
    wheel = archive_members(by_kind[".whl"])
    # The lab still gets its public keys (the mirror serves them); only the secret halves stay behind.
    assert "rocm_fleet/lab/keys/rocm-lab.pub.asc" in wheel
    assert not [name for name in wheel if name.endswith(".secret.asc")]
    # The wheel carries the built collection (setup.py), scanned above with the rest of the wheel.
    assert "rocm_fleet/_collection/ansible_collections/rocm_fleet/core/playbooks/drift.yml" in wheel


@pytest.mark.slow
def test_collection_tarball_holds_no_secret_key(collection_tarball):
    members = archive_members(collection_tarball)
    assert "roles/repo/tasks/main.yml" in members  # the tarball is the collection
    assert "playbooks/site.yml" in members  # rocm_fleet.core.site
    assert secrets_in(collection_tarball) == {}


def test_build_ignore_names_what_the_tree_has():
    """Every galaxy.yml build_ignore entry matches a path of the checkout, or one the checkout ignores (.gitignore)."""
    ignored = yaml.safe_load((REPO / "galaxy.yml").read_text())["build_ignore"]
    generated = {line.strip().rstrip("/") for line in (REPO / ".gitignore").read_text().splitlines()}
    stale = [pattern for pattern in ignored if pattern not in generated and not list(REPO.glob(pattern))]
    assert stale == []


def test_archive_reader_sees_a_planted_key(tmp_path):
    """The artifact check reads what it opens: a secret key planted in a tarball is found."""
    tarball = tmp_path / "planted.tar.gz"
    with tarfile.open(tarball, "w:gz") as archive:
        data = (LAB_KEYS / "wrong-lab.secret.asc").read_bytes()
        info = tarfile.TarInfo("roles/x/files/innocent.txt")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    assert secrets_in(tarball) == {"roles/x/files/innocent.txt": PGP_SECRET_ARMOR}
