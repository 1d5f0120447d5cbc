#!/usr/bin/env python3
"""Plays systemd's part for kfixd in tests: listens on a NOTIFY_SOCKET,
optionally passes listening sockets (LISTEN_FDS), starts the program and
records every notification, one per line, in a file.

usage: notify.py LOGFILE [--listen PORT] -- PROGRAM ARGS...
"""
import os
import socket
import sys
import tempfile


def main():
    args = sys.argv[1:]
    log = args.pop(0)
    listen = None
    if args[0] == "--listen":
        listen = int(args[1])
        args = args[2:]
    assert args.pop(0) == "--"
    d = tempfile.mkdtemp(prefix="kfix-notify.")
    path = os.path.join(d, "notify")
    ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    ns.bind(path)
    ls = None
    if listen is not None:
        ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("127.0.0.1", listen))
        ls.listen(16)
    pid = os.fork()
    if pid == 0:
        env = dict(os.environ, NOTIFY_SOCKET=path)
        if ls is not None:
            os.dup2(ls.fileno(), 3)
            env["LISTEN_FDS"] = "1"
            env["LISTEN_PID"] = str(os.getpid())
        os.execvpe(args[0], args, env)
    with open(log, "a", buffering=1) as out:
        out.write("PID=%d\n" % pid)
        ns.settimeout(0.2)
        while True:
            try:
                msg = ns.recv(4096).decode(errors="replace")
                for line in msg.split("\n"):
                    out.write(line + "\n")
            except socket.timeout:
                pass
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                out.write("EXIT=%d\n" % (os.waitstatus_to_exitcode(status)))
                break
    os.unlink(path)
    os.rmdir(d)


main()
