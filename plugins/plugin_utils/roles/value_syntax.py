# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What each file the roles write accepts as a value, and which inventory strings break out of it.

Every string a role writes into a file that root or a service reads (modprobe.d,
sysctl.d, the GRUB drop-in, systemd drop-ins, profile.d, ld.so.conf.d, udev
rules, apt sources and preferences, dnf and zypper repository files,
adduser.conf, modulefiles) is declared per option in the role's
meta/value_syntax.yml with one of the SYNTAXES below; role_variables checks the
values by it before any change. docs/value-syntax.md says per file why a value
is refused rather than escaped.

Pure: declared_problems(name, value, declaration) walks a value by its
declaration; unchecked_options(options, declarations) walks a role's argument
spec and names every string option that has no declaration, so a new option
cannot be forgotten.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from collections.abc import Mapping

# The punctuation of kernel parameters and module options (0xffffffff, 10000,10000, 0000:04:00.0,1, a=b/c).
_WORD_PUNCTUATION = "_.,:=/+@-"
_WORD = "A-Za-z0-9" + _WORD_PUNCTUATION
# RFC 3986 less what a repository file or apt reads as something else: blanks, quotes, $ (dnf variables), ;.
_URL = "A-Za-z0-9._~:/?#@!&+,=%\\[\\]-"


class Syntax:
    """One file's rule for a value: the characters it takes (a regex class or a predicate), its limits."""

    def __init__(self, name, where, max_length, allowed=None, printable=False, refused="", shape=None,
                 shape_hint="", empty=True):
        self.name = name
        self.where = where
        self.max_length = max_length
        self._allowed = re.compile("[%s]" % allowed) if allowed else None
        self._printable = printable
        self._refused = refused
        self._shape = re.compile(shape) if shape else None
        self.shape_hint = shape_hint
        self.empty = empty

    def allows(self, character):
        if character in self._refused:
            return False
        if self._allowed is not None:
            return bool(self._allowed.fullmatch(character))
        # Printable text: no control character (newline, NUL, escape...), tab and blank allowed.
        return character == "\t" or character.isprintable() if self._printable else True

    def problems(self, text):
        """What is wrong with ``text``: too long, each refused character once, the wrong shape; [] if nothing."""
        reasons = []
        if len(text) > self.max_length:
            reasons.append("is %d characters long (at most %d)" % (len(text), self.max_length))
        refused = [character for character in dict.fromkeys(text) if not self.allows(character)]
        if refused:
            shown = ", ".join(shown_character(character) for character in refused[:SHOWN_CHARACTERS])
            more = len(refused) - SHOWN_CHARACTERS
            reasons.append("contains %s%s" % (shown, " and %d other characters" % more if more > 0 else ""))
        elif not text and not self.empty:
            reasons.append("is empty")
        elif text and self._shape is not None and not self._shape.fullmatch(text):
            reasons.append("is not %s" % self.shape_hint)
        return reasons


