# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """The option of every plugin that may start a GPU tool (rocm-smi, amd-smi, rocminfo)."""

    DOCUMENTATION = r"""
options:
  timeout:
    description:
      - Seconds each GPU tool may run before it is killed with its process group.
    type: int
    default: 30
"""
