# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pull role's archive: one tar.gz per host Python with ``wheels/`` (that version's wheelhouse) and, in
collection mode, ``inventory`` (the site's inventory, a file or a directory), unpacked on the host by one
ansible.builtin.unarchive.

The same inputs give the same bytes: members sorted, every mtime 0, owner root, fixed modes, gzip without a
name or time. So the sha256 names the archive and the host's stamp, and an unchanged wheelhouse and inventory
cost the host one stat. The modes are the install's: the inventory root only (it may hold secrets: files
0600, directories 0700), the wheels 0644.

* members(wheels, inventory, python): the sorted members, or ArchiveError saying what is missing.
* write_archive(members, out): the tar.gz written to ``out`` (any object with write()).
* build_archive(wheels, inventory, python, directory): {name, digest, path, wheels, inventory}; the archive is
  written 0600 in ``directory``, or only its digest computed where ``directory`` is None (check mode).
* build_for_hosts(hosts, directory): {host: that}, one build per distinct wheelhouse and inventory.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import gzip
import hashlib
import os
import re
import tarfile
import tempfile

WHEELS = "wheels"
INVENTORY = "inventory"
PIP_WHEEL = re.compile(r"pip-[0-9]")  # as the role picks pip's own wheel
FILE_MODE, DIRECTORY_MODE = 0o644, 0o755
SECRET_FILE_MODE, SECRET_DIRECTORY_MODE = 0o600, 0o700
# zlib's default: the wheels are zip files already, so more effort gains nothing but time.
COMPRESSLEVEL = 6
GUIDE = "docs/pull-mode.md"

Member = collections.namedtuple("Member", "name source mode")  # source None: a directory


class ArchiveError(Exception):
    """An input the archive cannot be built from; the message says what to do."""


def wheel_members(directory, python):
    """``wheels/`` and every *.whl file of ``directory`` (links followed), which must hold pip's own wheel."""
    if not os.path.isdir(directory):
        raise ArchiveError(
            "the wheelhouse has no directory %s for Python %s: download the wheels for Python %s into it"
            " (pip download --python-version %s, %s) or point pull_wheelhouse at the directory that has a"
            " %s/ subdirectory" % (directory, python, python, python, GUIDE, python))
    names = sorted(name for name in os.listdir(directory)
                   if name.endswith(".whl") and os.path.isfile(os.path.join(directory, name)))
    if not any(PIP_WHEEL.match(name) for name in names):
        raise ArchiveError(
            "%s holds %s: it needs the wheels of ansible-core, ansible-runner, rocm-fleet, their dependencies"
            " and pip's own wheel, which installs them (%s)"
            % (directory, "%d wheels but none of pip" % len(names) if names else "no wheel (*.whl)", GUIDE))
    return [Member(WHEELS, None, DIRECTORY_MODE)] + [
        Member("%s/%s" % (WHEELS, name), os.path.join(directory, name), FILE_MODE) for name in names]


def _inventory_tree(path, name, ancestors):
    """The members of the inventory directory ``path`` below ``name``; links are followed, loops refused."""
    real = os.path.realpath(path)
    if real in ancestors:
        raise ArchiveError("the inventory's %s links back to %s, a loop: replace the link by the files it"
                           " should hold" % (path, real))
    found = [Member(name, None, SECRET_DIRECTORY_MODE)]
    for entry in sorted(os.listdir(path)):
        source, member = os.path.join(path, entry), "%s/%s" % (name, entry)
        if os.path.isdir(source):
            found.extend(_inventory_tree(source, member, ancestors | {real}))
        elif os.path.isfile(source):
            found.append(Member(member, source, SECRET_FILE_MODE))
        else:
            raise ArchiveError("the inventory's %s is neither a file nor a directory (a broken link?): remove"
                               " it or make it one" % source)
    return found


