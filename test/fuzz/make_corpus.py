"""Writes the generated seeds of the fuzz targets' corpora, and the JSON
dictionary of config_json_fuzz, from the protobuf stubs:

    bazel build //proto:protos_py
    /usr/bin/python3 test/fuzz/make_corpus.py

Seeds are small valid requests and the refusals around them, one file each,
named for what they hold; the output is the same on every run. Files whose
names start with "found_" are inputs that fuzzing found (added by hand, each
after its fix) and are left alone.
"""

import json
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))


def stubs_path():
    out = subprocess.run(["bazel", "info", "bazel-bin"], cwd=TOP, check=True,
                         capture_output=True, text=True).stdout.strip()
    return os.path.join(out, "proto")


sys.path.insert(0, stubs_path())
import grpc_service_pb2 as gs  # noqa: E402
import model_config_pb2 as mc  # noqa: E402
from google.protobuf import json_format, text_format  # noqa: E402


def write(target, name, data):
    folder = os.path.join(HERE, "corpus", target)
    os.makedirs(folder, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


# ---- infer_request: ModelInferRequest for the target's models ---------------

def tensor(name, datatype, shape, contents=None):
    t = gs.ModelInferRequest.InferInputTensor(name=name, datatype=datatype, shape=shape)
    if contents is not None:
        field, values = contents
        getattr(t.contents, field).extend(values)
    return t


def request(model, inputs, raw=None, outputs=(), version="", params=None, rid=""):
    r = gs.ModelInferRequest(model_name=model, model_version=version, id=rid)
    r.inputs.extend(inputs)
    if raw is not None:
        r.raw_input_contents.extend(raw)
    for o in outputs:
        r.outputs.add(name=o)
    for key, (kind, value) in (params or {}).items():
        setattr(r.parameters[key], kind, value)
    return r.SerializeToString(deterministic=True)


def bytes_elements(*items):
    return b"".join(struct.pack("<I", len(x)) + x for x in items)


def simple_seeds():
    ints = ("int_contents", list(range(16)))
    raw16 = struct.pack("<16i", *range(16))
    yield "simple_raw", request("simple", [tensor("INPUT0", "INT32", [1, 16]),
                                           tensor("INPUT1", "INT32", [1, 16])],
                                raw=[raw16, raw16], rid="r1")
    yield "simple_typed_batch2_outputs", request(
        "simple", [tensor("INPUT0", "INT32", [2, 16], ("int_contents", list(range(32)))),
                   tensor("INPUT1", "INT32", [2, 16], ("int_contents", [7] * 32))],
        outputs=["OUTPUT1", "OUTPUT0"], version="1")
    yield "simple_priority_timeout", request(
        "simple", [tensor("INPUT0", "INT32", [1, 16], ints),
                   tensor("INPUT1", "INT32", [1, 16], ints)],
        params={"priority": ("int64_param", 2), "timeout": ("uint64_param", 1000),
                "nereid_aggregate_responses": ("bool_param", True)})
    yield "simple_priority_negative", request(
        "simple", [tensor("INPUT0", "INT32", [1, 16], ints)],
        params={"priority": ("int64_param", -1)})
    yield "simple_timeout_string", request(
        "simple", [tensor("INPUT0", "INT32", [1, 16], ints)],
        params={"timeout": ("string_param", "10")})
    yield "simple_wrong_datatype", request(
        "simple", [tensor("INPUT0", "INT64", [1, 16], ints)])
    yield "simple_wrong_shape", request(
        "simple", [tensor("INPUT0", "INT32", [1, 15], ints)])
    yield "simple_missing_input", request(
        "simple", [tensor("INPUT0", "INT32", [1, 16], ints)])
    yield "simple_raw_count_mismatch", request(
        "simple", [tensor("INPUT0", "INT32", [1, 16]), tensor("INPUT1", "INT32", [1, 16])],
        raw=[raw16])
    yield "simple_raw_short", request(
        "simple", [tensor("INPUT0", "INT32", [1, 16]), tensor("INPUT1", "INT32", [1, 16])],
        raw=[raw16, raw16[:-1]])
    yield "simple_batch_too_big", request(
        "simple", [tensor("INPUT0", "INT32", [9, 16]), tensor("INPUT1", "INT32", [9, 16])],
        raw=[raw16 * 9, raw16 * 9])
    yield "simple_batch_zero", request(
        "simple", [tensor("INPUT0", "INT32", [0, 16]), tensor("INPUT1", "INT32", [0, 16])],
        raw=[b"", b""])
    yield "simple_batch_disagree", request(
        "simple", [tensor("INPUT0", "INT32", [1, 16]), tensor("INPUT1", "INT32", [2, 16])],
        raw=[raw16, raw16 * 2])
    yield "simple_input_twice", request(
        "simple", [tensor("INPUT0", "INT32", [1, 16], ints),
                   tensor("INPUT0", "INT32", [1, 16], ints)])
    yield "simple_unknown_input", request(
        "simple", [tensor("INPUT9", "INT32", [1, 16], ints)])
    yield "simple_unknown_output", request(
        "simple", [tensor("INPUT0", "INT32", [1, 16], ints),
                   tensor("INPUT1", "INT32", [1, 16], ints)], outputs=["OUTPUT9"])
    r = gs.ModelInferRequest(model_name="simple")
    r.inputs.extend([tensor("INPUT0", "INT32", [1, 16], ints),
                     tensor("INPUT1", "INT32", [1, 16], ints)])
    r.outputs.add(name="OUTPUT0").parameters["classification"].int64_param = 2
    yield "simple_output_parameters", r.SerializeToString(deterministic=True)
    yield "simple_contents_and_raw", request(
        "simple", [tensor("INPUT0", "INT32", [1, 16], ints),
                   tensor("INPUT1", "INT32", [1, 16], ints)], raw=[raw16, raw16])
    yield "simple_no_data", request(
        "simple", [tensor("INPUT0", "INT32", [1, 16]), tensor("INPUT1", "INT32", [1, 16])])


def strings_seeds():
    flags = ("bool_contents", [True, False])
    yield "strings_bytes_contents", request(
        "strings", [tensor("TEXT", "BYTES", [1, 3], ("bytes_contents", [b"a", b"", b"xyz"])),
                    tensor("FLAGS", "BOOL", [1, 2], flags)])
    yield "strings_raw", request(
        "strings", [tensor("TEXT", "BYTES", [2, 1]), tensor("FLAGS", "BOOL", [2, 2])],
        raw=[bytes_elements(b"hello", b"\x00\xff"), b"\x01\x00\x01\x01"])
    yield "strings_raw_bad_framing", request(
        "strings", [tensor("TEXT", "BYTES", [1, 2]), tensor("FLAGS", "BOOL", [1, 2])],
        raw=[bytes_elements(b"ab") + b"\x05\x00\x00\x00ab", b"\x00\x00"])
    yield "strings_raw_extra", request(
        "strings", [tensor("TEXT", "BYTES", [1, 1]), tensor("FLAGS", "BOOL", [1, 2])],
        raw=[bytes_elements(b"ab") + b"z", b"\x00\x00"])
    yield "strings_count_mismatch", request(
        "strings", [tensor("TEXT", "BYTES", [1, 2], ("bytes_contents", [b"a"])),
                    tensor("FLAGS", "BOOL", [1, 2], flags)])


def types_seeds():
    opt = [tensor("F16", "FP16", [2, 3])]
    half = b"\x00\x3c" * 6
    yield "types_fp16_raw", request("types", opt, raw=[half])
    yield "types_fp16_typed", request(
        "types", [tensor("F16", "FP16", [2, 1], ("fp32_contents", [1.0, 2.0]))])
    yield "types_all_typed", request("types", [
        tensor("I8", "INT8", [4], ("int_contents", [-1, 127, -128, 300])),
        tensor("I16", "INT16", [3], ("int_contents", [-1, 32767, 70000])),
        tensor("U16", "UINT16", [2], ("uint_contents", [65535, 65536])),
        tensor("U64", "UINT64", [1], ("uint64_contents", [2 ** 64 - 1])),
        tensor("I64", "INT64", [1, 2], ("int64_contents", [-(2 ** 63), 5])),
        tensor("F64", "FP64", [1], ("fp64_contents", [float("nan")]))])
    yield "types_all_raw", request("types", [
        tensor("F16", "FP16", [2, 1]), tensor("BF16", "BF16", [2]),
        tensor("I8", "INT8", [4]), tensor("I16", "INT16", [2]),
        tensor("U16", "UINT16", [2]), tensor("U64", "UINT64", [1]),
        tensor("I64", "INT64", [3, 2]), tensor("F64", "FP64", [1])],
        raw=[b"\x00" * 4, b"\x00" * 4, b"\x00" * 4, b"\x00" * 4, b"\x00" * 4,
             b"\x00" * 8, b"\x00" * 48, b"\x00" * 8])
    yield "types_huge_dims", request("types", [tensor("I16", "INT16", [2 ** 63 - 1])],
                                     raw=[b""])
    yield "types_element_count_wraps", request(
        "types", [tensor("F16", "FP16", [2, 2 ** 62])], raw=[b""])
    yield "types_negative_dim", request("types", [tensor("F16", "FP16", [2, -1])],
                                        raw=[b""])
    yield "types_batch_dim_given", request("types", [tensor("F16", "FP16", [1, 2, 1])],
                                           raw=[b"\x00" * 4])


def ragged_seeds():
    yield "ragged_required_only", request("ragged", [
        tensor("RAGGED", "FP32", [1, 3], ("fp32_contents", [1.0, 2.0, 3.0])),
        tensor("REQUIRED", "UINT32", [1, 2], ("uint_contents", [1, 2]))])
    yield "ragged_with_optional", request("ragged", [
        tensor("RAGGED", "FP32", [2, 1], ("fp32_contents", [1.0, 2.0])),
        tensor("OPTIONAL", "INT32", [2, 1], ("int_contents", [1, 2])),
        tensor("REQUIRED", "UINT32", [2, 2], ("uint_contents", [1, 2, 3, 4]))],
        outputs=["INDEX"])
    yield "ragged_missing_required", request("ragged", [
        tensor("RAGGED", "FP32", [1, 1], ("fp32_contents", [1.0]))])


def flat_seeds():
    yield "flat_ok", request("flat", [
        tensor("IN", "INT32", [2, 2], ("int_contents", [1, 2, 3, 4])),
        tensor("WORDS", "BYTES", [3], ("bytes_contents", [b"a", b"b", b"c"]))])
    yield "flat_batched_shape", request("flat", [
        tensor("IN", "INT32", [1, 2, 2], ("int_contents", [1, 2, 3, 4]))])


def lookup_seeds():
    ints = ("int_contents", list(range(16)))
    inputs = [tensor("INPUT0", "INT32", [1, 16], ints)]
    yield "lookup_unknown_model", request("nope", inputs)
    yield "lookup_empty_name", request("", inputs)
    yield "lookup_version_missing", request("simple", inputs, version="2")
    yield "lookup_version_not_a_number", request("simple", inputs, version="1x")
    yield "lookup_version_negative", request("simple", inputs, version="-1")
    yield "lookup_version_huge", request("simple", inputs, version="99999999999999999999")
    yield "lookup_name_with_nul", request("simple\0", inputs)


def sequence_seeds():
    """The sequence extension's parameters: correlation IDs of each kind and
    the START/END flags, then values of the wrong type and past our bounds."""
    ints = ("int_contents", list(range(16)))
    inputs = [tensor("INPUT0", "INT32", [1, 16], ints),
              tensor("INPUT1", "INT32", [1, 16], ints)]
    seeds = {
        "seq_int64_start": {"sequence_id": ("int64_param", 7),
                            "sequence_start": ("bool_param", True)},
        "seq_int64_negative": {"sequence_id": ("int64_param", -7)},
        "seq_uint64_end": {"sequence_id": ("uint64_param", 2**64 - 1),
                           "sequence_end": ("bool_param", True)},
        "seq_string_start_end": {"sequence_id": ("string_param", "conversation-1"),
                                 "sequence_start": ("bool_param", True),
                                 "sequence_end": ("bool_param", True)},
        "seq_string_empty": {"sequence_id": ("string_param", "")},
        "seq_string_too_long": {"sequence_id": ("string_param", "x" * 257)},
        "seq_string_nul": {"sequence_id": ("string_param", "a\0b")},
        "seq_id_bool": {"sequence_id": ("bool_param", True)},
        "seq_start_int64": {"sequence_id": ("int64_param", 1),
                            "sequence_start": ("int64_param", 1)},
        "seq_end_string": {"sequence_end": ("string_param", "true")},
    }
    for name, params in seeds.items():
        yield name, request("simple", inputs, params=params)


def shm_tensor(t, region, size, offset=None, kinds=("string_param", "int64_param")):
    setattr(t.parameters["shared_memory_region"], kinds[0], region)
    setattr(t.parameters["shared_memory_byte_size"], kinds[1], size)
    if offset is not None:
        t.parameters["shared_memory_offset"].int64_param = offset
    return t


def shm_seeds():
    """Tensors in the target's one region, "fuzz_region" (4096 bytes)."""
    def simple(in1, outputs=(), raw=None):
        r = gs.ModelInferRequest(model_name="simple")
        r.inputs.extend([shm_tensor(tensor("INPUT0", "INT32", [1, 16]), "fuzz_region", 64),
                         in1])
        if raw is not None:
            r.raw_input_contents.extend(raw)
        for name, region, size, offset in outputs:
            shm_tensor(r.outputs.add(name=name), region, size, offset)
        return r.SerializeToString(deterministic=True)

    raw16 = struct.pack("<16i", *range(16))
    yield "shm_inputs_outputs", simple(
        shm_tensor(tensor("INPUT1", "INT32", [1, 16]), "fuzz_region", 64, 64),
        outputs=[("OUTPUT0", "fuzz_region", 64, 128), ("OUTPUT1", "fuzz_region", 64, 192)])
    yield "shm_mixed_raw", simple(tensor("INPUT1", "INT32", [1, 16]), raw=[raw16])
    yield "shm_unknown_region", simple(
        shm_tensor(tensor("INPUT1", "INT32", [1, 16]), "nope", 64))
    yield "shm_offset_past_end", simple(
        shm_tensor(tensor("INPUT1", "INT32", [1, 16]), "fuzz_region", 64, 4090))
    yield "shm_size_mismatch", simple(
        shm_tensor(tensor("INPUT1", "INT32", [1, 16]), "fuzz_region", 60))
    yield "shm_wrong_types", simple(
        shm_tensor(tensor("INPUT1", "INT32", [1, 16]), 7, "64",
                   kinds=("int64_param", "string_param")))
    yield "shm_output_too_small", simple(
        shm_tensor(tensor("INPUT1", "INT32", [1, 16]), "fuzz_region", 64, 64),
        outputs=[("OUTPUT0", "fuzz_region", 8, 0)])
    t = tensor("TEXT", "BYTES", [1, 2])
    r = gs.ModelInferRequest(model_name="strings")
    r.inputs.extend([shm_tensor(t, "fuzz_region", 12, 0),
                     tensor("FLAGS", "BOOL", [1, 2], ("bool_contents", [True, False]))])
    yield "shm_bytes", r.SerializeToString(deterministic=True)


def infer_request_seeds():
    for gen in (simple_seeds, strings_seeds, types_seeds, ragged_seeds, flat_seeds,
                lookup_seeds, sequence_seeds, shm_seeds):
        for name, data in gen():
            write("infer_request", name, data)


# ---- repository: a kind byte, then the request ------------------------------

LOAD, UNLOAD, INDEX = b"\x00", b"\x01", b"\x02"

SIMPLE_JSON = json.dumps({
    "backend": "identity", "max_batch_size": 8,
    "input": [{"name": "INPUT0", "data_type": "TYPE_INT32", "dims": [16]}],
    "output": [{"name": "OUTPUT0", "data_type": "TYPE_INT32", "dims": [16]}]})


def load(name, params=(), repo=""):
    r = gs.RepositoryModelLoadRequest(model_name=name, repository_name=repo)
    for key, kind, value in params:
        setattr(r.parameters[key], kind, value)
    return LOAD + r.SerializeToString(deterministic=True)


def unload(name, params=(), repo=""):
    r = gs.RepositoryModelUnloadRequest(model_name=name, repository_name=repo)
    for key, kind, value in params:
        setattr(r.parameters[key], kind, value)
    return UNLOAD + r.SerializeToString(deterministic=True)


def repository_seeds():
    config = ("config", "string_param", SIMPLE_JSON)
    onnx = ("file:1/model.onnx", "bytes_param", b"\x08\x07onnx")
    yield "load_plain", load("simple")
    yield "load_config", load("simple", [config])
    yield "load_config_files", load("simple", [
        config, onnx, ("file:./1//labels.txt", "bytes_param", b"a\nb\n")])
    yield "load_config_empty", load("simple", [("config", "string_param", "")])
    yield "load_config_other_name", load("simple", [
        ("config", "string_param", '{"name": "other", "backend": "identity"}')])
    yield "load_config_not_string", load("simple", [("config", "bytes_param", b"{}")])
    yield "load_files_without_config", load("simple", [onnx])
    yield "load_file_not_bytes", load("simple", [config, ("file:1/m", "string_param", "x")])
    yield "load_file_dotdot", load("simple", [config, ("file:1/../../x", "bytes_param", b"")])
    yield "load_file_absolute", load("simple", [config, ("file:/etc/x", "bytes_param", b"")])
    yield "load_file_empty_path", load("simple", [config, ("file:", "bytes_param", b"")])
    yield "load_file_only_dots", load("simple", [config, ("file:././/.", "bytes_param", b"")])
    yield "load_file_twice", load("simple", [
        config, ("file:1/a", "bytes_param", b"1"), ("file:1//./a", "bytes_param", b"2")])
    yield "load_file_deep", load("simple", [
        config, ("file:" + "/".join(["d"] * 17), "bytes_param", b"")])
    yield "load_file_long_name", load("simple", [
        config, ("file:1/" + "n" * 256, "bytes_param", b"")])
    yield "load_file_nul", load("simple", [config, ("file:1/a\0b", "bytes_param", b"")])
    yield "load_unknown_parameter", load("simple", [("priority", "int64_param", 1)])
    yield "load_name_whitespace", load(" \t")
    yield "load_name_dotdot", load("a..b")
    yield "load_name_slash", load("a/b")
    yield "load_name_hidden", load(".hidden")
    yield "load_name_nul", load("a\0b")
    yield "load_name_long", load("m" * 256)
    yield "load_repository_name", load("simple", repo="models")
    yield "unload_plain", unload("simple")
    yield "unload_dependents", unload("simple", [("unload_dependents", "bool_param", True)])
    yield "unload_dependents_not_bool", unload("simple", [
        ("unload_dependents", "string_param", "true")])
    yield "unload_name_nul", unload("a\0b")
    yield "unload_empty", unload("")
    yield "index_ready", INDEX + gs.RepositoryIndexRequest(ready=True).SerializeToString()
    yield "index_repository", INDEX + gs.RepositoryIndexRequest(
        repository_name="models").SerializeToString()


# ---- config_json: ModelConfig as JSON ---------------------------------------

def config_json_seeds():
    folder = os.path.join(TOP, "test", "data", "pbtxt", "valid")
    for name in sorted(os.listdir(folder)):
        c = mc.ModelConfig()
        with open(os.path.join(folder, name)) as f:
            text_format.Parse(f.read(), c)
        c.name = ""  # the load names the model; theirs differ
        yield "pbtxt_" + name[:-len(".pbtxt")] + ".json", json_format.MessageToJson(
            c, preserving_proto_field_name=True, indent=None, sort_keys=True)
    yield "simple.json", SIMPLE_JSON
    yield "camel_case_and_numbers.json", json.dumps({
        "name": "fuzz", "backend": "b", "maxBatchSize": 4,
        "input": [{"name": "I", "dataType": 8, "dims": ["-1", 2], "allowRaggedBatch": True}],
        "instanceGroup": [{"kind": 2, "count": 2}],
        "dynamicBatching": {"maxQueueDelayMicroseconds": "100",
                            "priorityLevels": 2, "defaultPriorityLevel": 1,
                            "priorityQueuePolicy": {"2": {"maxQueueSize": 3}}}})
    yield "platform_onnx.json", '{"platform": "onnxruntime_onnx"}'
    yield "platform_ensemble.json", '{"platform": "ensemble"}'
    yield "no_backend.json", '{"max_batch_size": 1}'
    yield "gpu_group.json", '{"backend": "b", "instance_group": [{"kind": "KIND_GPU"}]}'
    yield "negative_count.json", '{"backend": "b", "instance_group": [{"count": -1}]}'
    yield "zero_dim.json", '{"backend": "b", "input": [{"name": "a", "data_type": ' \
        '"TYPE_FP32", "dims": [0]}]}'
    yield "no_dims_flat.json", '{"backend": "b", "output": [{"name": "a", "data_type": ' \
        '"TYPE_FP32"}]}'
    yield "duplicate_input.json", '{"backend": "b", "input": [{"name": "a", "data_type": ' \
        '"TYPE_FP32", "dims": [1]}, {"name": "a", "data_type": "TYPE_FP32", "dims": [1]}]}'
    yield "preferred_too_big.json", '{"backend": "b", "max_batch_size": 2, ' \
        '"dynamic_batching": {"preferred_batch_size": [4]}}'
    yield "priority_default_out.json", '{"backend": "b", "dynamic_batching": ' \
        '{"priority_levels": 2, "default_priority_level": 3}}'
    yield "unknown_field.json", '{"backend": "b", "no_such_field": 1}'
    yield "unknown_enum.json", '{"backend": "b", "input": [{"name": "a", ' \
        '"data_type": "TYPE_NOPE"}]}'
    yield "whitespace_only.json", " \n\t"
    yield "float_specials.json", json.dumps({
        "backend": "b", "sequence_batching": {"control_input": [{"name": "C", "control": [
            {"kind": "CONTROL_SEQUENCE_START", "fp32_false_true": ["NaN", "-Infinity"]}]}]},
        "parameters": {"k": {"string_value": "v"}}})
    yield "groups_unnamed.json", '{"backend": "b", "instance_group": [{"count": 2}, ' \
        '{"kind": "KIND_MODEL"}]}'
    yield "enum_numbers.json", '{"backend": "b", "model_transaction_policy": ' \
        '{"decoupled": true}, "input": [{"name": "a", "data_type": 13, "format": 7, ' \
        '"dims": [1]}]}'
    yield "escapes.json", '{"backend": "b\\u0000", "input": [{"name": "\\u00e9\\ud83d' \
        '\\ude00", "data_type": "TYPE_STRING", "dims": [-1]}]}'


def dictionary():
    """Every field name of ModelConfig (proto and JSON spelling) and every
    enum value name, as libFuzzer dictionary entries with their quotes."""
    words = set()

    def visit(desc, seen):
        if desc.full_name in seen:
            return
        seen.add(desc.full_name)
        for f in desc.fields:
            words.add(f.name)
            words.add(f.json_name)
            if f.enum_type is not None:
                words.update(v.name for v in f.enum_type.values)
            if f.message_type is not None:
                visit(f.message_type, seen)

    visit(mc.ModelConfig.DESCRIPTOR, set())
    words.update(["NaN", "Infinity", "-Infinity"])
    lines = ["# Generated by make_corpus.py: ModelConfig's field and enum names,"]
    lines += ["# and the JSON spellings of special floats."]
    lines += ['"\\"%s\\""' % w for w in sorted(words)]
    with open(os.path.join(HERE, "config_json.dict"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    infer_request_seeds()
    for name, data in repository_seeds():
        write("repository", name, data)
    for name, data in config_json_seeds():
        write("config_json", name, data)
    dictionary()


if __name__ == "__main__":
    main()
