# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Keep the compiled code of this collection's module_utils on the host between module runs.

An AnsiballZ payload carries its module_utils as source in a zip, and Python compiles what it
imports from a zip on every run (zipimport reads no cache and writes none). node_compliance
imports about 390 KB of this collection's source: compiling it cost a lab host more CPU than the
nightly checks themselves. install() puts a finder before the others that, for this collection's
module_utils only, keeps each module's code object in a directory only root can write, under the
module's name and the interpreter's cache tag, headed by a digest of the source and the bytecode
magic: a changed module or another Python compiles again and replaces it (PEP 552's idea).

It is a cache, never the truth: anything it cannot read, trust or write means the plain compile,
and a host without it behaves the same, only slower.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import marshal
import os
import stat
import sys

PREFIX = "ansible_collections.rocm_fleet.core.plugins.module_utils."
DEFAULT_DIRECTORY = "/var/cache/rocm-fleet/bytecode"
DIGEST_BYTES = 32


def trusted(status, uid):
    """True for a directory or regular file owned by ``uid`` that no group or other user may write."""
    kind = stat.S_IFMT(status.st_mode)
    return (kind in (stat.S_IFDIR, stat.S_IFREG) and status.st_uid == uid
            and not status.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


def header(source, magic):
    """What a kept module starts with: sha256 of the bytecode magic and the source."""
    return hashlib.sha256(magic + source).digest()


class CachingLoader:
    """Wraps the zip's loader: the module's code from the cache, else compiled and kept."""

    def __init__(self, loader, directory, magic):
        self.loader, self.directory, self.magic = loader, directory, magic

    def __getattr__(self, name):  # get_source, get_filename, ...: the zip's (tracebacks read the source)
        return getattr(self.loader, name)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        exec(self.code(module.__spec__), module.__dict__)

    def path(self, name):
        return os.path.join(self.directory, "%s.%s.pyc" % (name[len(PREFIX):], sys.implementation.cache_tag))

    def code(self, spec):
        source = self.loader.get_data(spec.origin)
        expected = header(source, self.magic)
        path = self.path(spec.name)
        kept = read_kept(path, expected)
        if kept is not None:
            return kept
        code = compile(source, spec.origin, "exec", dont_inherit=True)
        keep(path, expected + marshal.dumps(code))
        return code


def read_kept(path, expected):
    """The code object kept at ``path`` when its header is ``expected`` and the file can be trusted; else None."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        with os.fdopen(descriptor, "rb") as handle:
            if not trusted(os.fstat(handle.fileno()), os.geteuid()):
                return None
            data = handle.read()
        if data[:DIGEST_BYTES] != expected:
            return None
        return marshal.loads(data[DIGEST_BYTES:])
    except (OSError, ValueError, EOFError, TypeError):
        return None


def keep(path, data):
    """Write ``data`` to ``path`` whole or not at all (a temporary file renamed over it)."""
    temporary = "%s.%d.tmp" % (path, os.getpid())
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.rename(temporary, path)
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass


class CachingFinder:
    """Finds this collection's module_utils as the other finders do, then loads them through CachingLoader.

    Every package and module below module_utils, at any depth: a kept file is named by the dotted path
    below it (``gpu.amd_smi.report``), so two modules of the same name in two packages never meet.
    """

    def __init__(self, directory, magic):
        self.directory, self.magic = directory, magic

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(PREFIX):
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or not spec.origin or not hasattr(spec.loader, "get_data"):
            return spec  # not found, or a loader that cannot give the bytes
        spec.loader = CachingLoader(spec.loader, self.directory, self.magic)
        return spec


def usable_directory(directory, uid):
    """``directory``, made if missing (mode 0700), when it and its parent can be trusted; else None."""
    try:
        parent = os.path.dirname(directory.rstrip("/"))
        if not os.path.isdir(parent):
            os.makedirs(parent, 0o755)
        parent_status = os.lstat(parent)
        if not (stat.S_ISDIR(parent_status.st_mode) and parent_status.st_uid in (0, uid)
                and not parent_status.st_mode & (stat.S_IWGRP | stat.S_IWOTH)):
            return None
        if not os.path.lexists(directory):
            os.mkdir(directory, 0o700)
        status = os.lstat(directory)
        return directory if stat.S_ISDIR(status.st_mode) and trusted(status, uid) else None
    except OSError:
        return None


def install(directory=DEFAULT_DIRECTORY):
    """Put the caching finder first on sys.meta_path when ``directory`` can be trusted; True when it did.

    Only as root: a cache another account could write would be code that root runs.
    """
    try:
        import importlib.util

        magic = importlib.util.MAGIC_NUMBER
        if os.geteuid() != 0 or any(isinstance(finder, CachingFinder) for finder in sys.meta_path):
            return False
        usable = usable_directory(directory, os.geteuid())
        if usable is None:
            return False
        sys.meta_path.insert(0, CachingFinder(usable, magic))
        return True
    except Exception:  # a cache must never cost the module its run
        return False
