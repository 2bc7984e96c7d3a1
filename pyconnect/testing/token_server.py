"""A small OAuth 2 authorization server for the OAUTHBEARER clusters of :mod:`pyconnect.testing.kafka`.

Shell (the launcher starts it; by hand only to look at it)::

    python -m pyconnect.testing.token_server --dir CLUSTER/security --port 18080 [--lifetime 3600] [--tls]

It serves on ``127.0.0.1`` only:

- ``POST /token``: the client-credentials grant (RFC 6749 4.4). The client authenticates with HTTP Basic
  (as Java's ``ClientSecretRequestFormatter``, URL-encoded or not) or with ``client_id``/``client_secret``
  form fields; the clients are the cluster's users (``security.json``), the secret is the user's
  password. A good client gets ``{"access_token", "token_type": "Bearer", "expires_in", "scope"}``; the
  token is a JWT signed RS256 with the cluster's key (``oauth-key.pem``) carrying ``iss``, ``sub`` (the
  user), ``iat``, ``exp`` (``--lifetime`` seconds later), ``scope`` (the requested one, else ``kafka``)
  and ``jti``. A wrong or unknown client gets 401 ``invalid_client``, another grant 400
  ``unsupported_grant_type``.
- ``GET /jwks``: the public key as a JWK set, for the brokers' ``OAuthBearerValidatorCallbackHandler``.
- ``GET /stats``: ``{"issued": {"<user>": n}}``, how many tokens each client got (tests use it to see
  refreshes).

With ``--tls`` it serves HTTPS with the broker certificate of the cluster's CA (``broker.pem``, valid for
127.0.0.1). One line per token issued goes to stdout (the user, never the token or a secret). The
process runs until it is signalled; the launcher owns it by PID like a broker (``--tag``).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import ssl
import sys
import threading
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

KEY_FILE = "oauth-key.pem"
DEFAULT_SCOPE = "kafka"
MAX_BODY = 64 * 1024


def write_signing_key(directory: Path) -> None:
    """A fresh RSA key (2048 bits) in ``directory/oauth-key.pem``, readable by its owner only."""
    import os

    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    fd = os.open(directory / KEY_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(pem)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _uint(number: int) -> str:
    return _b64url(number.to_bytes((number.bit_length() + 7) // 8, "big"))


class Issuer:
    """The signing key, the clients and the token lifetime; thread-safe (one lock for the counts)."""

    def __init__(self, directory: Path, lifetime_s: int, base_url: str) -> None:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        key = serialization.load_pem_private_key((directory / KEY_FILE).read_bytes(), password=None)
        if not isinstance(key, rsa.RSAPrivateKey):
            raise ValueError(f"{directory / KEY_FILE} holds no RSA key")
        self._key = key
        numbers = key.public_key().public_numbers()
        self.kid = hashlib.sha256(f"{numbers.n}:{numbers.e}".encode()).hexdigest()[:16]
        self.jwk = {
            "kty": "RSA",
            "use": "sig",
            "alg": "RS256",
            "kid": self.kid,
            "n": _uint(numbers.n),
            "e": _uint(numbers.e),
        }
        state = json.loads((directory / "security.json").read_text())
        self.clients: dict[str, str] = {u: p for u, p in state["passwords"].items() if u != "broker"}
        self.lifetime_s = lifetime_s
        self.base_url = base_url
        self.issued: dict[str, int] = {}
        self._lock = threading.Lock()

    def authenticate(self, client_id: str, secret: str) -> bool:
        import hmac

        expected = self.clients.get(client_id)
        return expected is not None and hmac.compare_digest(expected.encode(), secret.encode())

    def issue(self, client_id: str, scope: str) -> str:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        now = int(time.time())
        header = {"alg": "RS256", "typ": "JWT", "kid": self.kid}
        claims = {
            "iss": self.base_url,
            "sub": client_id,
            "iat": now,
            "exp": now + self.lifetime_s,
            "scope": scope,
            "jti": str(uuid.uuid4()),
        }
        signing_input = (
            _b64url(json.dumps(header, separators=(",", ":")).encode())
            + "."
            + _b64url(json.dumps(claims, separators=(",", ":")).encode())
        )
        signature = self._key.sign(signing_input.encode("ascii"), padding.PKCS1v15(), hashes.SHA256())
        with self._lock:
            self.issued[client_id] = self.issued.get(client_id, 0) + 1
        print(f"issued a token to {client_id} valid {self.lifetime_s} s (scope {scope})", flush=True)
        return signing_input + "." + _b64url(signature)


def _handler(issuer: Issuer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "pyconnect-token-server"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # request lines would be noise; issuances are printed

        def _send(self, status: int, doc: object) -> None:
            body = json.dumps(doc).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            path = urllib.parse.urlparse(self.path).path
            if path in ("/jwks", "/.well-known/jwks.json"):
                self._send(200, {"keys": [issuer.jwk]})
            elif path == "/stats":
                with issuer._lock:
                    self._send(200, {"issued": dict(issuer.issued)})
            else:
                self._send(404, {"error": "not_found"})

        def do_POST(self) -> None:
            if urllib.parse.urlparse(self.path).path != "/token":
                self._send(404, {"error": "not_found"})
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                self._send(400, {"error": "invalid_request", "error_description": "body too large"})
                return
            form = urllib.parse.parse_qs(self.rfile.read(length).decode("utf-8", "replace"))
            client_id = (form.get("client_id") or [""])[0]
            secret = (form.get("client_secret") or [""])[0]
            auth = self.headers.get("Authorization") or ""
            if auth.lower().startswith("basic "):
                try:
                    decoded = base64.b64decode(auth[6:].strip()).decode("utf-8")
                except ValueError:
                    decoded = ""
                user, _, password = decoded.partition(":")
                client_id, secret = urllib.parse.unquote_plus(user), urllib.parse.unquote_plus(password)
            if (form.get("grant_type") or [""])[0] != "client_credentials":
                self._send(
                    400, {"error": "unsupported_grant_type", "error_description": "only client_credentials"}
                )
                return
            if not issuer.authenticate(client_id, secret):
                self._send(
                    401, {"error": "invalid_client", "error_description": "Client authentication failed"}
                )
                return
            scope = (form.get("scope") or [DEFAULT_SCOPE])[0]
            token = issuer.issue(client_id, scope)
            self._send(
                200,
                {
                    "access_token": token,
                    "token_type": "Bearer",
                    "expires_in": issuer.lifetime_s,
                    "scope": scope,
                },
            )

    return Handler


def serve(directory: Path, port: int, lifetime_s: int, tls: bool) -> None:
    """Serve until the process is signalled."""
    scheme = "https" if tls else "http"
    issuer = Issuer(directory, lifetime_s, f"{scheme}://127.0.0.1:{port}")
    server = ThreadingHTTPServer(("127.0.0.1", port), _handler(issuer))
    server.daemon_threads = True
    if tls:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(directory / "broker.pem"))
        server.socket = context.wrap_socket(server.socket, server_side=True)
    print(f"token server on {scheme}://127.0.0.1:{port} (token lifetime {lifetime_s} s)", flush=True)
    server.serve_forever()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pyconnect.testing.token_server", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--dir", required=True, type=Path, help="the cluster's security folder")
    parser.add_argument("--port", required=True, type=int)
    parser.add_argument("--lifetime", type=int, default=3600, help="token lifetime in seconds (default 3600)")
    parser.add_argument(
        "--tls", action="store_true", help="serve HTTPS with the cluster's broker certificate"
    )
    parser.add_argument("--tag", default="", help="the launcher's ownership tag (ignored)")
    args = parser.parse_args(argv)
    if args.lifetime < 1:
        parser.error("--lifetime must be at least 1 second")
    try:
        serve(args.dir, args.port, args.lifetime, args.tls)
    except (OSError, ValueError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
