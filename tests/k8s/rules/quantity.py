"""``resource.Quantity`` (k8s.io/apimachinery ``pkg/api/resource``): parsing and canonical form.

The API server stores quantities canonicalized (``0.5`` → ``500m``, ``1024Mi`` → ``1Gi``), so
a client that compares what it wrote with what it reads must compare quantities, not text.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

PATTERN = r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
_RE = re.compile(PATTERN)
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_BY_EXP = {v: k for k, v in _DECIMAL.items()}


class QuantityError(ValueError):
    """Not a quantity; the message is the server's."""


def parse(text: str | int | float) -> tuple[Decimal, str]:
    """The value and its format (``BinarySI``, ``DecimalSI`` or ``DecimalExponent``)."""
    raw = str(text).strip()
    match = _RE.match(raw)
    if not match:
        raise QuantityError(f"quantities must match the regular expression '{PATTERN}'")
    number, suffix = match.groups()
    try:
        value = Decimal(number)
    except InvalidOperation:
        raise QuantityError(f"quantities must match the regular expression '{PATTERN}'") from None
    if suffix in _BINARY:
        return value * (Decimal(1024) ** _BINARY[suffix]), "BinarySI"
    if suffix in _DECIMAL:
        return value * (Decimal(10) ** _DECIMAL[suffix]), "DecimalSI"
    exp = re.fullmatch(r"[eE]([-+]?[0-9]+)", suffix)
    if exp:
        return value * (Decimal(10) ** int(exp.group(1))), "DecimalExponent"
    raise QuantityError("unable to parse quantity's suffix")


def _decimal(value: Decimal, exponent_form: bool) -> str:
    if value == 0:
        return "0"
    # Round up to nano precision, as the server does, then pick the largest exact suffix.
    nanos = (value * Decimal(10) ** 9).to_integral_value(rounding="ROUND_CEILING")
    exp = -9
    while nanos % 1000 == 0 and exp < 18:
        nanos //= 1000
        exp += 3
    if exponent_form:
        return f"{nanos}" if exp == 0 else f"{nanos}e{exp}"
    return f"{nanos}{_DECIMAL_BY_EXP[exp]}"


def canonical(text: str | int | float) -> str:
    """The form the server stores and returns."""
    value, fmt = parse(text)
    if fmt == "BinarySI" and value == value.to_integral_value() and abs(value) >= 1024:
        whole = int(value)
        power = 0
        while whole % 1024 == 0 and power < 6:
            whole //= 1024
            power += 1
        suffix = {v: k for k, v in _BINARY.items()}.get(power, "")
        return f"{whole}{suffix}"
    return _decimal(value, fmt == "DecimalExponent")


def value(text: str | int | float) -> Decimal:
    """The numeric value."""
    return parse(text)[0]
