"""Build .rpm files from a declarative description with the real rpmbuild, cached by content.

The lab's RPM repositories (RHEL-family and SLES hosts) carry packages of the same shape as its .deb files:
files, links and maintainer scripts. rpmbuild writes them (the rpm package of Debian's archive, 4.18), so rpm
and dnf read real headers, digests and payloads; a spec is generated per package, its files laid out in a
source tree that %install copies. Nothing of the host's rpm macros runs on the payload: no strip, no
debuginfo, no build-id links, no automatic requires (every requirement is the description's), as AMD's
prebuilt packages are made from prebuilt trees.

A built package is cached by the digest of its description: a mirror rebuild builds only what changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath

from rocm_fleet.lab.mirror.debs import copy_published

# rpmbuild defines that keep the payload as given and the build quick (gzip level 2).
_DEFINES = {
    "_binary_payload": "w2.gzdio",
    "_build_id_links": "none",
    "__os_install_post": "%{nil}",
    "debug_package": "%{nil}",
    "_source_date_epoch_from_changelog": "0",
    "use_source_date_epoch_as_buildtime": "1",
    "clamp_mtime_to_source_date_epoch": "1",
}
_EPOCH_SECONDS = "1700000000"
SCRIPTS = {"preinst": "%pre", "postinst": "%post", "prerm": "%preun", "postrm": "%postun", "posttrans": "%posttrans"}


@dataclass
class RpmSpec:
    name: str
    version: str  # without the epoch and release: 6.16.13.30300300
    release: str  # 2327507.el9
    summary: str
    epoch: int | None = None
    arch: str = "x86_64"  # or noarch
    license: str = "MIT"
    group: str = "System Environment/Libraries"
    url: str = "https://github.com/ROCm/ROCm"
    vendor: str = "Advanced Micro Devices, Inc."
    requires: list[str] = field(default_factory=list)  # rpm dependency strings: "rocm-core = 7.2.3.70203-90.el9"
    provides: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    obsoletes: list[str] = field(default_factory=list)
    # absolute path -> content (bytes) or (mode, bytes)
    files: dict[str, bytes | tuple[int, bytes]] = field(default_factory=dict)
    symlinks: dict[str, str] = field(default_factory=dict)  # absolute path -> target
    # Debian's script names (preinst, postinst, prerm, postrm) -> shell text, run as %pre, %post, %preun, %postun;
    # posttrans: %posttrans (rpm's own, after the whole transaction).
    scripts: dict[str, str] = field(default_factory=dict)

    @property
    def evr(self) -> str:
        return (
            f"{self.epoch}:{self.version}-{self.release}"
            if self.epoch is not None
            else f"{self.version}-{self.release}"
        )

    @property
    def filename(self) -> str:
        return f"{self.name}-{self.version}-{self.release}.{self.arch}.rpm"

    def digest(self) -> str:
        data = asdict(self)
        data["files"] = {
            path: [content[0], hashlib.sha256(content[1]).hexdigest()]
            if isinstance(content, tuple)
            else [0o644, hashlib.sha256(content).hexdigest()]
            for path, content in self.files.items()
        }
        # The .spec text too: a change to how a description is built (owned directories, scriptlets) is a new build.
        return hashlib.sha256((json.dumps(data, sort_keys=True) + spec_text(self)).encode()).hexdigest()[:20]


def spec_text(spec: RpmSpec) -> str:
    """The .spec rpmbuild builds ``spec`` from; the files come from SOURCES/root."""
    header = [
        f"Name: {spec.name}",
        f"Version: {spec.version}",
        f"Release: {spec.release}",
        *([f"Epoch: {spec.epoch}"] if spec.epoch is not None else []),
        f"Summary: {spec.summary}",
        f"License: {spec.license}",
        f"Group: {spec.group}",
        f"URL: {spec.url}",
        f"Vendor: {spec.vendor}",
        f"BuildArch: {spec.arch}",
        "AutoReqProv: no",
        *(f"Requires: {item}" for item in spec.requires),
        *(f"Provides: {item}" for item in spec.provides),
        *(f"Conflicts: {item}" for item in spec.conflicts),
        *(f"Obsoletes: {item}" for item in spec.obsoletes),
    ]
    body = ["", "%description", spec.summary, "", "%install", "cp -a %{_sourcedir}/root/. %{buildroot}/", ""]
    for name, section in SCRIPTS.items():
        if name in spec.scripts:
            body += [*_scriptlet(section, spec.scripts[name]), ""]
    body.append("%files")
    for directory in _owned_directories(spec):
        body.append(f'%dir %attr(0755,root,root) "{directory}"')
    for path, content in sorted(spec.files.items()):
        mode = content[0] if isinstance(content, tuple) else 0o644
        body.append(f'%attr({mode:04o},root,root) "{path}"')
    body += [f'"{path}"' for path in sorted(spec.symlinks)]
    return "\n".join(header + body) + "\n"


def _scriptlet(section: str, script: str) -> list[str]:
    """A scriptlet run by the script's own interpreter (its #! line; /bin/sh without one), its text kept as written:
    rpm expands macros in scriptlets, so every % is doubled."""
    lines = script.rstrip("\n").splitlines()
    interpreter = "/bin/sh"
    if lines and lines[0].startswith("#!"):
        interpreter = lines[0][2:].strip().split()[0]
        lines = lines[1:]
    return [f"{section} -p {interpreter}", *(line.replace("%", "%%") for line in lines)]


def _owned_directories(spec: RpmSpec) -> list[str]:
    """The directories under /opt a package creates, and a kernel's modules directory; the distribution owns the
    system's (/usr, /etc, ...)."""
    dirs = set()
    for path in [*spec.files, *spec.symlinks]:
        for parent in PurePosixPath(path).parents:
            if str(parent).startswith(("/opt/", "/usr/src/", "/usr/lib/modules/")):
                dirs.add(str(parent))
    return sorted(dirs)