def inventory_members(source):
    """``inventory`` as a file, or ``inventory/`` and its tree; none for an empty ``source`` (git mode)."""
    if not source:
        return []
    if os.path.isfile(source):
        return [Member(INVENTORY, source, SECRET_FILE_MODE)]
    if os.path.isdir(source):
        return _inventory_tree(source, INVENTORY, frozenset())
    raise ArchiveError("the inventory %s is neither a file nor a directory: set pull_inventory_source to the"
                       " site's inventory on the controller (%s)" % (source, GUIDE))


def members(wheels, inventory, python):
    """Every member of the archive, parents before their children and in name order within a directory."""
    return sorted(wheel_members(wheels, python) + inventory_members(inventory),
                  key=lambda member: member.name.split("/"))


def _tar_info(member, size=0):
    info = tarfile.TarInfo(member.name)
    info.type = tarfile.DIRTYPE if member.source is None else tarfile.REGTYPE
    info.mode, info.size, info.mtime = member.mode, size, 0
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def write_archive(archive_members, out):
    """The tar.gz of ``archive_members`` written to ``out``, the same bytes for the same members and contents."""
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, compresslevel=COMPRESSLEVEL, mtime=0) as compressed, \
            tarfile.open(fileobj=compressed, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for member in archive_members:
            if member.source is None:
                tar.addfile(_tar_info(member))
                continue
            with open(member.source, "rb") as source:
                tar.addfile(_tar_info(member, os.fstat(source.fileno()).st_size), source)


class _Digest:
    """What is written, hashed on the way to ``out`` (None: hashed only)."""

    def __init__(self, out=None):
        self.sha256 = hashlib.sha256()
        self.out = out

    def write(self, data):
        self.sha256.update(data)
        if self.out is not None:
            self.out.write(data)
        return len(data)

    def flush(self):
        if self.out is not None:
            self.out.flush()


def archive_name(digest):
    return "rocm-fleet-pull-%s.tar.gz" % digest


def build_archive(wheels, inventory, python, directory=None):
    """The archive of ``wheels`` (a wheelhouse's directory for ``python``) and ``inventory`` ('' for none),
    written 0600 into ``directory`` under its digest's name, or, where ``directory`` is None, its digest only."""
    archive_members = members(wheels, inventory, python)
    path = None
    if directory is None:
        digest = _Digest()
        write_archive(archive_members, digest)
    else:
        descriptor, partial = tempfile.mkstemp(prefix=".partial-", dir=directory)  # 0600
        try:
            with os.fdopen(descriptor, "wb") as out:
                digest = _Digest(out)
                write_archive(archive_members, digest)
            path = os.path.join(directory, archive_name(digest.sha256.hexdigest()))
            os.replace(partial, path)
        except BaseException:
            if os.path.exists(partial):
                os.unlink(partial)
            raise
    kind = "" if not inventory else "file" if os.path.isfile(inventory) else "directory"
    return {
        "name": archive_name(digest.sha256.hexdigest()),
        "digest": digest.sha256.hexdigest(),
        "path": path,
        "python": python,
        "wheels": [member.name.split("/", 1)[1] for member in archive_members
                   if member.name.startswith(WHEELS + "/")],
        "inventory": kind,
    }


def build_for_hosts(hosts, directory=None):
    """{host: archive} for ``hosts`` ([{host, python, wheels, inventory}]): hosts with the same wheelhouse
    directory and inventory share one build. An input that fails names its hosts and what to do."""
    groups = collections.OrderedDict()
    for entry in hosts:
        key = (entry["python"], entry["wheels"], entry.get("inventory") or "")
        groups.setdefault(key, []).append(entry["host"])
    archives = {}
    for (python, wheels, inventory), names in groups.items():
        try:
            archive = build_archive(wheels, inventory, python, directory)
        except ArchiveError as error:
            raise ArchiveError("host%s %s (Python %s): %s" % (
                "s" if len(names) > 1 else "", ", ".join(names), python, error)) from error
        except (OSError, tarfile.TarError) as error:
            raise ArchiveError("host%s %s (Python %s): the archive of %s%s could not be built: %s" % (
                "s" if len(names) > 1 else "", ", ".join(names), python, wheels,
                " and %s" % inventory if inventory else "", error)) from error
        archives.update((name, archive) for name in names)
    return archives
