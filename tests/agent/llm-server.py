#!/usr/bin/env python3
"""A scripted language-model server for kfix's tests.

Speaks the OpenAI chat-completions API (POST .../chat/completions) and the
Anthropic Messages API (POST .../v1/messages) on loopback only, answering
each request with the next step of a script (a JSON array).  A step is:

  {"text": "..."}                      plain answer
  {"tool": "NAME", "args": {...}}      one tool call (or "tools": [[name, args], ...])
  {"status": 429, "retry_after": 1}    an error status (body optional)
  {"raw": "not json"}                  a literal body, status 200 unless given
  {"truncate": 20, ...}                announce the full length, send 20 bytes, close
  {"delay": 2.5, ...}                  sleep before answering
  {"usage": [in, out]}                 token counts (default [100, 20]; with
                                       --estimate-usage, about 4 bytes a token
                                       of the request and of the answer)
  {"stop": "length"}                   finish/stop reason
  {"expect": ["text", ...], ...}       each text must be in a tool answer of the
                                       request (else status 400): the script only
                                       uses what kfix showed it

Every request is appended to --log as a JSON line {path, headers, body}.
The chosen port is written to --port-file once the socket listens.
"""
import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Script:
    def __init__(self, steps, log):
        self.steps = steps
        self.next = 0
        self.lock = threading.Lock()
        self.log = log

    def take(self, entry):
        with self.lock:
            with open(self.log, "a") as f:
                f.write(json.dumps(entry) + "\n")
            if self.next >= len(self.steps):
                return None
            step = self.steps[self.next]
            self.next += 1
            return step


def estimate_usage(step, request):
    """Token counts of a real model, roughly: about 4 bytes a token."""
    tools = step.get("tools") or ([[step["tool"], step.get("args", {})]] if "tool" in step else [])
    answer = len(step.get("text") or "") + sum(len(json.dumps(a)) for _, a in tools)
    return [max(1, len(json.dumps(request)) // 4), max(1, answer // 4)]


def tool_answers(body):
    """The tool results of a request, in either API's shape."""
    out = []
    for m in (body.get("messages") or []) if isinstance(body, dict) else []:
        if m.get("role") == "tool":
            out.append(m.get("content") or "")
        elif isinstance(m.get("content"), list):
            out += [b.get("content") or "" for b in m["content"]
                    if isinstance(b, dict) and b.get("type") == "tool_result"]
    return out


def missing(step, body):
    answers = tool_answers(body)
    return [t for t in step.get("expect", []) if not any(t in a for a in answers)]


def openai_body(step, n):
    msg = {"role": "assistant", "content": step.get("text")}
    tools = step.get("tools") or ([[step["tool"], step.get("args", {})]] if "tool" in step else [])
    if tools:
        msg["tool_calls"] = [
            {"id": "call_%d_%d" % (n, i), "type": "function",
             "function": {"name": name,
                          "arguments": args if isinstance(args, str) else json.dumps(args)}}
            for i, (name, args) in enumerate(tools)]
    usage = step.get("usage", [100, 20])
    finish = step.get("stop", "tool_calls" if tools else "stop")
    return {"id": "chatcmpl-%d" % n, "object": "chat.completion", "model": "scripted",
            "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                      "total_tokens": usage[0] + usage[1]}}


def anthropic_body(step, n):
    content = []
    if step.get("text"):
        content.append({"type": "text", "text": step["text"]})
    tools = step.get("tools") or ([[step["tool"], step.get("args", {})]] if "tool" in step else [])
    for i, (name, args) in enumerate(tools):
        content.append({"type": "tool_use", "id": "toolu_%d_%d" % (n, i),
                        "name": name, "input": args})
    usage = step.get("usage", [100, 20])
    stop = step.get("stop", "tool_use" if tools else "end_turn")
    return {"id": "msg_%d" % n, "type": "message", "role": "assistant",
            "model": "scripted", "content": content, "stop_reason": stop,
            "usage": {"input_tokens": usage[0], "output_tokens": usage[1]}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        headers = {k.lower(): v for k, v in self.headers.items()
                   if k.lower() in ("authorization", "x-api-key", "anthropic-version",
                                    "content-type")}
        n = self.server.script.next
        step = self.server.script.take({"path": self.path, "headers": headers, "body": body})
        if step is None:
            return self.answer(410, b'{"error": {"message": "script exhausted"}}')
        lost = missing(step, body)
        if lost:
            msg = "script expectation failed: %r is in no tool answer" % lost[0]
            return self.answer(400, json.dumps({"error": {"message": msg}}).encode())
        if self.server.estimate_usage and "usage" not in step:
            step = dict(step, usage=estimate_usage(step, body))
        if step.get("delay"):
            time.sleep(step["delay"])
        status = step.get("status", 200)
        if "raw" in step:
            data = step["raw"].encode()
        elif status != 200:
            data = json.dumps(step.get("body", {"error": {"message": "scripted %d" % status}})).encode()
        elif self.path.endswith("/v1/messages"):
            data = json.dumps(anthropic_body(step, n)).encode()
        else:
            data = json.dumps(openai_body(step, n)).encode()
        extra = {}
        if "retry_after" in step:
            extra["Retry-After"] = str(step["retry_after"])
        self.answer(status, data, extra, step.get("truncate"))

    def answer(self, status, data, extra=None, truncate=None):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        if truncate is not None:
            self.send_header("Connection", "close")
        self.end_headers()
        if truncate is not None:
            self.wfile.write(data[:truncate])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--estimate-usage", action="store_true",
                    help="report token counts estimated from the request and answer sizes")
    a = ap.parse_args()
    with open(a.script) as f:
        steps = json.load(f)
    # A test that fails half-way never stops us: leave with our parent.
    parent = os.getppid()

    def watch_parent():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)
    threading.Thread(target=watch_parent, daemon=True).start()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.script = Script(steps, a.log)
    server.estimate_usage = a.estimate_usage
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % server.server_address[1])
    os.rename(tmp, a.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
