"""The webhook's certificates: made when missing, renewed when due, never a new CA without need."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from cryptography import x509

from clawplane.k8s.admission.certs import (
    CA_LIFETIME,
    CERT_LIFETIME,
    TlsMaterial,
    expires,
    issue,
    names_of,
    new_ca,
    renewed,
)

NOW = datetime(2026, 12, 6, tzinfo=UTC)
NAMES = {"clawplane-webhook.ops.svc", "clawplane-webhook.ops.svc.cluster.local", "10.0.0.7"}


def _fresh() -> TlsMaterial:
    made = renewed(None, NAMES, NOW)
    assert made is not None
    return made


def test_missing_material_is_made_with_every_name_and_signed_by_its_ca() -> None:
    made = _fresh()
    assert names_of(made.cert) == NAMES
    cert, ca = x509.load_pem_x509_certificate(made.cert), x509.load_pem_x509_certificate(made.ca_cert)
    cert.verify_directly_issued_by(ca)
    assert expires(made.cert) - NOW <= CERT_LIFETIME and expires(made.ca_cert) - NOW <= CA_LIFETIME
    assert made.ca_bundle == made.ca_cert


def test_current_material_is_kept() -> None:
    made = _fresh()
    assert renewed(made, NAMES, NOW + timedelta(days=59)) is None


def test_a_certificate_with_30_days_left_is_renewed_by_the_same_ca() -> None:
    made = _fresh()
    later = NOW + CERT_LIFETIME - timedelta(days=29)
    again = renewed(made, NAMES, later)
    assert again is not None and again.ca_cert == made.ca_cert and again.ca_key == made.ca_key
    assert again.cert != made.cert and expires(again.cert) > expires(made.cert)


def test_other_names_or_another_cas_certificate_are_replaced() -> None:
    made = _fresh()
    moved = renewed(made, {"webhook.example"}, NOW)
    assert moved is not None and names_of(moved.cert) == {"webhook.example"} and moved.ca_cert == made.ca_cert
    stranger_ca, stranger_key = new_ca(NOW)
    foreign = replace(made, cert=issue(stranger_ca, stranger_key, NAMES, NOW)[0])
    fixed = renewed(foreign, NAMES, NOW)
    assert fixed is not None
    x509.load_pem_x509_certificate(fixed.cert).verify_directly_issued_by(x509.load_pem_x509_certificate(made.ca_cert))


def test_a_ca_near_its_end_is_replaced_and_the_old_one_stays_trusted_until_it_expires() -> None:
    made = _fresh()
    late = NOW + CA_LIFETIME - timedelta(days=300)
    rolled = renewed(made, NAMES, late)
    assert rolled is not None and rolled.ca_cert != made.ca_cert and rolled.previous_ca == made.ca_cert
    assert rolled.ca_bundle == rolled.ca_cert + made.ca_cert
    x509.load_pem_x509_certificate(rolled.cert).verify_directly_issued_by(x509.load_pem_x509_certificate(rolled.ca_cert))
    after = renewed(rolled, NAMES, NOW + CA_LIFETIME + timedelta(days=1))
    assert after is not None and after.previous_ca == b""


def test_unreadable_material_is_made_anew() -> None:
    made = _fresh()
    again = renewed(replace(made, key=b"not a key"), NAMES, NOW)
    assert again is not None and again.ca_cert != made.ca_cert
