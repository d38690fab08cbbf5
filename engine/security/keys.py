"""Approvers' signing keys: Ed25519 key pairs sealed by a key derived from the secret.

Each approver holds an Ed25519 key pair (RFC 8032, the ``cryptography`` library). The
public key is stored in clear beside the approver; the private key only sealed: encrypted
with AES-256-GCM under a 32-byte key that Argon2id (RFC 9106, argon2-cffi's
``hash_secret_raw``) derives from the approver's secret and a random salt. Whoever can read
``control.db`` learns the public key and the sealed blob, never the private key: signing
needs the secret, and guessing it costs one Argon2id derivation per guess.

What is signed is always a canonical JSON array whose first element names its purpose
(:func:`message`), so a signature made for one purpose (an approval) can never be replayed
as another (a certificate, a policy).

Example:
>>> private, public = new_key_pair()
>>> sealed = seal(private, "correct horse", aad="alice", cost=(1, 64, 1))
>>> unseal(sealed, "correct horse", aad="alice").public_key().public_bytes_raw().hex() == public
True
>>> verify(public, sign(private, message("test", 1)), message("test", 1))
True
>>> verify(public, sign(private, message("test", 1)), message("test", 2))
False
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from typing import Any

from argon2.low_level import Type, hash_secret_raw
from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

#: version tag of a sealed private key's JSON
SEAL_VERSION = 1
SALT_BYTES = 16
NONCE_BYTES = 12


def new_key_pair() -> tuple[Ed25519PrivateKey, str]:
    """A fresh Ed25519 key pair: the private key and the public key as hex (64 chars)."""
    private = Ed25519PrivateKey.generate()
    return private, private.public_key().public_bytes_raw().hex()


def public_hex(private: Ed25519PrivateKey) -> str:
    """The public key of ``private`` as hex."""
    return private.public_key().public_bytes_raw().hex()


def fingerprint(public_key_hex: str) -> str:
    """The SHA-256 of a raw public key, hex: what ``audit verify --pin`` compares.

    Example:
    >>> len(fingerprint("00" * 32))
    64
    """
    return hashlib.sha256(bytes.fromhex(public_key_hex)).hexdigest()


def _derive(secret: str, salt: bytes, cost: tuple[int, int, int]) -> bytes:
    time_cost, memory_kib, parallelism = cost
    return hash_secret_raw(secret.encode("utf-8"), salt, time_cost=time_cost,
                           memory_cost=memory_kib, parallelism=parallelism, hash_len=32,
                           type=Type.ID)


def seal(private: Ed25519PrivateKey, secret: str, aad: str,
         cost: tuple[int, int, int]) -> str:
    """``private`` encrypted under the Argon2id key of ``secret`` (``cost``: time cost,
    memory in KiB, parallelism); ``aad`` (the approver's name) is authenticated with it, so
    a sealed key moved to another approver does not open. A JSON string."""
    salt, nonce = os.urandom(SALT_BYTES), os.urandom(NONCE_BYTES)
    box = AESGCM(_derive(secret, salt, cost))
    body = box.encrypt(nonce, private.private_bytes_raw(), aad.encode("utf-8"))
    b64 = lambda b: base64.b64encode(b).decode("ascii")  # noqa: E731
    return json.dumps({"v": SEAL_VERSION, "kdf": "argon2id", "t": cost[0], "m": cost[1],
                       "p": cost[2], "salt": b64(salt), "nonce": b64(nonce), "key": b64(body)},
                      separators=(",", ":"))


def unseal(sealed: str, secret: str, aad: str) -> Ed25519PrivateKey | None:
    """The private key sealed in ``sealed``, or None if ``secret`` (or ``aad``) does not
    open it or the blob is damaged."""
    try:
        data = json.loads(sealed)
        if data.get("v") != SEAL_VERSION or data.get("kdf") != "argon2id":
            return None
        cost = (int(data["t"]), int(data["m"]), int(data["p"]))
        key = _derive(secret, base64.b64decode(data["salt"]), cost)
        raw = AESGCM(key).decrypt(base64.b64decode(data["nonce"]),
                                  base64.b64decode(data["key"]), aad.encode("utf-8"))
        return Ed25519PrivateKey.from_private_bytes(raw)
    except (InvalidTag, ValueError, KeyError, TypeError):
        return None


def message(purpose: str, *fields: Any) -> bytes:
    """The bytes a signature covers: ``[purpose, *fields]`` as compact, key-sorted JSON."""
    return json.dumps(["layout-advisor", purpose, *fields], sort_keys=True,
                      separators=(",", ":"), ensure_ascii=False, default=str).encode("utf-8")


def sign(private: Ed25519PrivateKey, data: bytes) -> str:
    """An Ed25519 signature of ``data``, hex."""
    return private.sign(data).hex()


def verify(public_key_hex: str | None, signature_hex: str | None, data: bytes) -> bool:
    """Whether ``signature_hex`` is the signature of ``data`` by ``public_key_hex``; False
    for anything missing or malformed."""
    if not public_key_hex or not signature_hex:
        return False
    try:
        key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key_hex))
        key.verify(bytes.fromhex(signature_hex), data)
        return True
    except (InvalidSignature, ValueError):
        return False


def canonical_digest(value: Any) -> str:
    """SHA-256 of ``value`` as compact, key-sorted JSON, hex (a proposal's digest)."""
    body = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str)
    return hashlib.sha256(body.encode("utf-8")).hexdigest()
