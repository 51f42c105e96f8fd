"""Values stay values: one bad value for every written role option, and what the operator must be told about it.

The lab test (tests/integration/lab/test_value_injection.py) feeds these values to site.yml and reads preflight's
message; the unit test (tests/unit/plugins/plugin_utils/roles/test_value_injection_messages.py) gives them to the
pure check preflight runs. Both judge the message by ``assert_every_value_refused``, whose expectations are written
here by hand: the problem paths come from walking the value this module built (not from the code under test), and
the problems of the issue's variables are literal, as the operator reads them.
"""

from __future__ import annotations

import re

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.specs import (
    ROLES_DIR,
    read_argument_specs,
    read_value_syntax,
)
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.variables import declared_options

# Every bad kind of the issue in one value: a newline, a double quote, $(), backticks, ;, NUL, and over-long
# (longer than the longest value any syntax takes, the 64 KiB armored key).
BAD = "x\n\"$(id)`id`;\x00" + "y" * 70000
BAD_LENGTH = 70014
# BAD as a mapping key in a message: its repr, cut after 37 characters.
BAD_KEY = "'x\\n\"$(id)`id`;\\x00" + "y" * 18 + "..."
# What the operator is told to do, after every refused value.
WHAT_TO_DO = "change the value in the inventory (docs/value-syntax.md says what each file takes and why)"
# BAD's refused characters as a message lists them (escaped, named), in order of appearance:
# by a file that takes words, names or paths (no blank, quote or shell character) ...
EVERY_BAD = ("'\\n' (newline), '\"' (double quote), '$' (dollar sign), '(', ')', '`' (backtick), ';' (semicolon), "
             "'\\x00' (NUL)")
# ... and by one-line files no shell reads (profile.d quotes the value; systemd and sysctl.d expand nothing).
ONE_LINE = "'\\n' (newline), '\"' (double quote), '\\x00' (NUL)"
# A udev MODE takes octal digits only: the first 8 refused characters, then how many more.
NOT_OCTAL = "'x', '\\n' (newline), '\"' (double quote), '$' (dollar sign), '(', 'i', 'd', ')' and 4 other characters"


def _refused(path: str, at_most: int, characters: str, must_be: str) -> str:
    return (f"{path} is {BAD_LENGTH} characters long (at most {at_most}) and contains {characters}, "
            f"but must be {must_be}; {WHAT_TO_DO}")


# The problems of the issue's variables, literally: variable path, length, each refused character, the file's rule.
ISSUE_PROBLEMS = {
    problem.split(f" is {BAD_LENGTH} characters long")[0]: problem for problem in (
        _refused("kernel_boot_params[0]", 1024, EVERY_BAD,
                 "a kernel parameter in GRUB_CMDLINE_LINUX_DEFAULT (letters, digits, _.,:=/+@-)"),
        _refused("kernel_modprobe_options.rocm_fleet_t.rocm_fleet_t", 1024, EVERY_BAD,
                 "a module option value in modprobe.d (letters, digits, _.,:=/+@-)"),
        _refused(f"kernel_modprobe_options.rocm_fleet_t (the key {BAD_KEY})", 64, EVERY_BAD,
                 "a module parameter name in modprobe.d (letters, digits, _ and -)"),
        _refused(f"kernel_modprobe_options (the key {BAD_KEY})", 55, EVERY_BAD,
                 "a module name in modprobe.d (letters, digits, _ and -)"),
        _refused("kernel_sysctls.rocm_fleet_t", 4096, ONE_LINE,
                 "a sysctl.d value (one line, without quotes or backslashes)"),
        _refused(f"kernel_sysctls (the key {BAD_KEY})", 255, EVERY_BAD,
                 "a sysctl name (letters, digits, _ . / : @ + - and *)"),
        _refused("environment_variables.rocm_fleet_t", 4096, ONE_LINE,
                 "an environment value in profile.d and the systemd drop-in (one line, without \" or \\)"),
        _refused(f"environment_variables (the key {BAD_KEY})", 255, EVERY_BAD,
                 "an environment variable name (a shell identifier)"),
        _refused("environment_ld_library_dirs[0]", 4096, EVERY_BAD,
                 "an absolute path (letters, digits, _ . , : + @ % ~ / -)"),
        _refused("access_kfd_mode", 4, NOT_OCTAL, "a file mode in a udev rule (octal digits)"),
        _refused("access_gpu_groups[0]", 32, EVERY_BAD,
                 "a user or group name (letters, digits, _ . -, starting with a letter or _)"),
        _refused(f"repo_mirrors (the key {BAD_KEY})", 2048, EVERY_BAD,
                 "a repository URL (RFC 3986 characters without blanks, quotes, $, ; ( ) or *; percent-encode others)"),
        _refused("repo_mirrors.https://repo.example", 2048, EVERY_BAD,
                 "a repository URL (RFC 3986 characters without blanks, quotes, $, ; ( ) or *; percent-encode others)"),
        _refused("repo_apt_pin_release", 255, EVERY_BAD,
                 "an apt_preferences Pin: release expression (letters, digits, blanks, = , . _ : / + ~ * -)"),
    )
}
ISSUE_VARIABLES = {"kernel_modprobe_options", "kernel_sysctls", "kernel_boot_params", "environment_variables",
                   "environment_ld_library_dirs", "access_kfd_mode", "access_gpu_groups", "repo_mirrors",
                   "repo_apt_pin_release"}


