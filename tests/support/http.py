"""A real HTTP server on 127.0.0.1 for download tests, with routes that inject faults.

Each route serves bytes with one behaviour: plain (with Range support), N failures with 500 first, a
connection dropped mid-body, a Content-Length longer than the body, a body that stalls, a redirect, a
delay before answering, a 206 whose body restarts at byte 0. The server counts requests per path and records
the Range header of each.
"""

from __future__ import annotations

import io
import socket
import tarfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Route:
    data: bytes = b""
    fault: str = "none"  # none, status, fail500, drop, short, stall, redirect, delay, restart206
    times: int = -1  # how many requests get the fault; -1 = all of them
    status: int = 200
    location: str = ""
    delay: float = 0.0


class FaultServer:
    def __init__(self):
        self.routes: dict[str, Route] = {}
        self.hits: Counter = Counter()
        self.ranges: dict[str, list[str | None]] = {}
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                owner._handle(self)

        class Server(ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                pass  # clients hanging up mid-body is what these tests do on purpose

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def add(self, path: str, data: bytes = b"", **kw) -> str:
        self.routes[path] = Route(data=data, **kw)
        return self.url(path)

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # -- behaviour ---------------------------------------------------------------------------------
    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        path = h.path.split("?", 1)[0]
        with self.lock:
            self.hits[path] += 1
            count = self.hits[path]
            self.ranges.setdefault(path, []).append(h.headers.get("Range"))
        route = self.routes.get(path)
        if route is None:
            return self._send(h, 404, b"not found")
        faulty = route.times < 0 or count <= route.times
        fault = route.fault if faulty else "none"
        try:
            if fault == "status":
                return self._send(h, route.status, b"error")
            if fault == "fail500":
                return self._send(h, 500, b"internal error")
            if fault == "redirect":
                h.send_response(route.status)
                h.send_header("Location", route.location)
                h.send_header("Content-Length", "0")
                h.end_headers()
                return
            if fault == "delay":
                time.sleep(route.delay)
                return self._serve(h, route.data)
            if fault == "drop":
                # Never past the middle of the file, so resuming makes no progress beyond it.
                return self._serve(h, route.data, cut=len(route.data) // 2)
            if fault == "restart206":
                # A broken cache or proxy: drops the first answer midway, then answers the Range request with
                # 206 and the right Content-Range header, but a body that starts again at byte 0.
                if h.headers.get("Range"):
                    return self._serve(h, route.data, restart=True)
                return self._serve(h, route.data, cut=len(route.data) // 2)
            if fault == "short":
                return self._serve(h, route.data, extra=100)
            if fault == "stall":
                return self._serve(h, route.data, stall=route.delay)
            return self._serve(h, route.data)
        except OSError:  # the client gave up (timeout test): nothing to answer
            h.close_connection = True

    @staticmethod
    def _send(h, code: int, body: bytes) -> None:
        h.send_response(code)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    @staticmethod
    def _serve(h, data: bytes, cut: int | None = None, extra: int = 0, stall: float = 0.0,
               restart: bool = False) -> None:
        start = 0
        header = h.headers.get("Range")
        if header and header.startswith("bytes=") and header.endswith("-"):
            start = int(header[6:-1])
            if start >= len(data):
                return FaultServer._send(h, 416, b"")
        body = data if restart else data[start:]
        h.send_response(206 if start else 200)
        if start:
            h.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        h.send_header("Accept-Ranges", "bytes")
        h.send_header("Content-Length", str(len(body) + extra))
        h.end_headers()
        if stall:
            h.wfile.write(body[: len(body) // 2])
            h.wfile.flush()
            time.sleep(stall)
            body = body[len(body) // 2:]
        if cut is not None or extra:
            h.wfile.write(body[: max(0, cut - start)] if cut is not None else body)
            h.wfile.flush()
            h.close_connection = True
            h.connection.shutdown(socket.SHUT_RDWR)
            return
        h.wfile.write(body)


def tiny_tarball() -> bytes:
    """A gzipped tar of one source tree `t-1/` holding a 3-byte CMakeLists.txt: what the download tests serve."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        info = tarfile.TarInfo("t-1/CMakeLists.txt")
        info.size = 3
        tf.addfile(info, io.BytesIO(b"abc"))
    return buf.getvalue()
