"""TLS and mutual TLS on the gRPC port (--grpc-use-ssl, --grpc-use-ssl-mutual),
certificates re-read from disk, the start-up checks of the files, and the
plaintext health port (--grpc-health-port). Certificates are made here with
Debian's openssl CLI."""

import os
import shutil
import socket
import subprocess
import tempfile
import time
import unittest

import harness
import grpc
import grpc_service_pb2
import grpc_service_pb2_grpc
import health_pb2
import health_pb2_grpc

TMP = tempfile.mkdtemp(prefix="tls", dir=os.environ.get("TEST_TMPDIR"))
EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
SAN = "subjectAltName=IP:127.0.0.1,DNS:localhost\n"


def path(name):
    return os.path.join(TMP, name)


def openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def make_ca(name):
    """<name>.pem and <name>.key: a self-signed CA."""
    openssl("req", "-x509", *EC, "-keyout", path(name + ".key"), "-out",
            path(name + ".pem"), "-days", "2", "-subj", "/CN=" + name)


def make_cert(name, ca, days="2"):
    """<name>.pem and <name>.key signed by `ca`; days may be negative
    (an expired certificate)."""
    openssl("req", *EC, "-keyout", path(name + ".key"), "-out", path(name + ".csr"),
            "-subj", "/CN=" + name)
    ext = path(name + ".ext")
    with open(ext, "w") as f:
        f.write(SAN)
    openssl("x509", "-req", "-in", path(name + ".csr"), "-CA", path(ca + ".pem"),
            "-CAkey", path(ca + ".key"), "-CAcreateserial", "-out", path(name + ".pem"),
            "-days", days, "-extfile", ext)


def make_future_cert(name, ca):
    """<name>.pem, valid only from 2099 (openssl ca sets the start date)."""
    db = path(name + "_db")
    os.makedirs(db, exist_ok=True)
    open(os.path.join(db, "index.txt"), "w").close()
    with open(os.path.join(db, "serial"), "w") as f:
        f.write("01\n")
    cnf = path(name + ".cnf")
    with open(cnf, "w") as f:
        f.write("[ca]\ndefault_ca = d\n[d]\ndatabase = %s/index.txt\n"
                "new_certs_dir = %s\nserial = %s/serial\ndefault_md = sha256\n"
                "policy = p\n[p]\ncommonName = supplied\n" % (db, db, db))
    openssl("req", *EC, "-keyout", path(name + ".key"), "-out", path(name + ".csr"),
            "-subj", "/CN=" + name)
    openssl("ca", "-batch", "-config", cnf, "-cert", path(ca + ".pem"), "-keyfile",
            path(ca + ".key"), "-in", path(name + ".csr"), "-out", path(name + ".pem"),
            "-startdate", "20990101000000Z", "-enddate", "20991231000000Z", "-notext")


def read(name):
    with open(path(name), "rb") as f:
        return f.read()


make_ca("ca")
make_ca("other_ca")
make_ca("new_ca")
make_cert("server", "ca")
make_cert("client", "ca")
make_cert("other_client", "other_ca")
make_cert("new_server", "new_ca")
make_cert("expired", "ca", days="-1")
make_future_cert("future", "ca")

TLS = ["--grpc-use-ssl=true", "--grpc-server-cert=" + path("server.pem"),
       "--grpc-server-key=" + path("server.key")]
MUTUAL = ["--grpc-use-ssl-mutual=true", "--grpc-server-cert=" + path("server.pem"),
          "--grpc-server-key=" + path("server.key"),
          "--grpc-root-cert=" + path("ca.pem")]
TIMEOUT = 5 * harness.SLOW


def secure_stub(server, root, key=None, chain=None):
    creds = grpc.ssl_channel_credentials(root_certificates=read(root),
                                         private_key=key and read(key),
                                         certificate_chain=chain and read(chain))
    channel = grpc.secure_channel(server.address, creds)
    return channel, grpc_service_pb2_grpc.GRPCInferenceServiceStub(channel)


def plain_stub(address):
    channel = grpc.insecure_channel(address)
    return channel, grpc_service_pb2_grpc.GRPCInferenceServiceStub(channel)


