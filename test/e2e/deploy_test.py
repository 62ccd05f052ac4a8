"""The Kubernetes manifests under deploy/, checked against the server.

Each Deployment's container is read as the server would be started: every
flag must exist (`nereid --help`), each port the flags open must be a
container port (and each container port one the flags open), the probes
must be gRPC probes on the plaintext health port when there is one and
never on a TLS port (Kubernetes' probes speak plaintext), certificate
files must come from a Secret mounted as a folder (so rotated files are
swapped in place), and the grace period must outlast --exit-timeout-secs.
Services must select a Deployment's pods and target its named ports.
Then the server is started with each Deployment's flags, with the test's
own paths, free ports and certificates (made here with openssl), and the
probes' health check must answer SERVING where the manifest points them.
"""

import glob
import os
import re
import shutil
import socket
import subprocess
import tempfile
import unittest

import grpc
import yaml

import harness
from harness import Server, stop_clean
import health_pb2
import health_pb2_grpc

DEPLOY = os.path.abspath(os.environ.get("NEREID_DEPLOY", "deploy"))
# What the server does without the flag (README's flag table).
DEFAULTS = {"grpc-port": "8001", "http-port": "8000", "metrics-port": "8002",
            "exit-timeout-secs": "30", "allow-http": "true", "allow-metrics": "true",
            "grpc-health-port": "0", "grpc-use-ssl": "false", "grpc-use-ssl-mutual": "false"}
TLS_FILES = ("grpc-server-cert", "grpc-server-key", "grpc-root-cert")


def manifests():
    docs = []
    for path in sorted(glob.glob(os.path.join(DEPLOY, "*.yaml"))):
        with open(path) as f:
            docs += [(os.path.basename(path), d) for d in yaml.safe_load_all(f) if d]
    return docs


def server_flags():
    """The flag names `nereid --help` lists."""
    out = subprocess.run([harness.NEREID, "--help"], capture_output=True, text=True,
                         timeout=30)
    return set(re.findall(r"^\s+--([a-z0-9-]+)", out.stdout + out.stderr, re.M))


def parse_args(container):
    """The container's args as (flag, value) pairs, $(VAR) expanded from the
    container's env names (to a placeholder: the test only needs them
    defined)."""
    env = {e["name"] for e in container.get("env", [])}
    pairs = []
    for arg in container["args"]:
        m = re.fullmatch(r"--([a-z0-9-]+)(?:=(.*))?", arg)
        assert m, "argument %r is not --flag=value" % arg
        value = m.group(2) if m.group(2) is not None else "true"
        for var in re.findall(r"\$\((\w+)\)", value):
            assert var in env, "%s refers to $(%s), which the container's env lacks" % (arg, var)
        pairs.append((m.group(1), re.sub(r"\$\((\w+)\)", "placeholder", value)))
    return pairs


def flag(pairs, name):
    values = [v for k, v in pairs if k == name]
    return values[-1] if values else DEFAULTS.get(name)


