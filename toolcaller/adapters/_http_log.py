"""Keeps the secrets HTTP requests carried out of httpx's and httpcore's own log records."""

from __future__ import annotations

import logging
import threading
import urllib.parse
from collections import OrderedDict
from collections.abc import Iterable

from toolcaller.core.redact import mask_text

__all__ = ["LOG_SECRETS_KEPT", "mask_http_logs", "remember_secrets"]

LOG_SECRETS_KEPT = 4096
_HTTP_LOGGERS = (
    "httpx",
    "httpcore",
    "httpcore.connection",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.proxy",
    "httpcore.socks",
)
_PATH_SAFE = "/!$&'()*+,;=:@%"  # what httpx leaves as it is in a URL's path


class _LogMask(logging.Filter):
    """Masks, in httpx's and httpcore's log records, the secrets that requests carried.

    httpx logs each request's URL, query included, at INFO; httpcore logs hosts and response
    headers at DEBUG. The mask remembers the last `LOG_SECRETS_KEPT` values, process-wide
    (a record names no call), and rewrites a record's message rather than dropping it.
    """

    def __init__(self, size: int) -> None:
        super().__init__()
        self._size = size
        self._lock = threading.Lock()
        self._recent: OrderedDict[str, None] = OrderedDict()
        self._known: tuple[str, ...] = ()

    def remember(self, secrets: Iterable[str]) -> None:
        """Mask these values from now on; forget the least recently used beyond the size."""
        with self._lock:
            added = False
            for secret in secrets:
                if secret in self._recent:
                    self._recent.move_to_end(secret)
                else:
                    self._recent[secret] = None
                    added = True
            if added:
                while len(self._recent) > self._size:
                    self._recent.popitem(last=False)
                self._known = tuple(self._recent)

    def filter(self, record: logging.LogRecord) -> bool:
        """Mask known secrets and token-shaped strings in the record's message; keep it."""
        try:
            text = record.getMessage()
        except (TypeError, ValueError):
            return True  # a malformed record: logging reports it as it would without us
        masked = mask_text(text, [s for s in self._known if s in text])
        if masked != text:
            record.msg, record.args = masked, None
        return True


_LOG_MASK = _LogMask(LOG_SECRETS_KEPT)


def mask_http_logs() -> None:
    """Add the mask to httpx's and httpcore's loggers (idempotent).

    A logger's filters see only the records made on that very logger, not its children's,
    so each logger that httpx or httpcore writes to gets it.
    """
    for name in _HTTP_LOGGERS:
        logging.getLogger(name).addFilter(_LOG_MASK)  # a filter already there is not added


def _as_logged(secrets: Iterable[str]) -> set[str]:
    """Each secret as it is, and percent-encoded as a URL's path or query shows it."""
    forms: set[str] = set()
    for secret in secrets:
        path, query = urllib.parse.quote(secret, _PATH_SAFE), urllib.parse.quote_plus(secret)
        forms.update((secret, path, query, urllib.parse.quote(secret, "")))
    return forms


def remember_secrets(secrets: Iterable[str]) -> None:
    """Mask these values (as they are, and percent-encoded) in httpx's log from now on."""
    _LOG_MASK.remember(_as_logged(secrets))