def live(stub):
    return stub.ServerLive(grpc_service_pb2.ServerLiveRequest(), timeout=TIMEOUT).live


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TlsTest(harness.ServerTestCase):
    ARGS = TLS

    def test_tls_client_is_served(self):
        channel, stub = secure_stub(self.server, "ca.pem")
        with channel:
            self.assertTrue(live(stub))
            reply = stub.ModelInfer(harness.simple_request(), timeout=TIMEOUT)
            self.assertEqual(reply.model_name, "simple")

    def test_plaintext_client_gets_no_answer(self):
        channel, stub = plain_stub(self.server.address)
        with channel, self.assertRaises(grpc.RpcError) as e:
            live(stub)
        self.assertEqual(e.exception.code(), grpc.StatusCode.UNAVAILABLE)

    def test_client_trusting_another_ca_is_refused(self):
        channel, stub = secure_stub(self.server, "other_ca.pem")
        with channel, self.assertRaises(grpc.RpcError) as e:
            live(stub)
        self.assertEqual(e.exception.code(), grpc.StatusCode.UNAVAILABLE)


class MutualTlsTest(harness.ServerTestCase):
    ARGS = MUTUAL

    def test_client_with_certificate_is_served(self):
        channel, stub = secure_stub(self.server, "ca.pem", "client.key", "client.pem")
        with channel:
            self.assertTrue(live(stub))

    def test_refused_without_or_with_a_foreign_certificate(self):
        for key, chain in ((None, None), ("other_client.key", "other_client.pem")):
            channel, stub = secure_stub(self.server, "ca.pem", key, chain)
            with channel:
                with self.assertRaises(grpc.RpcError) as e:
                    live(stub)
                self.assertEqual(e.exception.code(), grpc.StatusCode.UNAVAILABLE,
                                 chain)
                health = health_pb2_grpc.HealthStub(channel)
                with self.assertRaises(grpc.RpcError):
                    health.Check(health_pb2.HealthCheckRequest(), timeout=TIMEOUT)


class RotationTest(unittest.TestCase):
    def test_replaced_certificate_is_picked_up(self):
        rot = os.path.join(TMP, "rotation")
        os.makedirs(rot, exist_ok=True)
        cert, key = os.path.join(rot, "server.pem"), os.path.join(rot, "server.key")
        shutil.copy(path("server.pem"), cert)
        shutil.copy(path("server.key"), key)
        server = harness.Server("--grpc-use-ssl=true", "--grpc-server-cert=" + cert,
                                "--grpc-server-key=" + key,
                                "--grpc-ssl-refresh-interval-secs=1")
        try:
            channel, stub = secure_stub(server, "ca.pem")
            with channel:
                self.assertTrue(live(stub))
            # Whole files renamed into place: the watcher never sees half.
            for src, dst in (("new_server.key", key), ("new_server.pem", cert)):
                shutil.copy(path(src), dst + ".tmp")
                os.rename(dst + ".tmp", dst)
            deadline = time.monotonic() + 15 * harness.SLOW
            while True:
                channel, stub = secure_stub(server, "new_ca.pem")
                try:
                    with channel:
                        self.assertTrue(live(stub))
                    break
                except grpc.RpcError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.5)
            channel, stub = secure_stub(server, "ca.pem")
            with channel, self.assertRaises(grpc.RpcError):
                live(stub)
        finally:
            harness.stop_clean(server)


class HealthPortTest(harness.ServerTestCase):
    ARGS = MUTUAL + ["--grpc-health-address=127.0.0.1",
                     "--grpc-health-port=%d" % free_port()]

    def health_address(self):
        self.assertTrue(self.server.wait_text("Started GRPCHealthService"))
        return "127.0.0.1:%d" % self.server.health_port

    def test_plaintext_check_and_watch_answer(self):
        with grpc.insecure_channel(self.health_address()) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            reply = health.Check(health_pb2.HealthCheckRequest(), timeout=TIMEOUT)
            self.assertEqual(reply.status, health_pb2.HealthCheckResponse.SERVING)
            watch = health.Watch(health_pb2.HealthCheckRequest(), timeout=TIMEOUT)
            self.assertEqual(next(watch).status, health_pb2.HealthCheckResponse.SERVING)
            watch.cancel()

    def test_other_rpcs_are_unavailable_there(self):
        channel, stub = plain_stub(self.health_address())
        with channel:
            with self.assertRaises(grpc.RpcError) as e:
                live(stub)
            self.assertEqual(e.exception.code(), grpc.StatusCode.UNAVAILABLE)
            self.assertIn("grpc.health.v1.Health only", e.exception.details())
            with self.assertRaises(grpc.RpcError) as e:
                list(stub.ModelStreamInfer(iter([harness.simple_request()]),
                                           timeout=TIMEOUT))
            self.assertEqual(e.exception.code(), grpc.StatusCode.UNAVAILABLE)
            with self.assertRaises(grpc.RpcError) as e:
                channel.unary_unary("/no.Such/Method")(b"", timeout=TIMEOUT)
            self.assertEqual(e.exception.code(), grpc.StatusCode.UNAVAILABLE)

    def test_main_port_still_needs_mutual_tls(self):
        channel, stub = secure_stub(self.server, "ca.pem", "client.key", "client.pem")
        with channel:
            self.assertTrue(live(stub))
            reply = stub.ModelInfer(harness.simple_request(), timeout=TIMEOUT)
            self.assertEqual(reply.model_name, "simple")
        channel, stub = plain_stub(self.server.address)
        with channel, self.assertRaises(grpc.RpcError):
            live(stub)


