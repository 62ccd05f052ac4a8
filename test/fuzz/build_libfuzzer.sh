#!/usr/bin/env bash
# Builds the pbtxt fuzz target with clang's libFuzzer and ASan/UBSan, outside
# Bazel (Bazel here has no clang toolchain). Run from the workspace root after
# `bazel build //test/fuzz:pbtxt_fuzz`, which generates the upb code it uses.
# Usage: test/fuzz/build_libfuzzer.sh [OUT_DIR]   -> OUT_DIR/pbtxt_fuzz
set -euo pipefail
out=${1:-/tmp/nereid-fuzz}
gen=bazel-out/k8-opt/bin
upb=third_party/upb_src
inc=(-I. -I"$upb" -I"$gen/external/upb" -I"$gen/proto" -I"$gen/test/data/pbtxt")
mkdir -p "$out/obj"

# upb and generated code: ASan only (no coverage: fuzzing aims at our code).
lib_srcs=(
  "$gen/external/upb/google/protobuf/descriptor.upb.c"
  "$gen/external/upb/google/protobuf/descriptor.upbdefs.c"
  "$gen/proto/model_config.upb.c" "$gen/proto/model_config.upbdefs.c"
  "$gen/test/data/pbtxt/all_types.upb.c" "$gen/test/data/pbtxt/all_types.upbdefs.c"
)
for f in arena array decode decode_fast def encode extension_registry map mini_descriptor \
         mini_table mini_table_accessors msg reflection status table text_encode upb; do
  lib_srcs+=("$upb/upb/$f.c")
done
lib_srcs+=("$upb/third_party/utf8_range/naive.c" "$upb/third_party/utf8_range/range2-sse.c")

ours=(server/config/lex.c server/config/literal.c server/config/pbtxt.c
      server/config/round_trip.c test/fuzz/pbtxt_fuzz.c)

objs=()
for src in "${lib_srcs[@]}"; do
  obj="$out/obj/$(basename "${src%.c}").lib.o"
  clang -c -std=gnu99 -O1 -g -w -msse4.1 -fsanitize=address "${inc[@]}" "$src" -o "$obj"
  objs+=("$obj")
done
for src in "${ours[@]}"; do
  obj="$out/obj/$(basename "${src%.c}").o"
  clang -c -std=gnu11 -O1 -g -Wall -Wextra -Werror -Wno-unused-parameter \
    -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined \
    "${inc[@]}" "$src" -o "$obj"
  objs+=("$obj")
done
clang -fsanitize=fuzzer,address,undefined "${objs[@]}" -o "$out/pbtxt_fuzz"
echo "built $out/pbtxt_fuzz"
