# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The JSON documents in a GPU tool's output, and the text lines around them.

The tools mix JSON with text on stdout: rocm-smi prints ``WARNING:`` lines before or
after its document, amd-smi prints its group-membership warning first, and ``amd-smi
list --json`` prints the GPU list and then one list per kind of NIC, one document
after the other (ROCm/rocm-systems projects/amdsmi/amdsmi_cli/subcommands/
list_devices.py@1bc8b9e3: list_devices calls list_gpu, then list_ainic). A parser keeps
the documents and reports the text lines as warnings instead of failing on "Extra data".
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import GpuParseError, strip_ansi

_DECODER = json.JSONDecoder()
_OPENERS = ("{", "[")


def json_documents(text):
    """``(documents, notes)``: every JSON document in ``text`` in order, and its other lines.

    The first document must parse (GpuParseError otherwise, naming the line); text after
    it is read as further documents where it opens like one, and as note lines otherwise.
    """
    text = strip_ansi(text)
    lines = text.splitlines(True)
    start, notes = None, []
    offset = 0
    for line in lines:
        if line.strip().startswith(_OPENERS):
            start = offset + line.index(line.strip()[0])
            break
        if line.strip():
            notes.append(line.strip())
        offset += len(line)
    if start is None:
        raise GpuParseError("no JSON document in output", _first(text) or "<empty output>")
    try:
        document, end = _DECODER.raw_decode(text, start)
    except ValueError as error:
        raise GpuParseError("invalid JSON: %s" % error, _line_at(text, start)) from None
    documents = [document]
    _read_rest(text, end, documents, notes)
    return documents, notes


def parse_json_document(text):
    """The first JSON document in ``text`` (text lines around it are skipped)."""
    return json_documents(text)[0][0]


def _read_rest(text, position, documents, notes):
    while position < len(text):
        while position < len(text) and text[position].isspace():
            position += 1
        if position >= len(text):
            return
        if text[position] in _OPENERS:
            try:
                document, position = _DECODER.raw_decode(text, position)
                documents.append(document)
                continue
            except ValueError:
                pass
        end = text.find("\n", position)
        end = len(text) if end < 0 else end
        notes.append(text[position:end].strip())
        position = end


def _line_at(text, position):
    end = text.find("\n", position)
    return text[position : end if end >= 0 else len(text)].strip()


def _first(text):
    return next((line.strip() for line in text.splitlines() if line.strip()), None)
