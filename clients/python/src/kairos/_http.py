"""The HTTP exchange of a call: one request with urllib, and its answer either decoded as JSON
or raised as the KairosError its status names."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from email.utils import parsedate_to_datetime
from datetime import datetime, timezone
from typing import Any, Dict, Mapping, Optional, Tuple

from .errors import KairosError, ProtocolError, Timeout, Unreachable, error_for_status


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Kairos never redirects; a redirect (a proxy's login page, http to https) is answered as
    the error it is instead of urllib resending a POST as a GET."""

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any,
                         newurl: str) -> Optional[urllib.request.Request]:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect())


def retry_after(value: Optional[str]) -> Optional[float]:
    """Retry-After as seconds: a number, or an HTTP date (seconds from now, at least 0)."""
    if value is None or value.strip() == "":
        return None
    v = value.strip()
    try:
        return max(0.0, float(v))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(v)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def error_message(body: bytes) -> str:
    """The error text of an error answer: its JSON "error" (else "detail"), or the start of a
    body that is not Kairos's JSON error (a proxy's page)."""
    try:
        v = json.loads(body)
    except ValueError:
        v = None
    if isinstance(v, dict):
        for key in ("error", "detail"):
            text = v.get(key)
            if isinstance(text, str) and text:
                return text
    text = body[:300].decode("utf-8", "replace").strip()
    return f"answer without a Kairos error body: {text!r}" if text else "empty answer"


class Transport:
    """Sends requests to one server: base URL, headers sent with every request."""

    def __init__(self, base_url: str, headers: Mapping[str, str]) -> None:
        self.base_url = base_url
        self.headers = dict(headers)

    def open(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        timeout: float,
        headers: Optional[Mapping[str, str]] = None,
        answer_status: Tuple[int, ...] = (),
    ) -> Any:
        """Sends the request; returns the open response of a 2xx or answer_status (an error
        status whose body is an answer, as /readyz's 503), or raises the error of its answer."""
        endpoint = f"{method} {path}"
        hdrs = dict(self.headers)
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            hdrs["Content-Type"] = "application/json"
        if headers:
            hdrs.update(headers)
        req = urllib.request.Request(self.base_url + path, data=data, headers=hdrs, method=method)
        try:
            return _OPENER.open(req, timeout=timeout)
        except urllib.error.HTTPError as e:
            if e.code in answer_status:
                return e
            with e:
                try:
                    raw = e.read()
                except (OSError, ValueError):
                    raw = b""
                raise error_for_status(
                    e.code,
                    error_message(raw),
                    retry_after=retry_after(e.headers.get("Retry-After")),
                    request_id=e.headers.get("X-Request-Id"),
                    endpoint=endpoint,
                ) from None
        except urllib.error.URLError as e:
            if isinstance(e.reason, (socket.timeout, TimeoutError)):
                raise Timeout(f"no connection to {self.base_url} within {timeout:g} s (timeout)", endpoint=endpoint) from e
            raise Unreachable(f"cannot reach {self.base_url}: {e.reason}", endpoint=endpoint) from e
        except (socket.timeout, TimeoutError) as e:
            raise Timeout(f"no answer from {self.base_url} within {timeout:g} s (timeout)", endpoint=endpoint) from e
        except (ConnectionError, OSError) as e:  # reset or closed before the status line
            raise Unreachable(f"connection to {self.base_url} failed: {e}", endpoint=endpoint) from e

    def json(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        timeout: float,
        headers: Optional[Mapping[str, str]] = None,
        answer_status: Tuple[int, ...] = (),
    ) -> Tuple[Any, Dict[str, str]]:
        """The request's JSON answer and its headers."""
        endpoint = f"{method} {path}"
        resp = self.open(method, path, body, timeout=timeout, headers=headers, answer_status=answer_status)
        with resp:
            try:
                raw = resp.read()
            except (socket.timeout, TimeoutError) as e:
                raise Timeout(f"the answer did not arrive within {timeout:g} s (timeout)", endpoint=endpoint) from e
            except OSError as e:
                raise Unreachable(f"reading the answer: {e}", endpoint=endpoint) from e
            hdrs = {k: v for k, v in resp.headers.items()}
        try:
            return json.loads(raw), hdrs
        except ValueError as e:
            raise ProtocolError(
                f"HTTP {resp.getcode()} answer is not JSON ({e}): {raw[:200]!r}",
                status=resp.getcode(),
                request_id=hdrs.get("X-Request-Id"),
                endpoint=endpoint,
            ) from None


def wrap_protocol(err: ProtocolError, endpoint: str, request_id: Optional[str]) -> KairosError:
    """A decoding error with the call it came from."""
    return ProtocolError(err.message, status=err.status, request_id=request_id, endpoint=endpoint)
