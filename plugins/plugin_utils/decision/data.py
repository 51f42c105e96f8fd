# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU catalog, support matrix and amdgpu driver lines preflight decides with, read on the controller.

The built-in data stays in roles/preflight/vars/ (gpu_catalog.yml,
support_matrix.yml, amdgpu_drivers.yml), where reviewers and tests read it; it is parsed once per
process and combined with the inventory's extensions on every call.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import os

import yaml

from ansible.errors import AnsibleError
from ansible.utils.vars import merge_hash

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.specs import ROLES_DIR, SAFE_LOADER

# (file under roles/preflight/vars, its variable, the inventory variable that extends it)
DATA_FILES = (
    ("gpu_catalog.yml", "preflight_gpu_catalog_builtin", "preflight_gpu_catalog_extra"),
    ("support_matrix.yml", "preflight_support_matrix_builtin", "preflight_support_matrix_extra"),
    ("amdgpu_drivers.yml", "preflight_amdgpu_drivers_builtin", "preflight_amdgpu_drivers_extra"),
)

_builtin = {}  # variable name -> parsed data; read once per process, never handed out


class RocmDataError(AnsibleError):
    """The built-in data cannot be read, or an extension is not a mapping; the message names which."""


def data_file(name):
    return os.path.join(ROLES_DIR, "preflight", "vars", name)


def _read(name, variable):
    path = data_file(name)
    try:
        with open(path) as handle:
            document = yaml.load(handle, Loader=SAFE_LOADER)
    except (OSError, yaml.YAMLError) as error:
        raise RocmDataError("cannot read the preflight data file %s: %s" % (path, error)) from error
    data = document.get(variable) if isinstance(document, dict) else None
    if not isinstance(data, dict):
        raise RocmDataError("the preflight data file %s defines no mapping %s" % (path, variable))
    return data


def builtin(variable):
    """The parsed built-in data of ``variable`` (the cache itself: callers must not change it)."""
    if variable not in _builtin:
        name = next(name for name, known, _unused in DATA_FILES if known == variable)
        _builtin[variable] = _read(name, variable)
    return _builtin[variable]


def _combined(variable, extra_name, extra):
    if extra in (None, ""):
        extra = {}
    if not isinstance(extra, dict):
        raise RocmDataError("%s must be a mapping, got %s" % (extra_name, type(extra).__name__))
    # As Jinja's combine(recursive=true); the copy keeps callers from changing the cache (or the extras).
    return copy.deepcopy(merge_hash(builtin(variable), extra, recursive=True))


def preflight_data(catalog_extra=None, matrix_extra=None, drivers_extra=None):
    """(catalog, matrix, drivers): the built-in data combined with preflight_*_extra, fresh copies on every call."""
    extras = (catalog_extra, matrix_extra, drivers_extra)
    pairs = zip(DATA_FILES, extras, strict=True)
    return tuple(_combined(variable, name, extra) for (_unused, variable, name), extra in pairs)


FIRMWARE_FILE = ("gpu_firmware.yml", "__preflight_gpu_firmware")


def firmware_minimums():
    """{class: {FW_ID: {min, source, ...}}} of roles/preflight/vars/gpu_firmware.yml, a fresh copy per call."""
    name, variable = FIRMWARE_FILE
    if variable not in _builtin:
        _builtin[variable] = _read(name, variable)
    return copy.deepcopy(_builtin[variable])


STREAMS_FILE = "release_streams.yml"
STREAM_TABLES = (
    ("preflight_release_streams_builtin", "preflight_release_streams_extra"),
    ("preflight_repository_keys_builtin", "preflight_repository_keys_extra"),
)


def release_streams(streams_extra=None, keys_extra=None):
    """(streams, keys) of roles/preflight/vars/release_streams.yml combined with their *_extra, fresh copies."""
    combined = []
    for (variable, extra_name), extra in zip(STREAM_TABLES, (streams_extra, keys_extra), strict=True):
        if variable not in _builtin:
            _builtin[variable] = _read(STREAMS_FILE, variable)
        combined.append(_combined(variable, extra_name, extra))
    return tuple(combined)
