"""Name and key formats (k8s.io/apimachinery pkg/api/validate/content, pkg/util/validation).

Each ``is_*`` returns the upstream messages for a bad value and ``[]`` for a good one.
"""

from __future__ import annotations

import re

_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_SUBDOMAIN = _LABEL + "(\\." + _LABEL + ")*"
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1035 = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
    "start with an alphabetic character, and end with an alphanumeric character"
)
_KEY_NAME = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_KEY_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_CONFIG_KEY = "[-._a-zA-Z0-9]+"
_CONFIG_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
_C_IDENT = "[A-Za-z_][A-Za-z0-9_]*"
_PERCENT = "[0-9]+%"


def _full(pattern: str) -> re.Pattern[str]:
    return re.compile("^(?:" + pattern + ")$")


_RE = {p: _full(p) for p in (_LABEL, _SUBDOMAIN, _DNS1035, _KEY_NAME, _CONFIG_KEY, _C_IDENT, _PERCENT)}


def max_len(n: int) -> str:
    """``MaxLenError``."""
    return f"must be no more than {n} bytes"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """``RegexError``: the message, examples and the regex."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _size(value: str) -> int:
    return len(value.encode("utf-8"))


def is_dns1123_label(value: str) -> list[str]:
    """``IsDNS1123Label``."""
    errs = [max_len(63)] if _size(value) > 63 else []
    if not _RE[_LABEL].match(value):
        if _RE[_SUBDOMAIN].match(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_LABEL_MSG, _LABEL, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    """``IsDNS1123Subdomain``."""
    errs = [max_len(253)] if _size(value) > 253 else []
    if not _RE[_SUBDOMAIN].match(value):
        errs.append(regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN, "example.com"))
    return errs


def is_dns1035_label(value: str) -> list[str]:
    """``IsDNS1035Label``."""
    errs = [max_len(63)] if _size(value) > 63 else []
    if not _RE[_DNS1035].match(value):
        errs.append(regex_error(_DNS1035_MSG, _DNS1035, "my-name", "abc-123"))
    return errs


def is_qualified_name(value: str) -> list[str]:
    """``IsQualifiedName`` / ``IsLabelKey``: ``[prefix/]name``."""
    parts = value.split("/")
    errs: list[str] = []
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return [
            "a valid label key "
            + regex_error(_KEY_MSG, _KEY_NAME, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif _size(name) > 63:
        errs.append("name part " + max_len(63))
    if not _RE[_KEY_NAME].match(name):
        errs.append("name part " + regex_error(_KEY_MSG, _KEY_NAME, "MyName", "my.name", "123-abc"))
    return errs


def is_label_value(value: str) -> list[str]:
    """``IsValidLabelValue``."""
    errs = [max_len(63)] if _size(value) > 63 else []
    if value and not _RE[_KEY_NAME].match(value):
        errs.append(regex_error(_VALUE_MSG, "(" + _KEY_NAME + ")?", "MyValue", "my_value", "12345"))
    return errs


def _chdir(value: str) -> list[str]:
    if value == ".":
        return ["must not be '.'"]
    if value == "..":
        return ["must not be '..'"]
    if value.startswith(".."):
        return ["must not start with '..'"]
    return []


def is_config_map_key(value: str) -> list[str]:
    """``IsConfigMapKey`` (ConfigMap and Secret data keys, key selectors)."""
    errs = [max_len(253)] if _size(value) > 253 else []
    if not _RE[_CONFIG_KEY].match(value):
        errs.append(regex_error(_CONFIG_KEY_MSG, _CONFIG_KEY, "key.name", "KEY_NAME", "key-name"))
    return errs + _chdir(value)


def is_relaxed_env_var_name(value: str) -> list[str]:
    """``IsRelaxedEnvVarName`` (RelaxedEnvironmentVariableValidation is on by default since 1.32)."""
    errs = ["environment variable name must be non-empty"] if not value else []
    if any(ord(c) > 126 or ord(c) < 32 or c == "=" for c in value):
        errs.append(
            "a valid environment variable name must consist only of printable ASCII characters other than '='"
        )
    return errs


def is_port_name(value: str) -> list[str]:
    """``IsValidPortName`` (IANA_SVC_NAME)."""
    errs = [max_len(15)] if len(value) > 15 else []
    if not re.fullmatch(r"[-a-z0-9]+", value):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search(r"[a-z]", value):
        errs.append("must contain at least one letter (a-z)")
    if "--" in value:
        errs.append("must not contain consecutive hyphens")
    if value and (value[0] == "-" or value[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def is_port_number(port: int) -> list[str]:
    """``IsValidPortNum``."""
    return [] if 1 <= port <= 65535 else ["must be between 1 and 65535, inclusive"]


def is_percent(value: str) -> list[str]:
    """``IsValidPercent``."""
    if _RE[_PERCENT].match(value):
        return []
    return [
        regex_error(
            "a valid percent string must be a numeric string followed by an ending '%'", _PERCENT, "1%", "93%"
        )
    ]


def is_path_segment_name(value: str) -> list[str]:
    """``IsPathSegmentName``: what a custom resource's name must avoid."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


def name_is_dns_subdomain(value: str, prefix: bool) -> list[str]:
    """``NameIsDNSSubdomain``: a generateName prefix may end in ``-``."""
    return is_dns1123_subdomain(value + "a" if prefix else value)


def name_is_dns_label(value: str, prefix: bool) -> list[str]:
    """``NameIsDNSLabel``."""
    return is_dns1123_label(value + "a" if prefix else value)


def name_is_dns1035_label(value: str, prefix: bool) -> list[str]:
    """``NameIsDNS1035Label`` (Service names)."""
    return is_dns1035_label(value + "a" if prefix else value)