def _lay_out(spec: RpmSpec, root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)  # a meta package has no files
    for path, content in spec.files.items():
        mode, body = content if isinstance(content, tuple) else (0o644, content)
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)
        target.chmod(mode)
    for path, link in spec.symlinks.items():
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(link)


@dataclass
class RpmRepo:
    """One dnf repository of the mirror: its packages, signed with ``key`` (rocm_fleet.lab.mirror.signing)."""

    path: str  # under the mirror's www
    key: str
    specs: list[RpmSpec] = field(default_factory=list)


def build_rpm(spec: RpmSpec, out_dir: Path, cache: Path | None = None) -> Path:
    """Build ``spec`` into ``out_dir`` (from ``cache`` when an earlier build of the same description is there)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / spec.filename
    cached = cache / f"{spec.name}_{spec.digest()}.rpm" if cache else None
    if cached is None or not cached.is_file():
        built = _rpmbuild(spec)
        try:
            if cached is None:
                os.replace(built, target)
                return target
            cache.mkdir(parents=True, exist_ok=True)
            os.replace(built, cached)
        finally:
            shutil.rmtree(built.parent, ignore_errors=True)
    return copy_published(cached, target)


def _rpmbuild(spec: RpmSpec) -> Path:
    top = Path(tempfile.mkdtemp(prefix="rocm-fleet-rpmbuild-"))
    try:
        _lay_out(spec, top / "SOURCES" / "root")
        spec_file = top / "SPECS" / f"{spec.name}.spec"
        spec_file.parent.mkdir(parents=True)
        spec_file.write_text(spec_text(spec))
        defines = [
            arg for key, value in {**_DEFINES, "_topdir": str(top)}.items() for arg in ("--define", f"{key} {value}")
        ]
        result = subprocess.run(
            ["rpmbuild", "-bb", "--quiet", *defines, str(spec_file)],
            capture_output=True,
            text=True,
            env={**os.environ, "SOURCE_DATE_EPOCH": _EPOCH_SECONDS, "LC_ALL": "C"},
        )
        if result.returncode != 0:
            raise RuntimeError(f"rpmbuild of {spec.name} failed ({result.returncode}):\n{result.stderr[-3000:]}")
        built = top / "RPMS" / spec.arch / spec.filename
        keep = Path(tempfile.mkdtemp(prefix="rocm-fleet-rpm-"))
        moved = keep / spec.filename
        shutil.move(str(built), moved)
        return moved
    finally:
        shutil.rmtree(top, ignore_errors=True)


def publish_repository(directory: Path, signer, key_name: str) -> Path:
    """Sign every package under ``directory``, index it with createrepo_c and sign its repomd.xml: a repository as
    dnf and zypper read it with gpgcheck and repo_gpgcheck. Returns repodata/repomd.xml."""
    packages = sorted(directory.rglob("*.rpm"))
    signer.sign_rpms(packages, key_name)
    result = subprocess.run(
        [
            "createrepo_c",
            "--quiet",
            "--no-database",
            "--simple-md-filenames",
            "--general-compress-type=gz",
            str(directory),
        ],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise RuntimeError(f"createrepo_c {directory} failed ({result.returncode}):\n{result.stderr[-3000:]}")
    repomd = directory / "repodata" / "repomd.xml"
    signer.sign_repomd(repomd, key_name)
    return repomd