def start_fails(*args):
    """Runs nereid with args; returns its output, after checking that it
    exited non-zero."""
    code, out = harness.run_nereid("--grpc-address=127.0.0.1", "--grpc-port=0",
                                   "--model-repository=" + harness.empty_repo(), *args)
    if code == 0:
        raise AssertionError("nereid started with %s:\n%s" % (args, out))
    return out


class StartupChecksTest(unittest.TestCase):
    def check(self, args, *needles):
        out = start_fails(*args)
        for needle in needles:
            self.assertIn(needle, out)

    def test_missing_file(self):
        missing = path("missing.pem")
        self.check(["--grpc-use-ssl", "--grpc-server-cert=" + missing,
                    "--grpc-server-key=" + path("server.key")],
                   "--grpc-server-cert", missing, "No such file")
        self.check(MUTUAL[:3] + ["--grpc-root-cert=" + missing], "--grpc-root-cert",
                   missing)

    def test_not_pem(self):
        junk = path("junk.pem")
        with open(junk, "w") as f:
            f.write("not a certificate\n")
        self.check(["--grpc-use-ssl", "--grpc-server-cert=" + junk,
                    "--grpc-server-key=" + path("server.key")],
                   "--grpc-server-cert", junk, "not a PEM certificate")
        self.check(["--grpc-use-ssl", "--grpc-server-cert=" + path("server.pem"),
                    "--grpc-server-key=" + junk], "--grpc-server-key", junk,
                   "not a PEM private key")
        self.check(MUTUAL[:3] + ["--grpc-root-cert=" + junk], "--grpc-root-cert", junk)

    def test_expired_certificate(self):
        self.check(["--grpc-use-ssl", "--grpc-server-cert=" + path("expired.pem"),
                    "--grpc-server-key=" + path("expired.key")],
                   "--grpc-server-cert", path("expired.pem"), "has expired")
        self.check(["--grpc-use-ssl", "--grpc-server-cert=" + path("future.pem"),
                    "--grpc-server-key=" + path("future.key")],
                   "--grpc-server-cert", path("future.pem"), "is not valid yet")
        self.check(MUTUAL[:3] + ["--grpc-root-cert=" + path("expired.pem")],
                   "--grpc-root-cert", path("expired.pem"), "has expired")

    def test_key_of_another_certificate(self):
        self.check(["--grpc-use-ssl", "--grpc-server-cert=" + path("server.pem"),
                    "--grpc-server-key=" + path("client.key")],
                   "--grpc-server-key", path("client.key"), "does not match")

    def test_flags_that_do_not_go_together(self):
        self.check(["--grpc-server-cert=" + path("server.pem")],
                   "--grpc-server-cert", path("server.pem"), "without --grpc-use-ssl")
        self.check(["--grpc-root-cert=" + path("ca.pem")], "--grpc-root-cert",
                   "without --grpc-use-ssl")
        self.check(["--grpc-use-ssl"], "--grpc-use-ssl needs --grpc-server-cert")
        self.check(["--grpc-use-ssl", "--grpc-server-cert=" + path("server.pem")],
                   "--grpc-server-key")
        self.check(MUTUAL[:3], "--grpc-use-ssl-mutual needs --grpc-root-cert")
        self.check(["--grpc-health-port=%d" % free_port()], "--grpc-health-port")

    def test_root_that_does_not_verify_the_server_only_warns(self):
        server = harness.Server(*(MUTUAL[:3] + ["--grpc-root-cert=" +
                                                path("other_ca.pem")]))
        try:
            self.assertIn("does not verify --grpc-server-cert", server.text())
            channel, stub = secure_stub(server, "ca.pem", "other_client.key",
                                        "other_client.pem")
            with channel:
                self.assertTrue(live(stub))
        finally:
            harness.stop_clean(server)


if __name__ == "__main__":
    harness.main()
