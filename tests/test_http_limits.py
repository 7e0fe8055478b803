"""space/http_limits.py against a real uvicorn server and real sockets: a request whose headers never
finish is cut off (slowloris), a complete one on the same server is answered (the positive control)."""

from __future__ import annotations

import socket
import threading

import pytest
import uvicorn

from space.http_limits import HeaderDeadline
from tests.conftest_ui import free_port


class _Fast(HeaderDeadline):
    header_read_timeout = 0.5


async def _app(scope, receive, send) -> None:
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


@pytest.fixture(scope="module")
def port():
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(_app, host="127.0.0.1", port=port, http=_Fast, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        threading.Event().wait(0.05)
    yield port
    server.should_exit = True
    thread.join(10)


def _read_all(sock: socket.socket) -> bytes:
    sock.settimeout(10)  # far above the 0.5 s deadline: a connection still open then fails the test
    out = b""
    while chunk := sock.recv(4096):
        out += chunk
    return out


def test_half_sent_headers_are_cut_off(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        assert _read_all(sock) == b""  # closed by the server, no answer


def test_a_second_request_on_a_kept_alive_connection_is_timed_too(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        first = b""
        while not first.endswith(b"ok"):
            first += sock.recv(4096) or pytest.fail(f"closed after {first!r}")
        sock.sendall(b"GET / HTTP/1.1\r\nHo")
        assert _read_all(sock) == b""


def test_a_complete_request_is_answered(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = _read_all(sock)
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"ok")
