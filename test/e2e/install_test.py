"""tools/install's layout, moved elsewhere after the install: the moved
bin/nereid finds lib/libtritonserver.so through its runpath and its built-in
backends without --backend-directory, serves the example models, and loads a
backend built against the installed headers and library. Also: what
tools/install refuses. The outputs come from this build's runfiles
(tools/install --prebuilt): no bazel runs here."""

import os
import re
import shutil
import subprocess
import tempfile
import unittest

import numpy as np

import harness

RUNFILES = os.getcwd()
INSTALL = os.path.join(RUNFILES, "tools/install")
BACKEND_SRC = os.path.join(RUNFILES, "test/e2e/install_backend.c")
BUILT_IN = ["addsub", "addsub_cuda", "addsub_string", "identity", "repeat", "sequence"]
TINY_CONFIG = """
name: "tiny"
backend: "tiny"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 4 ] } ]
instance_group [ { kind: KIND_CPU } ]
"""


def tmpdir(prefix):
    return tempfile.mkdtemp(prefix=prefix, dir=os.environ.get("TEST_TMPDIR"))


def install(prefix, cwd=None):
    """Runs tools/install --prebuilt on this build's outputs: (code, output)."""
    p = subprocess.run([INSTALL, "--prebuilt", RUNFILES, prefix], cwd=cwd,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return p.returncode, p.stdout.decode(errors="replace")


def dynamic(path):
    """readelf -d of path, as text."""
    return subprocess.run(["readelf", "-d", path], check=True, stdout=subprocess.PIPE
                          ).stdout.decode()


class Installed(unittest.TestCase):
    """One install, moved, and one server on it for the whole class."""

    @classmethod
    def setUpClass(cls):
        root = tmpdir("install")
        staged = os.path.join(root, "staged")
        code, out = install(staged)
        if code != 0:
            raise AssertionError("tools/install failed:\n" + out)
        cls.install_log = out
        # Moved as a whole, to a path of another depth: nothing may name the
        # folder it was installed into.
        cls.prefix = os.path.join(root, "elsewhere", "opt", "nereid")
        os.makedirs(os.path.dirname(cls.prefix))
        os.rename(staged, cls.prefix)
        cls.tiny = os.path.join(cls.prefix, "backends", "tiny", "libtriton_tiny.so")
        os.makedirs(os.path.dirname(cls.tiny))
        build = subprocess.run(
            ["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
             "-I", os.path.join(cls.prefix, "include"), BACKEND_SRC,
             "-L", os.path.join(cls.prefix, "lib"), "-ltritonserver", "-o", cls.tiny],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if build.returncode != 0:
            raise AssertionError("the backend did not build against the installed "
                                 "prefix:\n" + build.stdout.decode(errors="replace"))
        # The examples copied next to the installation, plus the tiny model.
        cls.repo = os.path.join(root, "elsewhere", "models")
        shutil.copytree(harness.EXAMPLES, cls.repo)
        os.makedirs(os.path.join(cls.repo, "tiny", "1"))
        with open(os.path.join(cls.repo, "tiny", "config.pbtxt"), "w") as f:
            f.write(TINY_CONFIG)
        cls.server = cls.start()
        cls.stub = cls.server.inference()

    @classmethod
    def start(cls):
        """The moved nereid with no --backend-directory and no library path
        (an empty LD_LIBRARY_PATH is none)."""
        return harness.Server(repo=cls.repo, backends="", env={"LD_LIBRARY_PATH": ""},
                              binary=os.path.join(cls.prefix, "bin", "nereid"))

    @classmethod
    def tearDownClass(cls):
        harness.stop_clean(cls.server)

    def test_layout(self):
        files = sorted(os.path.relpath(os.path.join(d, f), self.prefix)
                       for d, _, fs in os.walk(self.prefix) for f in fs)
        expected = sorted(["bin/nereid", "lib/libtritonserver.so",
                           "include/triton/core/tritonbackend.h",
                           "include/triton/core/tritoncache.h",
                           "include/triton/core/tritonrepoagent.h",
                           "include/triton/core/tritonserver.h",
                           "backends/tiny/libtriton_tiny.so"] +
                          ["backends/%s/libtriton_%s.so" % (b, b) for b in BUILT_IN])
        self.assertEqual(files, expected)
        self.assertTrue(os.access(os.path.join(self.prefix, "bin/nereid"), os.X_OK))
        # Every file above but the test's own tiny backend.
        self.assertIn("installed %d files" % (len(expected) - 1), self.install_log)

    def test_runpath_is_relative(self):
        """$ORIGIN/../lib, and no absolute entry (no build tree, no prefix)."""
        d = dynamic(os.path.join(self.prefix, "bin/nereid"))
        runpath = re.search(r"\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[(.*)\]", d)
        self.assertIsNotNone(runpath, d)
        entries = runpath.group(1).split(":")
        self.assertIn("$ORIGIN/../lib", entries)
        self.assertEqual([e for e in entries if not e.startswith("$ORIGIN")], [])
        self.assertIn("NEEDED", d)
        self.assertIn("[libtritonserver.so]", d)

    def test_infer_simple(self):
        a = np.arange(16, dtype=np.int32).reshape(1, 16)
        b = np.full((1, 16), 3, dtype=np.int32)
        resp = self.stub.ModelInfer(harness.infer_request(
            "simple", [("INPUT0", "INT32", a), ("INPUT1", "INT32", b)]), timeout=10)
        out = {o.name: np.frombuffer(raw, dtype=np.int32)
               for o, raw in zip(resp.outputs, resp.raw_output_contents)}
        np.testing.assert_array_equal(out["OUTPUT0"], (a + b).ravel())
        np.testing.assert_array_equal(out["OUTPUT1"], (a - b).ravel())

    def test_built_in_backends_from_the_installation(self):
        """No --backend-directory: the default is the installation's."""
        backends = os.path.join(self.prefix, "backends")
        for b in ("addsub", "identity", "repeat", "sequence", "addsub_string"):
            self.assertTrue(self.server.wait_text(
                "loaded backend '%s' from %s/%s/libtriton_%s.so" % (b, backends, b, b)),
                self.server.text())

    def test_headers_compile(self):
        src = os.path.join(tmpdir("headers"), "both.c")
        with open(src, "w") as f:
            f.write('#include "triton/core/tritonserver.h"\n'
                    '#include "triton/core/tritonbackend.h"\n'
                    "int main(void) { return TRITONBACKEND_API_VERSION_MAJOR - 1; }\n")
        for std in ("-std=c11", "-std=gnu11"):
            p = subprocess.run(["gcc", std, "-Wall", "-Wextra", "-Werror", "-pedantic",
                                "-fsyntax-only", "-I", os.path.join(self.prefix, "include"),
                                src], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            self.assertEqual(p.returncode, 0, p.stdout.decode(errors="replace"))

    def test_own_backend_loads(self):
        """Linked as released backends are: NEEDED libtritonserver.so, no
        runpath; it binds to the library the server already loaded."""
        d = dynamic(self.tiny)
        self.assertIn("[libtritonserver.so]", d)
        self.assertNotIn("RUNPATH", d)
        self.assertNotIn("RPATH", d)
        x = np.array([1, -2, 30, 7], dtype=np.int32)
        resp = self.stub.ModelInfer(harness.infer_request(
            "tiny", [("INPUT0", "INT32", x)]), timeout=10)
        self.assertEqual(resp.outputs[0].name, "OUTPUT0")
        np.testing.assert_array_equal(
            np.frombuffer(resp.raw_output_contents[0], dtype=np.int32), 2 * x + 1)
        self.assertTrue(self.server.wait_text("loaded backend 'tiny' from " + self.tiny),
                        self.server.text())

    def test_started_through_a_symlink(self):
        """As /usr/bin/nereid of the package: a symbolic link elsewhere to
        the installed nereid still finds the library and the backends."""
        link = os.path.join(tmpdir("usr_bin"), "nereid")
        os.symlink(os.path.join(self.prefix, "bin", "nereid"), link)
        repo = tmpdir("repo")
        shutil.copytree(os.path.join(self.repo, "simple"), os.path.join(repo, "simple"))
        server = harness.Server(repo=repo, backends="", env={"LD_LIBRARY_PATH": ""},
                                binary=link)
        try:
            self.assertTrue(server.wait_text(
                "loaded backend 'addsub' from %s/backends/addsub/libtriton_addsub.so"
                % self.prefix), server.text())
        finally:
            harness.stop_clean(server)


class Refusals(unittest.TestCase):
    """tools/install writes only inside the absolute prefix it is given."""

    def test_empty_relative_and_root_prefixes(self):
        cwd = tmpdir("cwd")
        for prefix, why in (("", "PREFIX is empty"), ("rel/x", "is relative"),
                            ("./x", "is relative"), ("/", "PREFIX is /"),
                            ("//", "PREFIX is /")):
            code, out = install(prefix, cwd=cwd)
            self.assertNotEqual(code, 0, prefix)
            self.assertIn(why, out, prefix)
        self.assertEqual(os.listdir(cwd), [])

    def test_symlinked_folder(self):
        """A folder of the layout that is a symbolic link would send files
        out of the prefix: refused before anything is written."""
        root = tmpdir("symlinked")
        outside = os.path.join(root, "outside")
        prefix = os.path.join(root, "prefix")
        os.makedirs(outside)
        os.makedirs(prefix)
        os.symlink(outside, os.path.join(prefix, "lib"))
        code, out = install(prefix)
        self.assertNotEqual(code, 0)
        self.assertIn("lib is a symbolic link", out)
        self.assertEqual(os.listdir(outside), [])
        self.assertEqual(sorted(os.listdir(prefix)), ["lib"])

    def test_install_twice(self):
        """Installing again over an installation replaces its files."""
        parent = tmpdir("twice")
        prefix = os.path.join(parent, "p")
        for _ in range(2):
            code, out = install(prefix)
            self.assertEqual(code, 0, out)
        self.assertEqual(os.listdir(parent), ["p"])
        # A file in the layout that is a symbolic link is replaced, not
        # written through.
        target = os.path.join(tmpdir("target"), "victim")
        with open(target, "w") as f:
            f.write("keep")
        nereid = os.path.join(prefix, "bin", "nereid")
        os.remove(nereid)
        os.symlink(target, nereid)
        code, out = install(prefix)
        self.assertEqual(code, 0, out)
        self.assertFalse(os.path.islink(nereid))
        with open(target) as f:
            self.assertEqual(f.read(), "keep")


if __name__ == "__main__":
    harness.main()
