#!/usr/bin/python3
"""Cross-checks Nereid's text-format parser against protobuf's own two.

The references are protoc's C++ TextFormat parser (`protoc --encode`, the
parser Triton itself uses) and Python's google.protobuf.text_format.

Valid corpus files are parsed by our pbtxt_to_binary tool and by both
references; all three must give the same message. A valid file marked
"# python-rejects: <why>" holds a spelling only protoc takes (we follow
protoc): Python must reject it, and protoc alone is compared.

Invalid files must be rejected by our parser with the error named on their
"# expect:" line, and by both references, unless the file carries a
"# protoc-accepts: <why>" or "# python-accepts: <why>" line (where we are
stricter, or the references disagree); that reference must then accept it,
so the note stays true.

Run with Debian's /usr/bin/python3 (python3-protobuf) and /usr/bin/protoc.
"""
import argparse
import os
import subprocess
import sys

FOLDERS = {  # folder under --data: (message type, valid?)
    "valid": ("inference.ModelConfig", True),
    "invalid": ("inference.ModelConfig", False),
    "types/valid": ("nereid.test.AllTypes", True),
    "types/invalid": ("nereid.test.AllTypes", False),
}


def header(data, key):
    """The text after "# <key>:" on a line of the file, or None."""
    for line in data.decode("utf-8", "replace").splitlines():
        if line.startswith("# " + key + ":"):
            return line.split(":", 1)[1].strip()
    return None


def protoc_parse(cls, proto, type_name, data):
    """(message, None) or (None, error) from protoc's C++ text parser."""
    r = subprocess.run(["protoc", "-I" + os.path.dirname(proto), "--encode=" + type_name,
                        os.path.basename(proto)], input=data, capture_output=True)
    if r.returncode != 0:
        return None, r.stderr.decode(errors="replace").strip()
    try:
        return cls.FromString(r.stdout), None
    except Exception:  # accepted, but wrote what Python cannot decode (bad UTF-8)
        return None, None


def python_parse(cls, data):
    from google.protobuf import text_format
    msg = cls()
    try:
        text_format.Parse(data.decode("utf-8"), msg)
    except (text_format.ParseError, UnicodeDecodeError, ValueError) as e:
        return None, str(e)
    return msg, None


def same(a, b):
    """Equal content. Bytes first; text as the fallback, because protoc writes
    every map entry of the text (repeated keys too) and a message parsed from
    that may reserialize them all, while its text shows the final map."""
    from google.protobuf import text_format
    if a.SerializeToString(deterministic=True) == b.SerializeToString(deterministic=True):
        return True
    return text_format.MessageToString(a) == text_format.MessageToString(b)


def check_valid(data, ours, refs):
    if ours.returncode != 0:
        return ["ours rejects: " + ours.stderr.decode(errors="replace").strip()]
    problems = []
    if header(data, "python-rejects") is not None:
        if refs["python"][1] is None:
            problems.append("marked python-rejects but Python accepts it")
        del refs["python"]
    for name, (msg, err) in refs.items():
        if err is not None:
            problems.append("%s rejects: %s" % (name, err))
        elif msg is None or not same(ours.msg, msg):
            problems.append("%s differs:\n--- ours\n%s--- %s\n%s" % (name, ours.msg, name, msg))
    return problems


def check_invalid(data, ours, refs):
    problems = []
    expect = header(data, "expect")
    err = ours.stderr.decode(errors="replace").strip()
    if ours.returncode != 1:
        problems.append("ours accepts it (rc %d)" % ours.returncode)
    elif expect is None or expect not in err:
        problems.append("ours: %r does not contain %r" % (err, expect))
    for name, (_, ref_err) in refs.items():
        note = name + "-accepts"
        if header(data, note) is None and ref_err is None:
            problems.append("%s accepts it (add a '# %s:' note if intended)" % (name, note))
        elif header(data, note) is not None and ref_err is not None:
            problems.append("marked %s but %s rejects: %s" % (note, name, ref_err))
    return problems


def check_file(tool, cls, type_name, proto, path, valid):
    """Returns a list of problems (empty when the file passes)."""
    with open(path, "rb") as f:
        data = f.read()
    ours = subprocess.run([tool, type_name, path], capture_output=True)
    if ours.returncode == 0:
        ours.msg = cls.FromString(ours.stdout)
    refs = {"protoc": protoc_parse(cls, proto, type_name, data),
            "python": python_parse(cls, data)}
    return check_valid(data, ours, refs) if valid else check_invalid(data, ours, refs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True, help="pbtxt_to_binary")
    ap.add_argument("--stubs", action="append", default=[], help="folder of *_pb2.py")
    ap.add_argument("--data", required=True, help="test/data/pbtxt")
    ap.add_argument("--model-config-proto", required=True)
    ap.add_argument("--all-types-proto", required=True)
    args = ap.parse_args()
    sys.path[:0] = [os.path.abspath(s) for s in args.stubs]
    import all_types_pb2
    import model_config_pb2

    types = {
        "inference.ModelConfig": (model_config_pb2.ModelConfig, args.model_config_proto),
        "nereid.test.AllTypes": (all_types_pb2.AllTypes, args.all_types_proto),
    }
    failures = checked = noted = 0
    for folder, (type_name, valid) in sorted(FOLDERS.items()):
        cls, proto = types[type_name]
        for name in sorted(os.listdir(os.path.join(args.data, folder))):
            if not name.endswith(".pbtxt"):
                continue
            path = os.path.join(args.data, folder, name)
            problems = check_file(args.tool, cls, type_name, os.path.abspath(proto), path, valid)
            checked += 1
            with open(path, "rb") as f:
                data = f.read()
            if any(header(data, k) for k in ("python-accepts", "protoc-accepts",
                                              "python-rejects")):
                noted += 1
            for p in problems:
                failures += 1
                print("FAIL %s/%s: %s" % (folder, name, p))
    print("crosscheck: %d files, %d problems, %d with a noted difference to a reference"
          % (checked, failures, noted))
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
