"""The one error tree of pyconnect.

Every error the runtime raises on purpose is a :class:`ConnectError`, wherever the class is defined
(``tests/unit/house/test_error_tree.py`` holds the few exemptions and why). Each class declares

* ``retriable``: whether retrying the same operation later may succeed (Java's ``RetriableException``);
  an instance may set its own when its cause decides (``TokenEndpointError``);
* ``http_status``: the status the REST layer answers with when the error escapes a resource.

A class defined elsewhere keeps its builtin base next to the tree's class when callers catch that base
(``class TlsConfigError(ConfigError, ValueError)``): the tree's class comes first, so it declares.

The REST layer turns any ``ConnectError`` into ``{"error_code": e.error_code, "message": str(e)}`` in
exactly one place. The statuses mirror Java's ``ConnectExceptionMapper``:

* ``ConnectRestException`` (ours: :class:`RestError` and its subclasses) -> its own status and error code;
* ``NotFoundException`` -> 404;
* ``AlreadyExistsException`` -> 409;
* JAX-RS ``WebApplicationException`` -> that status (unknown path 404, wrong method 405);
* anything else, including a bare Kafka ``ConfigException`` and ``RebalanceNeededException`` -> 500.

Deliberate difference: a Java ``ConfigException`` that escapes a REST resource becomes a 500; our
:class:`ConfigError` declares 400 because in every REST path Java first wraps config problems in a
``BadRequestException``. A call site that must reproduce one of Java's 500s raises :class:`ConnectError`.
"""

from __future__ import annotations

from typing import ClassVar


class ConnectError(Exception):
    """Base of the tree (Java ``ConnectException``): not retriable, 500 over REST."""

    retriable: bool = False
    http_status: ClassVar[int] = 500

    def __init__(self, message: str = "", *, error_code: int | None = None) -> None:
        super().__init__(message)
        self._error_code = error_code

    @property
    def message(self) -> str:
        return str(self)

    @property
    def status(self) -> int:
        """The HTTP status the REST layer answers with."""
        return self.http_status

    @property
    def error_code(self) -> int:
        """The ``error_code`` of the REST error body; equals ``status`` unless set explicitly."""
        return self.status if self._error_code is None else self._error_code


class RetriableError(ConnectError):
    """Java ``RetriableException``: the operation may succeed if retried."""

    retriable = True


class DataError(ConnectError):
    """Java ``DataException``: a record could not be converted or is malformed."""


class IllegalWorkerStateError(ConnectError):
    """Java ``IllegalWorkerStateException``: an operation was called in a state that forbids it."""


class ConfigError(ConnectError):
    """A configuration is missing, malformed or invalid (Java ``ConfigException``); 400 over REST.

    Messages follow Java's text so they can be compared with a Java worker's output; build the common
    one with ``pyconnect.config.javastr.invalid_value``.
    """

    http_status = 400


class NotFoundError(ConnectError):
    """Java ``NotFoundException``: unknown connector, task, plugin or logger; 404."""

    http_status = 404


class AlreadyExistsError(ConnectError):
    """Java ``AlreadyExistsException``: e.g. ``Connector c already exists``; 409."""

    http_status = 409


class RebalanceNeededError(ConnectError):
    """Java ``RebalanceNeededException``: the herder expects a rebalance before it can answer.

    500 when it escapes (e.g. ``GET /connectors/{c}``: ``Request cannot be completed because a rebalance
    is expected``); the forwarding endpoints translate it to a 409 :class:`ConflictError` instead.
    """

    retriable = True


RebalanceInProgressError = RebalanceNeededError


class RequestTargetError(ConnectError):
    """Java ``RequestTargetException``: this worker is not the one that must handle the request.

    ``forward_url`` is the advertised URL of the right worker (with trailing slash), or ``None`` when it
    is unknown. The REST forwarding layer consumes these; if forwarding is impossible it answers 409.
    """

    http_status = 409

    def __init__(self, message: str, forward_url: str | None) -> None:
        super().__init__(message)
        self.forward_url = forward_url


class NotLeaderError(RequestTargetError):
    """Java ``NotLeaderException``: the request must run on the group leader."""


class NotAssignedError(RequestTargetError):
    """Java ``NotAssignedException``: the request must run on the worker that owns the connector/task."""


class RestError(ConnectError):
    """Java ``ConnectRestException``: an error with an explicit HTTP status (and optional error code)."""

    def __init__(self, status: int, message: str, *, error_code: int | None = None) -> None:
        super().__init__(message, error_code=error_code)
        self._status = status

    @property
    def status(self) -> int:
        return self._status


class BadRequestError(RestError):
    """Java ``BadRequestException``: 400."""

    http_status = 400

    def __init__(self, message: str) -> None:
        super().__init__(400, message)


class ConflictError(RestError):
    """409 raised by the forwarding layer (``Cannot complete request ...``)."""

    http_status = 409

    def __init__(self, message: str) -> None:
        super().__init__(409, message)


class ForbiddenError(RestError):
    """403, e.g. ``Internal request contained invalid signature.`` or ``Topic tracking is disabled.``"""

    http_status = 403

    def __init__(self, message: str) -> None:
        super().__init__(403, message)


class ServiceUnavailableError(RestError):
    """503, e.g. an internal request arrived before this worker has a session key."""

    http_status = 503
    retriable = True

    def __init__(self, message: str) -> None:
        super().__init__(503, message)


class KafkaAccessError(ConnectError):
    """A Kafka cluster refused a client of this worker: it could not authenticate, or it lacks an ACL.

    Not retriable: only a person can fix the credentials or grant the ACL, so whatever meets one fails
    (the connector or task goes FAILED, a REST call answers 500) instead of retrying. The message is one
    line naming the cluster and what was refused, in Java's words, and never holds a secret; built by
    :mod:`pyconnect.kafka.access`.
    """


class AuthenticationError(KafkaAccessError):
    """Java ``AuthenticationException`` (SASL or TLS): the cluster does not accept who the client says it is."""


class AuthorizationError(KafkaAccessError):
    """Java ``AuthorizationException``: the principal lacks an ACL for an operation on a resource."""