def written_options():
    """[(variable, declaration, spec)] of every option some file gets, from the roles' declarations."""
    specs, syntaxes = read_argument_specs(ROLES_DIR), read_value_syntax(ROLES_DIR)
    options = []
    for role, declarations in sorted(syntaxes.items()):
        spec_options = declared_options(specs[role])
        for name, declaration in sorted(declarations.items()):
            if not (isinstance(declaration, dict) and "not_written" in declaration):
                options.append((name, declaration, spec_options[name]))
    return options


def bad_value(declaration, spec):
    """A value of the option's shape whose every string (and every mapping key) is BAD."""
    if isinstance(declaration, str):
        value = BAD
    elif "not_written" in declaration:
        value = "1"
    elif "options" in declaration:
        value = {field: bad_value(inner, (spec.get("options") or {}).get(field) or {})
                 for field, inner in declaration["options"].items()}
    else:
        value = {good_key(declaration): bad_value(declaration["values"], {}), BAD: good_value(declaration["values"])}
    return [value] if spec.get("type") == "list" else value


# A value each syntax takes, where "1" does not fit it.
GOOD_SAMPLES = {"url": "https://repo.example"}


def good_key(declaration):
    return GOOD_SAMPLES.get(declaration.get("keys"), "rocm_fleet_t")


def good_value(declaration):
    if isinstance(declaration, dict) and "not_written" not in declaration:
        return {}
    return GOOD_SAMPLES.get(declaration, "1") if isinstance(declaration, str) else "1"


def bad_values(options) -> dict:
    return {name: bad_value(declaration, spec) for name, declaration, spec in options}


def bad_paths(path: str, value, declaration) -> list[str]:
    """Where the operator must be told of a BAD string in ``value``: the path of each, as a message names it."""
    if isinstance(declaration, dict) and "not_written" in declaration:
        return []
    if isinstance(value, list):
        return [found for index, element in enumerate(value)
                for found in bad_paths(f"{path}[{index}]", element, declaration)]
    if isinstance(value, str):
        return [path] if value == BAD else []
    found = []
    for key, inner in value.items():
        if key == BAD and "keys" in declaration:
            found.append(f"{path} (the key {BAD_KEY})")  # a refused key: its value is not looked at
        elif "options" in declaration:
            found += bad_paths(f"{path}.{key}", inner, declaration["options"][key])
        else:
            found += bad_paths(f"{path}.{key}", inner, declaration["values"])
    return found


def refusal_problems(message: str, host: str) -> dict[str, str]:
    """{variable path: problem} of a refusal message ("host <host>: <problem>; <problem>...")."""
    prefix = f"host {host}: "
    assert message.startswith(prefix), message[:300]
    # Every problem ends with what to do; the rule of a file may hold "; " itself, so that is what splits them.
    parts = message[len(prefix):].split(WHAT_TO_DO)
    assert parts[-1] == "", f"text after the last problem: {parts[-1][:300]!r}"
    problems = {}
    for index, part in enumerate(parts[:-1]):
        text = (part[2:] if index else part) + WHAT_TO_DO
        assert index == 0 or part.startswith("; "), part[:300]
        path = text.split(f" is {BAD_LENGTH} characters long")[0]
        assert path != text, f"a problem that does not give the value's length: {text[:300]!r}"
        assert path not in problems, f"{path} refused twice"
        problems[path] = text
    return problems


def assert_every_value_refused(message: str, host: str, options, values: dict) -> None:
    """The message names the host, then every BAD string of ``values`` by its path, each once, with its length,
    its refused characters (every syntax refuses NUL) and what to do; the issue's variables word for word."""
    problems = refusal_problems(message, host)
    expected = {path for name, declaration, _spec in options for path in bad_paths(name, values[name], declaration)}
    assert set(ISSUE_PROBLEMS) <= expected, sorted(set(ISSUE_PROBLEMS) - expected)
    assert sorted(problems) == sorted(expected), (
        f"missing {sorted(expected - set(problems))}, unexpected {sorted(set(problems) - expected)}")
    for path, problem in problems.items():
        if path in ISSUE_PROBLEMS:
            assert problem == ISSUE_PROBLEMS[path], (path, problem)
        else:
            length = rf"{re.escape(path)} is {BAD_LENGTH} characters long \(at most \d+\)"
            refused = re.match(length + " and contains (.+), but must be ", problem)
            assert refused, problem
            # Every syntax refuses NUL: it is listed, or past the 8 listed characters and counted.
            assert "'\\x00' (NUL)" in refused[1] or refused[1].endswith(" other characters"), problem