def is_true(v):
    return v in ("true", "1", "yes", "on")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def make_certs(folder):
    """A CA, and a server certificate for 127.0.0.1 signed by it, as the
    Secret's tls.crt, tls.key and ca.crt."""
    def run(*args):
        subprocess.run(["openssl"] + list(args), check=True, capture_output=True, cwd=folder)
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=test-ca",
        "-keyout", "ca.key", "-out", "ca.crt")
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
        "-keyout", "tls.key", "-out", "tls.csr")
    with open(os.path.join(folder, "san.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    run("x509", "-req", "-in", "tls.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "2", "-extfile", "san.ext", "-out", "tls.crt")


class Manifests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.docs = manifests()
        cls.flags = server_flags()

    def deployments(self):
        return [(f, d) for f, d in self.docs if d["kind"] == "Deployment"]

    def test_there_are_manifests(self):
        self.assertGreaterEqual(len(self.deployments()), 2)
        kinds = {d["kind"] for _, d in self.docs}
        self.assertEqual(kinds, {"Deployment", "Service"})

    def test_every_flag_exists(self):
        self.assertIn("grpc-port", self.flags)
        for name, d in self.deployments():
            for c in d["spec"]["template"]["spec"]["containers"]:
                for key, _ in parse_args(c):
                    self.assertIn(key, self.flags, "%s: --%s is not a nereid flag" % (name, key))

    def listening_ports(self, pairs):
        ports = {int(flag(pairs, "grpc-port"))}
        if is_true(flag(pairs, "allow-http")):
            ports.add(int(flag(pairs, "http-port")))
        if is_true(flag(pairs, "allow-metrics")):
            ports.add(int(flag(pairs, "metrics-port")))
        health = int(flag(pairs, "grpc-health-port"))
        if health:
            ports.add(health)
        return ports, health

    def test_ports_and_probes_match_the_flags(self):
        for name, d in self.deployments():
            for c in d["spec"]["template"]["spec"]["containers"]:
                pairs = parse_args(c)
                ports, health = self.listening_ports(pairs)
                declared = {p["containerPort"] for p in c["ports"]}
                self.assertEqual(declared, ports, name)
                tls = is_true(flag(pairs, "grpc-use-ssl")) or is_true(
                    flag(pairs, "grpc-use-ssl-mutual"))
                grpc_port = int(flag(pairs, "grpc-port"))
                for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
                    p = c.get(probe)
                    self.assertIsNotNone(p, "%s lacks a %s" % (name, probe))
                    self.assertIn("grpc", p, "%s: %s is not a gRPC probe" % (name, probe))
                    want = health if health else grpc_port
                    self.assertEqual(p["grpc"]["port"], want, "%s: %s" % (name, probe))
                    if tls:
                        self.assertNotEqual(p["grpc"]["port"], grpc_port,
                                            "%s: %s on the TLS port" % (name, probe))

    def test_grace_period_outlasts_the_exit_timeout(self):
        for name, d in self.deployments():
            spec = d["spec"]["template"]["spec"]
            for c in spec["containers"]:
                timeout = int(flag(parse_args(c), "exit-timeout-secs"))
                self.assertGreater(spec.get("terminationGracePeriodSeconds", 30), timeout + 5,
                                   name)

    def test_certificates_come_from_a_mounted_secret(self):
        for name, d in self.deployments():
            spec = d["spec"]["template"]["spec"]
            volumes = {v["name"]: v for v in spec.get("volumes", [])}
            for c in spec["containers"]:
                mounts = c.get("volumeMounts", [])
                for m in mounts:
                    self.assertIn(m["name"], volumes, name)
                for key, path in parse_args(c):
                    if key not in TLS_FILES:
                        continue
                    mount = [m for m in mounts if path.startswith(m["mountPath"].rstrip("/") + "/")]
                    self.assertTrue(mount, "%s: --%s=%s is in no mounted volume" % (name, key, path))
                    self.assertIn("secret", volumes[mount[0]["name"]], name)
                    self.assertNotIn("subPath", mount[0], "%s: a subPath mount is never updated"
                                     % name)

    def test_services_select_and_target_deployments(self):
        deployments = self.deployments()
        for name, s in self.docs:
            if s["kind"] != "Service":
                continue
            sel = s["spec"]["selector"]
            matching = [d for _, d in deployments
                        if all(d["spec"]["template"]["metadata"]["labels"].get(k) == v
                               for k, v in sel.items())]
            self.assertEqual(len(matching), 1, "%s: Service %s" % (name, s["metadata"]["name"]))
            d = matching[0]
            self.assertEqual(d["spec"]["selector"]["matchLabels"], sel)
            names = {p["name"] for c in d["spec"]["template"]["spec"]["containers"]
                     for p in c["ports"]}
            for p in s["spec"]["ports"]:
                self.assertIn(p["targetPort"], names, name)


class Started(unittest.TestCase):
    """Each Deployment's flags start the server; its probes answer."""

    def run_deployment(self, name, d):
        c = d["spec"]["template"]["spec"]["containers"][0]
        pairs = parse_args(c)
        certs = tempfile.mkdtemp(prefix="deploycerts", dir=os.environ.get("TEST_TMPDIR"))
        try:
            make_certs(certs)
            ports = {}
            args = []
            for key, value in pairs:
                if key in ("model-repository", "backend-directory", "grpc-port", "http-port",
                           "metrics-port"):
                    continue  # the harness gives its own
                if key == "grpc-health-port":
                    ports["health"] = free_port()
                    value = str(ports["health"])
                if key in TLS_FILES:
                    value = os.path.join(certs, os.path.basename(value))
                args.append("--%s=%s" % (key, value))
            server = Server(*args, repo=harness.EXAMPLES)
            try:
                probe = c["readinessProbe"]["grpc"]["port"]
                if probe == int(flag(pairs, "grpc-port")):
                    channel = grpc.insecure_channel(server.address)
                else:
                    self.assertIn("health", ports, name)
                    channel = grpc.insecure_channel("127.0.0.1:%d" % ports["health"])
                stub = health_pb2_grpc.HealthStub(channel)
                reply = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=30)
                self.assertEqual(reply.status, health_pb2.HealthCheckResponse.SERVING, name)
                channel.close()
            finally:
                stop_clean(server)
        finally:
            shutil.rmtree(certs, ignore_errors=True)

    def test_each_deployment_starts_and_answers_its_probes(self):
        deployments = [(f, d) for f, d in manifests() if d["kind"] == "Deployment"]
        self.assertTrue(deployments)
        for name, d in deployments:
            with self.subTest(manifest=name):
                self.run_deployment(name, d)


if __name__ == "__main__":
    unittest.main()
