"""One POST to an OAuth token endpoint: the IO of the OAUTHBEARER login (:mod:`pyconnect.config.oauthbearer`).

Who calls: the token provider of :mod:`pyconnect.kafka.oauth_login`, once per attempt (it owns the
retries). It lives with the Kafka clients it logs in, below the REST layer; besides pyconnect/rest/ it is
the one module that imports aiohttp (as an HTTP client). :func:`post_form` opens a session, sends the form, reads the whole answer and closes the session
before it returns: nothing outlives the call. The connection is bounded by ``connect_timeout_s`` and
each read by ``read_timeout_s`` (Java's ``sasl.login.connect.timeout.ms`` / ``sasl.login.read.timeout.ms``).
A network failure raises :class:`~pyconnect.config.oauthbearer.TokenEndpointError` (retriable) naming
the endpoint and the cause; an HTTP answer of any status is returned for the caller to judge. Neither the
request headers (the client secret) nor the answer (the token) are logged or put in a message.
"""

from __future__ import annotations

import ssl

import aiohttp

from pyconnect.config.oauthbearer import TokenEndpointError

MAX_RESPONSE_BYTES = 1 << 20
"""A token answer larger than this is refused (a JWT is a few KB)."""


async def post_form(
    url: str,
    headers: dict[str, str],
    body: str,
    *,
    ssl_context: ssl.SSLContext | None,
    connect_timeout_s: float,
    read_timeout_s: float,
) -> tuple[int, str]:
    """POST ``body`` to ``url``; the status and the body text of the answer."""
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=connect_timeout_s, sock_read=read_timeout_s)
    try:
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.post(
                url, data=body.encode(), headers=headers, ssl=ssl_context if ssl_context else True
            ) as response,
        ):
            raw = await response.content.read(MAX_RESPONSE_BYTES + 1)
            if len(raw) > MAX_RESPONSE_BYTES:
                raise TokenEndpointError(
                    f"The token endpoint {url} answered more than {MAX_RESPONSE_BYTES} bytes",
                    url,
                    retriable=False,
                )
            return response.status, raw.decode("utf-8", errors="replace")
    except TokenEndpointError:
        raise
    except aiohttp.ClientConnectorCertificateError as exc:
        reason = getattr(exc.certificate_error, "verify_message", None) or exc.certificate_error
        raise TokenEndpointError(
            f"Cannot reach the token endpoint {url}: TLS certificate not trusted ({reason})",
            url,
            retriable=True,
        ) from None
    except ssl.SSLCertVerificationError as exc:
        reason = getattr(exc, "verify_message", None) or exc
        raise TokenEndpointError(
            f"Cannot reach the token endpoint {url}: TLS certificate not trusted ({reason})",
            url,
            retriable=True,
        ) from None
    except (aiohttp.ClientError, OSError) as exc:
        raise TokenEndpointError(
            f"Cannot reach the token endpoint {url}: {type(exc).__name__}: {exc}", url, retriable=True
        ) from None
    except TimeoutError:
        raise TokenEndpointError(
            f"Cannot reach the token endpoint {url}: no answer within "
            f"{connect_timeout_s:g} s (connect) / {read_timeout_s:g} s (read)",
            url,
            retriable=True,
        ) from None
