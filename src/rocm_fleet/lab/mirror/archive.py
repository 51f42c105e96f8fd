"""apt repository indexes: Packages stanzas from .deb files, Release files, signatures."""

from __future__ import annotations

import gzip
import hashlib
import subprocess
import time
from dataclasses import dataclass
from email.utils import formatdate
from pathlib import Path

from rocm_fleet.lab.mirror.signing import Signer


@dataclass(frozen=True)
class Dist:
    """One ``deb <url> <suite> main`` repository: <root>/dists/<suite>."""

    root: str  # relative to www, e.g. "rocm/apt/6.4.1"
    suite: str
    origin: str
    label: str
    key: str  # signing key name
    version: str = ""

    @property
    def path(self) -> str:
        return f"{self.root}/dists/{self.suite}"


def package_stanza(deb: Path, repo_root: Path, control: str | None = None) -> str:
    """A Packages stanza: the control file plus where (relative to the repository URL) and what the file is.

    ``control`` is the control text when the caller built the package itself; else dpkg-deb reads it.
    """
    if control is None:
        control = subprocess.run(["dpkg-deb", "-f", str(deb)], capture_output=True, text=True, check=True).stdout
    data = deb.read_bytes()
    extra = (
        f"Filename: {deb.relative_to(repo_root).as_posix()}\n"
        f"Size: {len(data)}\n"
        f"MD5sum: {hashlib.md5(data).hexdigest()}\n"
        f"SHA256: {hashlib.sha256(data).hexdigest()}\n"
    )
    return control.rstrip("\n") + "\n" + extra


def stanza_package(stanza: str) -> str:
    return stanza.split("\n", 1)[0].removeprefix("Package: ")


def publish_dist(www: Path, dist: Dist, stanzas: list[str], signer: Signer, key: str | None = None) -> None:
    """Write Packages, Packages.gz, Release, InRelease and Release.gpg of one dist."""
    binary = www / dist.path / "main" / "binary-amd64"
    binary.mkdir(parents=True, exist_ok=True)
    packages = "\n".join(stanzas).encode()
    (binary / "Packages").write_bytes(packages)
    (binary / "Packages.gz").write_bytes(gzip.compress(packages, mtime=0))
    files = [binary / "Packages", binary / "Packages.gz"]
    sums = {"MD5Sum": hashlib.md5, "SHA256": hashlib.sha256}
    lines = [
        f"Origin: {dist.origin}",
        f"Label: {dist.label}",
        f"Suite: {dist.suite}",
        f"Codename: {dist.suite}",
        *([f"Version: {dist.version}"] if dist.version else []),
        f"Date: {formatdate(time.time(), usegmt=True)}",
        "Architectures: amd64",
        "Components: main",
        f"Description: {dist.label} {dist.suite} (rocm-fleet lab mirror)",
    ]
    for field, algorithm in sums.items():
        lines.append(f"{field}:")
        for path in files:
            content = path.read_bytes()
            rel = path.relative_to(www / dist.path).as_posix()
            lines.append(f" {algorithm(content).hexdigest()} {len(content):>8} {rel}")
    release = www / dist.path / "Release"
    release.write_text("\n".join(lines) + "\n")
    signer.sign(release, key or dist.key)
