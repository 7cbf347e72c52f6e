"""Real servers for the client's tests: `kairos index` builds small SciFact indexes, `kairos
serve` serves them (port 0, the address read from its "serving" log line), `bin/fakellm`
answers the chat stages from a script, and FailingLLM (here, on the standard library) is an
OpenAI-compatible server that fails the way a test asks.

The binaries are the repository's bin/kairos and bin/fakellm (`make test-python` builds them),
or $KAIROS_BIN and $KAIROS_FAKELLM; the data is ../shared beside the repository, or
$KAIROS_SHARED. A missing one fails the tests, naming it: nothing here is skipped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable, List, Optional

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]


def _need(path: Path, what: str) -> Path:
    if not path.exists():
        raise RuntimeError(f"{what} not found at {path}: run `make test-python` from the repository root, "
                           "which builds bin/kairos and bin/fakellm (or set $KAIROS_BIN, $KAIROS_FAKELLM, $KAIROS_SHARED)")
    return path


def kairos_bin() -> Path:
    return _need(Path(os.environ.get("KAIROS_BIN") or REPO / "bin" / "kairos"), "kairos")


def fakellm_bin() -> Path:
    return _need(Path(os.environ.get("KAIROS_FAKELLM") or REPO / "bin" / "fakellm"), "fakellm")


def shared() -> Path:
    return _need(Path(os.environ.get("KAIROS_SHARED") or REPO.parent / "shared"), "the shared data folder")


def scifact_slice(dst: Path, start: int, stop: int) -> Path:
    """Lines [start, stop) of SciFact's corpus, written to dst."""
    src = _need(shared() / "data" / "beir-scifact" / "corpus.jsonl", "SciFact's corpus")
    with open(src, encoding="utf-8") as f, open(dst, "w", encoding="utf-8") as out:
        for i, line in enumerate(f):
            if i >= stop:
                break
            if i >= start:
                out.write(line)
    return dst


