"""The errors a Kairos call raises: one class per kind of failure, all under KairosError.

A server's error answer is ``{"error": ..., "detail": ...}`` with an HTTP status; the class
follows the status, so a caller can retry what may succeed later (RateLimited, Unavailable,
Timeout: each with ``retry_after`` when the server sent Retry-After) and report the rest.
"""

from __future__ import annotations

from typing import Optional


class KairosError(Exception):
    """Any failure of a Kairos call.

    Attributes:
        message: the server's ``error`` text, or what went wrong on the client's side.
        status: the HTTP status (or, for a chat stream that failed after it started, the
            status its ``error`` event names); None when no answer came.
        retry_after: seconds the server asked to wait before retrying (Retry-After), or None.
        request_id: the server's X-Request-Id, which its log lines carry; None if absent.
        endpoint: "METHOD /path" of the call.
    """

    def __init__(
        self,
        message: str,
        *,
        status: Optional[int] = None,
        retry_after: Optional[float] = None,
        request_id: Optional[str] = None,
        endpoint: str = "",
    ) -> None:
        self.message = message
        self.status = status
        self.retry_after = retry_after
        self.request_id = request_id
        self.endpoint = endpoint
        super().__init__(self._describe())

    def _describe(self) -> str:
        where = self.endpoint or "kairos"
        if self.status is not None:
            where += f": HTTP {self.status}"
        s = f"{where}: {self.message}"
        if self.retry_after is not None:
            s += f" (retry after {self.retry_after:g} s)"
        if self.request_id:
            s += f" [request {self.request_id}]"
        return s


class BadRequest(KairosError):
    """400 (and 413, 415): the request is wrong; the message names the field and why."""


class Unauthorized(KairosError):
    """401: the server wants ``Authorization: Bearer KEY`` (Client's api_key) and got none or another."""


class NotFound(KairosError):
    """404: no such passage, collection or conversation (or not the caller's: not told apart)."""


class RateLimited(KairosError):
    """429: past the chat rate of this owner, or the server is busy; wait retry_after seconds."""


class UpstreamError(KairosError):
    """502: the server's LLM failed (5xx, refused the request, or answered no completion)."""


class Unavailable(KairosError):
    """503: the LLM rate-limits the server, too many chat turns run, or no index is loaded;
    wait retry_after seconds."""


class Timeout(KairosError):
    """504 (the server ran out of --timeout, --llm-timeout or --chat-timeout), or no answer
    within the Client's own timeout (status None)."""


class Unreachable(KairosError):
    """No connection to the server (refused, no route, name not resolved): nothing was answered."""


class ProtocolError(KairosError):
    """The server answered something the API does not describe (not JSON, a missing or
    mistyped field, a stream cut before its end): a server of another version, or not Kairos."""


_BY_STATUS = {
    400: BadRequest,
    413: BadRequest,
    415: BadRequest,
    401: Unauthorized,
    404: NotFound,
    429: RateLimited,
    502: UpstreamError,
    503: Unavailable,
    504: Timeout,
}


def error_for_status(
    status: int,
    message: str,
    *,
    retry_after: Optional[float] = None,
    request_id: Optional[str] = None,
    endpoint: str = "",
) -> KairosError:
    """The KairosError subclass of an HTTP status (KairosError itself for one no class names)."""
    cls = _BY_STATUS.get(status, KairosError)
    return cls(message, status=status, retry_after=retry_after, request_id=request_id, endpoint=endpoint)
