"""tools/package: the .deb's file list (dpkg-deb -c) and control fields
(dpkg-deb -f). Depends is checked against the libraries the packaged ELF
files really need: each NEEDED library outside the package must come from
a package named in Depends (dpkg -S, independently of dpkg-shlibdeps).
Built from this build's runfiles (--prebuilt): no bazel runs here."""

import os
import re
import subprocess
import tempfile
import unittest

import harness

RUNFILES = os.getcwd()
PACKAGE = os.path.join(RUNFILES, "tools/package")
PREFIX = "./opt/nereid/"
BUILT_IN = ["addsub", "addsub_cuda", "addsub_string", "identity", "repeat", "sequence"]


def run(*argv, **kw):
    p = subprocess.run(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    if p.returncode != 0:
        raise AssertionError("%s failed (%d):\n%s%s" % (argv, p.returncode,
                                                         p.stdout.decode(errors="replace"),
                                                         p.stderr.decode(errors="replace")))
    return p.stdout.decode()


def needed(path):
    return re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", run("readelf", "-d", path))


def owner(soname, cache=[]):
    """The Debian package that holds soname where the dynamic linker finds
    it (ldconfig's cache; this machine's word size)."""
    word = "x86-64" if os.uname().machine == "x86_64" else ""
    if not cache:
        cache.extend(run("/sbin/ldconfig", "-p").splitlines())
    for line in cache:
        m = re.match(r"\s*(\S+) \((.*)\) => (\S+)$", line)
        if not m or m.group(1) != soname or word not in m.group(2):
            continue
        for path in (m.group(3), os.path.realpath(m.group(3))):
            p = subprocess.run(["dpkg", "-S", path], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
            if p.returncode == 0:
                return p.stdout.decode().split(":")[0].split(",")[0].strip()
    raise AssertionError("no package holds %s" % soname)


class Package(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        out = tempfile.mkdtemp(prefix="deb", dir=os.environ.get("TEST_TMPDIR"))
        cls.deb = run(PACKAGE, "--prebuilt", RUNFILES, "--output", out).strip()
        with open(os.path.join(RUNFILES, "server/core/server.h")) as f:
            cls.version = re.search(r'#define NEREID_VERSION "(.*)"', f.read()).group(1)
        cls.arch = run("dpkg", "--print-architecture").strip()
        cls.extracted = tempfile.mkdtemp(prefix="x", dir=out)
        run("dpkg-deb", "-x", cls.deb, cls.extracted)

    def field(self, name):
        return run("dpkg-deb", "-f", self.deb, name).strip()

    def test_name_and_control_fields(self):
        self.assertEqual(os.path.basename(self.deb),
                         "nereid_%s_%s.deb" % (self.version, self.arch))
        self.assertEqual(self.field("Package"), "nereid")
        self.assertEqual(self.field("Version"), self.version)
        self.assertEqual(self.field("Architecture"), self.arch)
        self.assertTrue(self.field("Maintainer"))
        self.assertTrue(self.field("Description"))
        self.assertGreater(int(self.field("Installed-Size")), 1000)

    def test_file_list(self):
        entries = {}
        for line in run("dpkg-deb", "-c", self.deb).splitlines():
            mode, owner_, _size, _date, _time, path = line.split(None, 5)
            entries[path] = (mode, owner_)
        files = sorted(p for p, (m, _) in entries.items() if m.startswith("-"))
        self.assertEqual(files, sorted(
            [PREFIX + "bin/nereid", PREFIX + "lib/libtritonserver.so",
             PREFIX + "include/triton/core/tritonbackend.h",
             PREFIX + "include/triton/core/tritoncache.h",
             PREFIX + "include/triton/core/tritonrepoagent.h",
             PREFIX + "include/triton/core/tritonserver.h"] +
            [PREFIX + "backends/%s/libtriton_%s.so" % (b, b) for b in BUILT_IN]))
        self.assertEqual(entries[PREFIX + "bin/nereid"][0], "-rwxr-xr-x")
        self.assertEqual(entries[PREFIX + "lib/libtritonserver.so"][0], "-rw-r--r--")
        self.assertIn("./usr/bin/nereid -> /opt/nereid/bin/nereid", entries)
        self.assertEqual({o for _, o in entries.values()}, {"root/root"})
        self.assertEqual([p for p in entries if not p.startswith(("./opt/nereid/", "./usr/"))
                          and p not in ("./", "./opt/")], [])

    def test_depends_cover_every_needed_library(self):
        depends = self.field("Depends")
        names = {re.match(r"\s*([^\s(|]+)", d).group(1) for d in depends.split(",")}
        # (libjemalloc2 too, but not in the sanitizer builds, which link
        # no jemalloc: the NEEDED check below covers it.)
        for required in ("libgrpc29", "libck0", "libjansson4", "libh2o-evloop0.13",
                         "libssl3", "libc6"):
            self.assertIn(required, names, depends)
        root = os.path.join(self.extracted, "opt/nereid")
        elves = [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs
                 if f == "nereid" or f.endswith(".so")]
        self.assertEqual(len(elves), 2 + len(BUILT_IN))
        sonames = {n for e in elves for n in needed(e)} - {"libtritonserver.so"}
        self.assertIn("libgrpc.so.29", sonames)
        for soname in sorted(sonames):
            package = owner(soname)
            self.assertIn(package, names, "%s (of %s) is not in Depends: %s"
                          % (soname, package, depends))

    def test_packaged_nereid_runs(self):
        """The extracted binary finds the packaged libtritonserver.so."""
        nereid = os.path.join(self.extracted, "opt/nereid/bin/nereid")
        out = run(nereid, "--help", env=dict(os.environ, LD_LIBRARY_PATH=""))
        self.assertIn("--backend-directory", out)


if __name__ == "__main__":
    harness.main()
