"""Limits uvicorn does not have on its own, for `python -m space`.

uvicorn keeps a connection open for as long as its client takes to send the request headers: 1,000
half-sent requests held a web process for the whole test (a slowloris), and with a 1,024-descriptor limit
that exhausts it. `HeaderDeadline` closes a connection whose request line and headers are not complete
within HEADER_READ_TIMEOUT seconds of its opening (or of the end of its previous response);
`MAX_CONNECTIONS` goes to uvicorn's `limit_concurrency`, which answers 503 beyond it instead of running out
of descriptors.
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_READ_TIMEOUT = 10.0  # seconds for a request's headers; a browser or client sends them at once
MAX_CONNECTIONS = 800  # open connections and tasks, below the usual 1,024-descriptor limit


class HeaderDeadline(H11Protocol):
    """uvicorn's h11 protocol with a deadline for reading each request's headers."""

    header_read_timeout = HEADER_READ_TIMEOUT

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._deadline: asyncio.TimerHandle | None = None
        super().connection_made(transport)
        self._arm()

    def _reading_headers(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _arm(self) -> None:
        if self._deadline is None:
            self._deadline = self.loop.call_later(self.header_read_timeout, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._reading_headers():
            self._arm()  # the clock runs from the first byte of a request, not from each byte
        else:
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._disarm()  # idle keep-alive is uvicorn's timeout_keep_alive; a new request re-arms ours

    def _expire(self) -> None:
        self._deadline = None
        # An upgraded connection (websocket) has another protocol now: not ours to close.
        if (
            self._reading_headers()
            and self.transport.get_protocol() is self
            and not self.transport.is_closing()
        ):
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)
