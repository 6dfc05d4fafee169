"""TLS (REWARDD_TLS_CA) and the messages that name a wrong address or
transport, against real `rewardd serve` processes with and without TLS."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
import unittest
from unittest import mock

import _support  # noqa: F401
from _support import Server

import rewardd_client
from rewardd_client import Client, ConfigError, RPCError, remote


def self_signed(directory: str) -> tuple[str, str]:
    """A certificate for 127.0.0.1 and localhost and its key, made by openssl."""
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
        check=True, capture_output=True,
    )
    return cert, key


@unittest.skipIf(shutil.which("openssl") is None, "openssl is not installed: the TLS server needs a certificate it makes")
class TLSTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="rewardd-tls-")
        cls.addClassCleanup(shutil.rmtree, cls.dir, True)
        cls.cert, key = self_signed(cls.dir)
        cls.tls = Server("--tls-cert", cls.cert, "--tls-key", key)
        cls.addClassCleanup(cls.tls.stop)
        cls.plain = Server()
        cls.addClassCleanup(cls.plain.stop)

    def client(self, **kw):
        c = Client(**kw)
        self.addCleanup(c.close)
        return c

    def test_scores_over_tls(self):
        c = self.client(addr=self.tls.grpc_addr, tls_ca=self.cert)
        self.assertEqual(c.list_functions().config_fingerprint, self.tls.fingerprint)
        res = c.score(["q", "q"], ["<answer>42</answer>", "<answer>41</answer>"], {"answer": ["42", "42"]}, functions=["accuracy"])
        self.assertEqual(res.functions["accuracy"].rewards(), [1.0, 0.0])

    def test_trl_functions_over_tls_from_the_environment(self):
        env = {"REWARDD_ADDR": self.tls.grpc_addr, "REWARDD_TLS_CA": self.cert}
        with mock.patch.dict(os.environ, env):
            rewardd_client.reset()
            self.addCleanup(rewardd_client.reset)
            got = remote.accuracy(prompts=["q"], completions=["<answer>7</answer>"], answer=["7"])
        self.assertEqual(got, [1.0])

    def test_plaintext_client_at_a_tls_port_is_told_so_at_once(self):
        c = self.client(addr=self.tls.grpc_addr, max_attempts=8)
        t0 = time.monotonic()
        with self.assertRaises(RPCError) as ctx:
            c.list_functions()
        self.assertEqual(ctx.exception.attempts, 1)  # not retried for 11 to 23 s
        self.assertLess(time.monotonic() - t0, 10)
        self.assertIn("speaks TLS", str(ctx.exception))
        self.assertIn("REWARDD_TLS_CA", str(ctx.exception))

    def test_tls_client_at_a_plaintext_port_is_told_so(self):
        c = self.client(addr=self.plain.grpc_addr, tls_ca=self.cert)
        with self.assertRaises(RPCError) as ctx:
            c.list_functions()
        self.assertIn("does not speak TLS", str(ctx.exception))

    def test_ca_that_is_not_a_certificate(self):
        missing = os.path.join(self.dir, "missing.pem")
        with self.assertRaises(ConfigError) as ctx:
            Client(addr=self.tls.grpc_addr, tls_ca=missing)
        self.assertIn("REWARDD_TLS_CA", str(ctx.exception))
        not_pem = os.path.join(self.dir, "key-only.txt")
        with open(not_pem, "w") as f:
            f.write("hello\n")
        with self.assertRaises(ConfigError) as ctx:
            Client(addr=self.tls.grpc_addr, tls_ca=not_pem)
        self.assertIn("no PEM certificate", str(ctx.exception))


class AddressTest(unittest.TestCase):
    def test_a_url_is_refused_naming_host_port(self):
        for addr, want in (
            ("http://127.0.0.1:50051", "REWARDD_ADDR=127.0.0.1:50051"),
            ("grpc://rewardd:50051/", "REWARDD_ADDR=rewardd:50051"),
            ("https://rewardd.internal:443", "REWARDD_TLS_CA"),
        ):
            with self.subTest(addr=addr):
                with self.assertRaises(ConfigError) as ctx:
                    Client(addr=addr)
                self.assertIn("is a URL", str(ctx.exception))
                self.assertIn(want, str(ctx.exception))
        with mock.patch.dict(os.environ, {"REWARDD_ADDR": "http://127.0.0.1:50051"}):
            with self.assertRaises(ConfigError):
                Client.from_env()


if __name__ == "__main__":
    unittest.main()