SYNTAXES = {
    syntax.name: syntax for syntax in (
        # The GRUB drop-in is shell (GRUB_CMDLINE_LINUX_DEFAULT="... {params}"); grubby and the kernel split at blanks.
        Syntax("kernel_param",
               "a kernel parameter in GRUB_CMDLINE_LINUX_DEFAULT (letters, digits, %s)" % _WORD_PUNCTUATION, 1024,
               allowed=_WORD, empty=False),
        # "options <module> <param>=<value>": kmod splits at blanks, the kernel reads quotes.
        Syntax("modprobe_module", "a module name in modprobe.d (letters, digits, _ and -)", 55, allowed="A-Za-z0-9_-",
               empty=False),
        Syntax("modprobe_param", "a module parameter name in modprobe.d (letters, digits, _ and -)", 64,
               allowed="A-Za-z0-9_-", empty=False),
        Syntax("modprobe_value", "a module option value in modprobe.d (letters, digits, %s)" % _WORD_PUNCTUATION, 1024,
               allowed=_WORD),
        # ansible.posix.sysctl writes "key=value" lines and runs "sysctl -w key=value" split like a shell line.
        Syntax("sysctl_key", "a sysctl name (letters, digits, _ . / : @ + - and *)", 255,
               allowed="A-Za-z0-9_./:@+*-", shape=r"[^-].*", shape_hint="a name that starts without -", empty=False),
        Syntax("sysctl_value", "a sysctl.d value (one line, without quotes or backslashes)", 4096, printable=True,
               refused="\"'\\", shape=r"\S(.*\S)?", shape_hint="a value without blanks at its ends"),
        # rocm.sh: export NAME=<shell-quoted value>; the systemd drop-in: "NAME=value" (C escapes, no expansion).
        Syntax("env_name", "an environment variable name (a shell identifier)", 255, allowed="A-Za-z0-9_",
               shape=r"[A-Za-z_][A-Za-z0-9_]*", shape_hint="a name that starts with a letter or _", empty=False),
        Syntax("env_value", "an environment value in profile.d and the systemd drop-in (one line, without \" or \\)",
               4096, printable=True, refused="\"\\"),
        # Written where ROCM_PATH, ld.so.conf.d (a line each, # starts a comment) and file paths go.
        Syntax("absolute_path", "an absolute path (letters, digits, _ . , : + @ % ~ / -)", 4096,
               allowed="A-Za-z0-9_.,:+@%~/-", shape=r"/.*", shape_hint="an absolute path", empty=False),
        # deb822 URIs, dnf baseurl and zypper repository files: one field, no blanks, no dnf $variables.
        Syntax("url", "a repository URL (RFC 3986 characters without blanks, quotes, $, ; ( ) or *; "
                      "percent-encode others)", 2048, allowed=_URL,
               shape=r"[A-Za-z][A-Za-z0-9+.-]*://.+", shape_hint="a URL like https://host:port/path"),
        Syntax("apt_suite", "an apt suite (letters, digits, _ . / -)", 255, allowed="A-Za-z0-9_./-"),
        Syntax("apt_pin", "an apt_preferences Pin: release expression (letters, digits, blanks, = , . _ : / + ~ * -)",
               255, allowed="A-Za-z0-9=,._:/+~* -"),
        Syntax("release", "a release number in repository URLs, package names and modulefiles (digits and .)", 32,
               allowed="0-9."),
        Syntax("kernel_release", "a kernel release in package names and GRUB entries (letters, digits, . _ + ~ -)", 128,
               allowed="A-Za-z0-9._+~-"),
        Syntax("fingerprint", "an OpenPGP fingerprint (hex digits, blanks, 0x)", 128, allowed="0-9A-Fa-fxX "),
        # The armored key goes to a keyring file only after its fingerprint is checked; gpgv reads it.
        Syntax("armored_key", "an ASCII-armored OpenPGP key (printable ASCII lines)", 65536,
               allowed="\x20-\x7e\n\r\t"),
        # /etc/group, adduser.conf EXTRA_GROUPS="a b", udev GROUP:="..." and runuser -u take POSIX names.
        Syntax("account_name", "a user or group name (letters, digits, _ . -, starting with a letter or _)", 32,
               allowed="A-Za-z0-9_.-", shape=r"[A-Za-z_].*", shape_hint="a name that starts with a letter or _",
               empty=False),
        # udev MODE:="..."
        Syntax("file_mode", "a file mode in a udev rule (octal digits)", 4, allowed="0-7", empty=False),
        Syntax("package_name", "a package name for apt or dnf (letters, digits, + . _ : ~ = * -)", 255,
               allowed="A-Za-z0-9+._:~=*-", shape=r"[A-Za-z0-9].*", shape_hint="a name that starts with a letter"),
        # Pull mode's unit (rocm-fleet-pull.service): ansible-pull and drift arguments on ExecStart lines, which
        # systemd splits at blanks and expands $ and % in.
        Syntax("host_name", "a host name on a unit's command line (letters, digits, _ . -)", 253,
               allowed="A-Za-z0-9_.-", shape=r"[A-Za-z0-9_].*", shape_hint="a name that starts with a letter or digit",
               empty=False),
        Syntax("git_ref", "a git branch or tag on a unit's command line (letters, digits, _ . / -)", 255,
               allowed="A-Za-z0-9_./-", shape=r"[^-].*", shape_hint="a name that starts without -", empty=False),
        Syntax("repo_path", "a path inside the site's repository on a unit's command line (letters, digits, _ . / -)",
               4096, allowed="A-Za-z0-9_./-", shape=r"[^-/].*", shape_hint="a relative path that starts without -",
               empty=False),
        # amdgpu's current_compute_partition and current_memory_partition (SPX, NPS1...).
        Syntax("partition_mode", "a partition mode written to amdgpu's sysfs (letters and digits)", 16,
               allowed="A-Za-z0-9"),
    )
}

# Distinct refused characters a message lists.
SHOWN_CHARACTERS = 8
NAMES = {"\n": "newline", "\r": "carriage return", "\t": "tab", "\x00": "NUL", " ": "blank", "\"": "double quote",
         "'": "single quote", "\\": "backslash", "`": "backtick", "$": "dollar sign", ";": "semicolon"}
WHAT_TO_DO = "change the value in the inventory (docs/value-syntax.md says what each file takes and why)"


