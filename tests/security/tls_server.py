"""A real HTTPS server on 127.0.0.1 that wants basic auth: a self-signed certificate made with openssl for
127.0.0.1, files served from a dict, hits counted per path. Clients trust it through REQUESTS_CA_BUNDLE."""

from __future__ import annotations

import base64
import ssl
import subprocess
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.support.tools import need


def make_certificate(folder: Path) -> tuple[Path, Path]:
    """(certificate, key) for 127.0.0.1, valid a day."""
    need("openssl")
    folder.mkdir(parents=True, exist_ok=True)
    cert, key = folder / "cert.pem", folder / "key.pem"
    proc = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
                           "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
                           "-addext", "subjectAltName=IP:127.0.0.1"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return cert, key


class AuthServer:
    def __init__(self, folder: Path, user: str, password: str):
        self.files: dict[str, bytes] = {}
        self.hits: Counter = Counter()
        self.refused = 0
        self.cert, key = make_certificate(folder)
        wanted = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                path = self.path.split("?", 1)[0]
                if self.headers.get("Authorization") != wanted:
                    owner.refused += 1
                    return self._send(401, b"authentication required", {"WWW-Authenticate": 'Basic realm="t"'})
                owner.hits[path] += 1
                data = owner.files.get(path)
                return self._send(404, b"not found") if data is None else self._send(200, data)

            def _send(self, code: int, body: bytes, headers: dict | None = None):
                self.send_response(code)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, key)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def base(self, userinfo: str = "") -> str:
        return f"https://{userinfo + '@' if userinfo else ''}127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
