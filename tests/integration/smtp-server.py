#!/usr/bin/env python3
"""A loopback SMTP server for the mail tests (aiosmtpd).

usage: smtp-server.py DIR
Listens on 127.0.0.1 on a free port, written to DIR/port.  Before each
transaction it reads DIR/mode: "ok" (accept), "tempfail" (451 to DATA),
"permfail" (550 to RCPT), "drop" (close the connection after the data
arrived, before answering).  Each accepted message is stored byte for
byte as DIR/msg-N.eml with its envelope in DIR/msg-N.env.  With the
environment variable SMTP_AUTH=user:password, AUTH is offered and required;
with SMTP_TLS=starttls:CERT:KEY STARTTLS is offered and required, with
SMTP_TLS=implicit:CERT:KEY the server speaks TLS from the start (smtps).
"""
import os
import signal
import socket
import ssl
import sys
import threading

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

DIR = sys.argv[1]
count = 0
lock = threading.Lock()


def mode():
    try:
        with open(os.path.join(DIR, "mode")) as f:
            return f.read().strip()
    except FileNotFoundError:
        return "ok"


class Handler:
    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if mode() == "permfail":
            return "550 5.1.1 mailbox unavailable"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        global count
        m = mode()
        if m == "tempfail":
            return "451 4.3.0 try again later"
        if m == "drop":
            server.transport.abort()
            return "421 gone"
        with lock:
            count += 1
            n = count
        base = os.path.join(DIR, "msg-%d" % n)
        with open(base + ".env", "w") as f:
            f.write("from %s\n" % envelope.mail_from)
            for r in envelope.rcpt_tos:
                f.write("to %s\n" % r)
        # whole or not at all for readers polling the folder
        tmp = os.path.join(DIR, ".msg-%d.tmp" % n)
        with open(tmp, "wb") as f:
            f.write(envelope.original_content)
        os.rename(tmp, base + ".eml")
        return "250 2.0.0 queued as %d" % n


def authenticator(server, session, envelope, mechanism, auth_data):
    want = os.environ.get("SMTP_AUTH", "").split(":", 1)
    ok = (isinstance(auth_data, LoginPassword)
          and auth_data.login.decode() == want[0]
          and auth_data.password.decode() == want[1])
    return AuthResult(success=ok, handled=False)


def main():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    kw = {}
    if os.environ.get("SMTP_AUTH"):
        kw = dict(authenticator=authenticator, auth_required=True,
                  auth_require_tls=False)
    tls = os.environ.get("SMTP_TLS")
    if tls:
        how, cert, key = tls.split(":")
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(cert, key)
        if how == "starttls":
            kw.update(tls_context=ctx, require_starttls=True)
        else:
            kw.update(ssl_context=ctx)
    c = Controller(Handler(), hostname="127.0.0.1", port=port,
                   data_size_limit=64 * 1024 * 1024, **kw)
    c.start()
    with open(os.path.join(DIR, "port.tmp"), "w") as f:
        f.write(str(port))
    os.rename(os.path.join(DIR, "port.tmp"), os.path.join(DIR, "port"))
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: done.set())
    done.wait()
    c.stop()


main()
