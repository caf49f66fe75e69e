"""The webhook's TLS material: a private CA, a serving certificate it signs, and when to renew them.

The API server trusts the webhook through the ``caBundle`` of its configuration, so the CA
lives long (ten years) and the serving certificate short (90 days, renewed with 30 left): a
renewal changes nothing the API server holds. A CA nearing its end is replaced with the old
one still in the bundle until it expires, so certificates of either are trusted meanwhile.
Keys are ECDSA P-256: fast to make, accepted by every API server.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_LIFETIME = timedelta(days=3650)
CA_RENEW_BEFORE = timedelta(days=365)
CERT_LIFETIME = timedelta(days=90)
CERT_RENEW_BEFORE = timedelta(days=30)
BACKDATE = timedelta(minutes=5)
"""Certificates start a little in the past: a node whose clock runs behind still accepts them."""


@dataclass(frozen=True)
class TlsMaterial:
    """PEM bytes: the CA (and the one it replaced, while valid) and the serving pair."""

    ca_cert: bytes
    ca_key: bytes
    cert: bytes
    key: bytes
    previous_ca: bytes = b""

    @property
    def ca_bundle(self) -> bytes:
        """What the API server should trust: the current CA, then the previous one if any."""
        return self.ca_cert + self.previous_ca


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def new_ca(now: datetime, common_name: str = "clawplane admission webhook CA") -> tuple[bytes, bytes]:
    """A self-signed CA certificate and its key (PEM)."""
    key = _key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + CA_LIFETIME)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM), _pem_key(key)


def _alt_name(name: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def issue(ca_cert: bytes, ca_key: bytes, names: Iterable[str], now: datetime) -> tuple[bytes, bytes]:
    """A serving certificate for ``names`` (DNS names or IP addresses) signed by the CA (PEM pair)."""
    names = sorted(set(names))
    ca = x509.load_pem_x509_certificate(ca_cert)
    signer = serialization.load_pem_private_key(ca_key, password=None)
    assert isinstance(signer, ec.EllipticCurvePrivateKey)
    key = _key()
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(min(now + CERT_LIFETIME, ca.not_valid_after_utc))
        .add_extension(x509.SubjectAlternativeName([_alt_name(n) for n in names]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(signer.public_key()), critical=False
        )
        .sign(signer, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM), _pem_key(key)


def names_of(cert: bytes) -> set[str]:
    """The DNS names and IP addresses a certificate is valid for."""
    parsed = x509.load_pem_x509_certificate(cert)
    try:
        alt = parsed.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return set()
    return set(alt.get_values_for_type(x509.DNSName)) | {
        str(ip) for ip in alt.get_values_for_type(x509.IPAddress)
    }


def expires(cert: bytes) -> datetime:
    """When a PEM certificate stops being valid."""
    return x509.load_pem_x509_certificate(cert).not_valid_after_utc


def _signed_by(cert: bytes, ca_cert: bytes) -> bool:
    try:
        x509.load_pem_x509_certificate(cert).verify_directly_issued_by(
            x509.load_pem_x509_certificate(ca_cert)
        )
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def renewed(
    material: TlsMaterial | None, names: Iterable[str], now: datetime | None = None
) -> TlsMaterial | None:
    """New material when ``material`` is missing, unreadable, near its end or for other names; else None."""
    now = now or datetime.now(UTC)
    wanted = set(names)
    if material is None or not _readable(material):
        ca_cert, ca_key = new_ca(now)
        return TlsMaterial(ca_cert, ca_key, *issue(ca_cert, ca_key, wanted, now))
    current = material
    if expires(current.ca_cert) - now < CA_RENEW_BEFORE:
        ca_cert, ca_key = new_ca(now)
        current = TlsMaterial(ca_cert, ca_key, b"", b"", previous_ca=material.ca_cert)
    elif current.previous_ca and expires(current.previous_ca) <= now:
        current = replace(current, previous_ca=b"")
    if (
        current is material
        and expires(material.cert) - now >= CERT_RENEW_BEFORE
        and names_of(material.cert) == wanted
        and _signed_by(material.cert, material.ca_cert)
    ):
        return None
    cert, key = issue(current.ca_cert, current.ca_key, wanted, now)
    return replace(current, cert=cert, key=key)


def _readable(material: TlsMaterial) -> bool:
    try:
        for pem in (material.ca_cert, material.cert):
            x509.load_pem_x509_certificate(pem)
        for pem in (material.ca_key, material.key):
            serialization.load_pem_private_key(pem, password=None)
        if material.previous_ca:
            x509.load_pem_x509_certificate(material.previous_ca)
    except (ValueError, TypeError):
        return False
    return True