def shown_character(character):
    """'\\n' (newline): the character escaped as Python writes it, and its name where it has one."""
    text = repr(character)
    return "%s (%s)" % (text, NAMES[character]) if character in NAMES else text


def syntax_problem(path, value, syntax_name):
    """The message for ``value`` at ``path`` against one syntax, or None. Scalars count as their text."""
    syntax = SYNTAXES[syntax_name]
    if isinstance(value, (str, int, float)):
        text = str(value)
    else:
        return "%s must be a string, got %s" % (path, type(value).__name__)
    reasons = syntax.problems(text)
    if not reasons:
        return None
    return "%s %s, but must be %s; %s" % (path, " and ".join(reasons), syntax.where, WHAT_TO_DO)


def declared_problems(path, value, declaration, listed=True):
    """Messages for every string in ``value`` that its declaration's syntax refuses, each naming its full path.

    A declaration is a syntax name (for a string, or each element of a list), {keys: D, values: D} for a
    mapping, {options: {name: D}} for a list of mappings or a mapping with known fields, or {not_written: why}.
    Only an option itself may be a list (``listed``): a list inside a mapping or a list would be written as
    Python's repr, quotes and all.
    """
    if value is None or (isinstance(declaration, Mapping) and "not_written" in declaration):
        return []
    if isinstance(value, (list, tuple)):
        if not listed:
            return ["%s must be a string or a mapping, got list" % path]
        return [problem for index, element in enumerate(value)
                for problem in declared_problems("%s[%d]" % (path, index), element, declaration, listed=False)]
    if isinstance(declaration, str):
        problem = syntax_problem(path, value, declaration)
        return [problem] if problem else []
    if not isinstance(value, Mapping):
        return ["%s must be a mapping, got %s" % (path, type(value).__name__)]
    problems = []
    if "options" in declaration:
        for name, field in declaration["options"].items():
            if name in value:
                problems.extend(declared_problems("%s.%s" % (path, name), value[name], field))
        return problems
    for key in value:
        if "keys" in declaration:
            key_problem = syntax_problem("%s (the key %s)" % (path, _shown_key(key)), key, declaration["keys"])
            if key_problem:
                problems.append(key_problem)
                continue
        problems.extend(declared_problems("%s.%s" % (path, key), value[key], declaration.get("values"), listed=False))
    return problems


def _shown_key(key):
    text = repr(key)
    return text if len(text) <= 40 else text[:37] + "..."


def declaration_problems(name, declaration):
    """What is wrong with one option's declaration itself (an unknown syntax, an unknown field)."""
    if isinstance(declaration, str):
        return [] if declaration in SYNTAXES else ["%s: unknown syntax %r" % (name, declaration)]
    if not isinstance(declaration, Mapping):
        return ["%s: a declaration is a syntax name or a mapping" % name]
    if "not_written" in declaration:
        reason = declaration["not_written"]
        return [] if isinstance(reason, str) and reason.strip() else ["%s: not_written needs the reason" % name]
    fields = set(declaration)
    if fields <= {"keys", "values"} and fields:
        return [problem for field in sorted(fields)
                for problem in declaration_problems("%s.%s" % (name, field), declaration[field])]
    if fields == {"options"} and isinstance(declaration["options"], Mapping):
        return [problem for field, inner in declaration["options"].items()
                for problem in declaration_problems("%s.%s" % (name, field), inner)]
    return ["%s: unknown declaration fields %s" % (name, sorted(fields))]


# Argument spec types whose values are never strings; a str option with choices is a closed set.
_NOT_STRINGS = ("bool", "int", "float")


def unchecked_options(options, declarations, prefix=""):
    """Names (a.b for suboptions) of string-carrying options of an argument spec that have no declaration.

    A string option (the default type), path, raw, dict, or list of those needs a syntax or
    {not_written: why}; bool, int, float and str with choices carry no free text. A list or
    dict with suboptions needs {options: ...} covering each of its string suboptions.
    """
    missing = []
    for name, spec in sorted((options or {}).items()):
        spec = spec or {}
        path = prefix + name
        declaration = (declarations or {}).get(name)
        kind = spec.get("type", "str")
        element = spec.get("elements", "str") if kind == "list" else kind
        if element in _NOT_STRINGS or (element in ("str", "path") and spec.get("choices")):
            continue
        if declaration is None:
            missing.append(path)
        elif spec.get("options") and not (isinstance(declaration, Mapping) and "not_written" in declaration):
            inner = declaration.get("options") if isinstance(declaration, Mapping) else None
            if inner is None:
                missing.append(path)
            else:
                missing.extend(unchecked_options(spec["options"], inner, path + "."))
    return missing