def build_index(input_path: Path, index_dir: Path) -> Path:
    """A BM25 index of input_path, built by `kairos index`."""
    run = subprocess.run([str(kairos_bin()), "index", "--quiet", "--input", str(input_path), "--index", str(index_dir)],
                         capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        raise RuntimeError(f"kairos index {input_path}: exit {run.returncode}\n{run.stdout}\n{run.stderr}")
    return index_dir


def _wait_file(path: Path, proc: subprocess.Popen, ready, what: str, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
        found = ready(text)
        if found:
            return found
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode} before it was ready:\n{text}")
        time.sleep(0.05)
    raise RuntimeError(f"{what} not ready within {timeout:g} s:\n{path.read_text(errors='replace')}")


def _die_with_parent() -> None:
    """In the child, before exec: on Linux, SIGTERM when the test process dies, so that a
    runner killed mid-run (a CI timeout, Ctrl-C twice) leaves no server behind."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: stop() is the only cleanup


class Process:
    """A child process whose output goes to files under workdir, stopped by stop()."""

    def __init__(self, args: List[str], workdir: Path, name: str) -> None:
        self.name = name
        self.out_path = workdir / f"{name}.out"
        self.log_path = workdir / f"{name}.log"
        self._out = open(self.out_path, "w")
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen(args, stdout=self._out, stderr=self._log, stdin=subprocess.DEVNULL,
                                     preexec_fn=_die_with_parent)

    def _ready(self, wait: Callable[[], str]) -> str:
        """wait's answer, or the process stopped and wait's error raised."""
        try:
            return wait()
        except BaseException:
            self.stop()
            raise

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._out.close()
        self._log.close()


class FakeLLM(Process):
    """bin/fakellm answering each chat stage with the script's text."""

    def __init__(self, script: Path, workdir: Path, name: str = "fakellm") -> None:
        super().__init__([str(fakellm_bin()), "-script", str(script)], workdir, name)
        self.url = self._ready(lambda: _wait_file(self.out_path, self.proc,
                                                  lambda t: t.split("\n")[0].strip() if t.endswith("\n") else "", name))


class Serve(Process):
    """`kairos serve` on 127.0.0.1, port 0; url is where it listens."""

    def __init__(self, indexes: List[str], workdir: Path, name: str, llm_url: Optional[str] = None,
                 flags: Optional[List[str]] = None) -> None:
        args = [str(kairos_bin()), "serve", "--addr", "127.0.0.1:0", "--log-format", "json", "--chat-store", ""]
        for ix in indexes:
            args += ["--index", ix]
        if llm_url:
            # --chat-trace: the tests read each turn's stages.
            args += ["--llm-url", llm_url, "--llm-model", "fake", "--chat-trace"]
        args += flags or []
        super().__init__(args, workdir, name)

        def serving(text: str) -> str:
            for line in text.splitlines():
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if rec.get("msg") == "serving":
                    return "http://" + rec["addr"]
            return ""

        self.url = self._ready(lambda: _wait_file(self.log_path, self.proc, serving, f"kairos serve ({name})"))


class FailingLLM:
    """An OpenAI-compatible server that fails by the first segment of its path, so that one
    instance serves every case: http://HOST:PORT/MODE/v1 with MODE

    - fail500: HTTP 500 (kairos answers 502)
    - ratelimit: HTTP 429 with Retry-After: 7 (kairos answers 503, Retry-After 7)
    - hang: no answer until the caller goes away (kairos answers 504 past --llm-timeout)
    - partial: answers as `upstream` (bin/fakellm) does, except that a streamed completion
      stops after its first sentence and a half, without [DONE]: the turn fails after
      kairos has streamed that sentence (an error event).
    """

    def __init__(self, upstream: Optional[str] = None) -> None:
        outer = self
        self.upstream = upstream
        self.calls: List[str] = []

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet: the test prints what matters
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                mode = self.path.strip("/").split("/")[0]
                outer.calls.append(mode)
                if mode == "fail500":
                    self._send(500, b"upstream exploded", "text/plain")
                elif mode == "ratelimit":
                    self._send(429, b'{"error": "slow down"}', "application/json", {"Retry-After": "7"})
                elif mode == "hang":
                    self.connection.settimeout(30)
                    try:
                        self.rfile.read(1)  # returns when kairos gives up and closes
                    except OSError:
                        pass
                    self.close_connection = True
                elif mode == "partial":
                    self._partial(json.loads(body))
                else:
                    self._send(404, b"unknown mode", "text/plain")

            def _send(self, status: int, body: bytes, ctype: str, headers: Optional[dict] = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def _partial(self, req: dict) -> None:
                stream = bool(req.get("stream"))
                req["stream"] = False
                assert outer.upstream, "partial needs the upstream fake LLM"
                up = urllib.request.Request(outer.upstream + "/chat/completions", data=json.dumps(req).encode(),
                                            headers={"Content-Type": "application/json"})
                with urllib.request.urlopen(up, timeout=30) as r:
                    answer = r.read()
                if not stream:
                    self._send(200, answer, "application/json")
                    return
                text = json.loads(answer)["choices"][0]["message"]["content"]
                cut = text.index(". ") + 2
                cut += (len(text) - cut) // 2
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                for piece in (text[:cut // 2], text[cut // 2:cut]):
                    chunk = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": piece}}]}
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                    self.wfile.flush()
                self.close_connection = True  # the stream breaks here: no finish_reason, no [DONE]

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def url(self, mode: str) -> str:
        return f"{self.base}/{mode}/v1"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class ReplayServer:
    """Answers every request for a path with the (status, content type, body) set for it:
    a server's real answers, changed by a test, replayed to the client."""

    def __init__(self) -> None:
        self.answers: dict = {}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _answer(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, ctype, body = outer.answers.get(self.path, (404, "application/json", b'{"error": "no answer set"}'))
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_DELETE = _answer

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
