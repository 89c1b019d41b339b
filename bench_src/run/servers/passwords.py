"""Passwords of the private servers: generated at random, and given to the servers only as the
hashes they store (a SCRAM-SHA-256 verifier, a mysql_native_password hash)."""
from __future__ import annotations

import base64
import hashlib
import hmac
import secrets


def new_password() -> str:
    return secrets.token_hex(16)


def scram_sha256_verifier(password: str, iterations: int = 4096) -> str:
    """The SCRAM-SHA-256 verifier PostgreSQL stores for a password (RFC 5802 / 7677), computed here
    so that the clear password is never sent to the server."""
    salt = secrets.token_bytes(16)
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    stored_key = hashlib.sha256(client_key).digest()
    server_key = hmac.new(salted, b"Server Key", hashlib.sha256).digest()
    b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
    return f"SCRAM-SHA-256${iterations}:{b64(salt)}${b64(stored_key)}:{b64(server_key)}"


def mysql_native_hash(password: str) -> str:
    """The mysql_native_password hash: '*' + upper hex of SHA1(SHA1(password))."""
    return "*" + hashlib.sha1(hashlib.sha1(password.encode()).digest()).hexdigest().upper()
