"""A call's error message is redacted whole before it is shortened, so no part of a secret survives."""

from __future__ import annotations

from clawplane.telemetry import CallRecord, CallSite, CallTelemetry
from clawplane.telemetry.calls import Call

SECRET = "tok-SECRETVALUE-0123456789abcdef"


class Keep:
    """A sink that keeps the records."""

    def __init__(self) -> None:
        self.records: list[CallRecord] = []

    def begin(self, call: Call) -> None:
        pass

    def forwarded(self, call: Call) -> None:
        pass

    def held(self, call: Call) -> None:
        pass

    def released(self, call: Call, verdict: str) -> None:
        pass

    def finished(self, call: Call, record: CallRecord) -> None:
        self.records.append(record)


def test_a_secret_across_the_cut_is_redacted_not_half_kept() -> None:
    keep = Keep()
    site = CallSite("hosted", "notes", "openclaw", redact=lambda text: text.replace(SECRET, "<redacted>"))
    call = CallTelemetry([keep]).begin(site, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}})
    assert call is not None
    message = "x" * 290 + SECRET + " and more" * 2000  # the secret straddles character 300
    call.finish({"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": message}})
    (record,) = keep.records
    assert record.error == "x" * 290 + "<redacted>"
    assert "tok-SE" not in record.error and len(record.error) == 300
