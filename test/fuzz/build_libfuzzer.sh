#!/usr/bin/env bash
# Builds every fuzz target with clang's libFuzzer and ASan+UBSan, outside
# Bazel (whose toolchain here is gcc). A fuzz target is a cc_binary tagged
# "fuzz_target" (test/fuzz/fuzz.bzl); its sources are the C files Bazel
# builds it from (bazel cquery), minus fuzz_driver.c, whose main() libFuzzer
# replaces. `bazel build` of the targets comes first: it generates the upb
# code they include. Our files get coverage instrumentation; upb and the
# generated code get ASan only (fuzzing aims at our code). Objects are
# shared by the targets and rebuilt only when a file they read changed.
# Usage: test/fuzz/build_libfuzzer.sh [OUT_DIR]   -> OUT_DIR/<target> each
# (default OUT_DIR: libfuzzer/ in this workspace's Bazel output base).
# Environment: CLANG (default clang-14), JOBS (default: the cores).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out=${1:-$(bazel info output_base 2>/dev/null)/libfuzzer}
out=$(realpath -m "$out")
cc=${CLANG:-clang-14}
jobs=${JOBS:-$(nproc)}
upb=third_party/upb_src
# The system libraries server_lib links (third_party/system.BUILD); those a
# target does not use are dropped (--as-needed).
libs=(-Wl,--as-needed -lgrpc -lgpr -lck -ljansson -lh2o-evloop -lcrypto -lz -lnuma -lxxhash -ldl -lpthread -lm)

mapfile -t targets < <(bazel query --noshow_progress \
  'attr(tags, "fuzz_target", kind(cc_binary, //...))' 2>/dev/null)
[ ${#targets[@]} -gt 0 ] || { echo "build_libfuzzer: no fuzz target found" >&2; exit 1; }
if ! log=$(bazel build --noshow_progress "${targets[@]}" 2>&1); then
  echo "$log" >&2
  echo "build_libfuzzer: bazel build failed" >&2
  exit 1
fi
gen=$(bazel info bazel-bin 2>/dev/null)
gen=${gen#"$PWD/"}

ours_flags=(-std=gnu11 -O1 -g -fno-omit-frame-pointer -Wall -Wextra -Werror
  -Wno-unused-parameter -Wshadow -Wstrict-prototypes -Wmissing-prototypes
  -D_COMPILING_TRITONSERVER -D_COMPILING_TRITONBACKEND
  -DH2O_USE_LIBUV=0 # as @system//:h2o defines: h2o's evloop API
  -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined)
lib_flags=(-std=gnu99 -O1 -g -fno-omit-frame-pointer -w -msse4.1 -fsanitize=address)
# Objects made with other flags or another compiler are all made again.
flags_id="$cc ${ours_flags[*]} / ${lib_flags[*]}"
if [ "$(cat "$out/obj/.flags" 2>/dev/null)" != "$flags_id" ]; then
  rm -rf "$out/obj"
  mkdir -p "$out/obj"
  echo "$flags_id" >"$out/obj/.flags"
fi

# The C files of target $1 as workspace paths, one per line. Generated files
# count only in the target's own configuration (not the code generator's).
sources_of() {
  local t=$1 cfg label conf pkg rel src
  cfg=$(bazel cquery --noshow_progress "$t" 2>/dev/null | sed -n 's/.* (\(.*\))$/\1/p')
  bazel cquery --noshow_progress "kind('(source|generated) file', deps($t))" 2>/dev/null |
    while read -r label conf; do
      case $label in *.c) ;; *) continue ;; esac
      case $label in *:fuzz_driver.c | *-neon.c) continue ;; esac
      case $label in
        @upb//:*) rel=${label#@upb//:} src=$upb/$rel pkg=external/upb ;;
        //*:*) pkg=${label#//} rel=${label#*:} pkg=${pkg%%:*} src=${pkg:+$pkg/}$rel ;;
        *) continue ;;
      esac
      if [ "$conf" = "(null)" ]; then
        echo "$src"
      elif [ "$conf" = "($cfg)" ]; then
        echo "$gen/$pkg/$rel"
      fi
    done | sort -u
}

# Whether object $1 is missing or older than a file its .d lists.
stale() {
  local obj=$1 dep
  [ -f "$obj" ] && [ -f "$obj.d" ] || return 0
  for dep in $(sed -e '1s/^[^:]*://' -e 's/\\$//' "$obj.d"); do
    [ "$dep" -nt "$obj" ] && return 0
  done
  return 1
}

obj_of() { echo "$out/obj/$(echo "${1#"$gen"/}" | tr / _).o"; }

declare -A link_objs
todo=$(mktemp)
trap 'rm -f "$todo"' EXIT
for t in "${targets[@]}"; do
  objs=()
  while read -r src; do
    obj=$(obj_of "$src")
    objs+=("$obj")
    if stale "$obj" && ! grep -qxF "$src" "$todo"; then echo "$src" >>"$todo"; fi
  done < <(sources_of "$t")
  link_objs[$t]="${objs[*]}"
done

# Include folders: ours, upb's, and those of the generated headers.
incs=(-I. -Ibackends/include -I"$upb" -I"$gen/external/upb" -I"$gen")
for d in $(find "$gen/proto" "$gen/test" -name '*.upb.h' -printf '%h\n' | sort -u); do
  incs+=(-I"$d")
done

compile() {
  local src=$1 obj flags=("${ours_flags[@]}")
  obj=$(obj_of "$src")
  [[ $src == "$upb"/* || $src == "$gen"/* ]] && flags=("${lib_flags[@]}")
  "$cc" -c "${flags[@]}" "${incs[@]}" -MMD -MF "$obj.d" "$src" -o "$obj"
}

n=$(wc -l <"$todo")
[ "$n" -eq 0 ] || echo "build_libfuzzer: compiling $n files with $cc ($jobs jobs)"
pids=()
while read -r src; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  compile "$src" &
  pids+=($!)
done <"$todo"
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=1; done
[ "$failed" -eq 0 ] || { echo "build_libfuzzer: compiling failed" >&2; exit 1; }

for t in "${targets[@]}"; do
  bin=$out/${t##*:}
  read -ra objs <<<"${link_objs[$t]}"
  relink=0
  [ -f "$bin" ] || relink=1
  for o in "${objs[@]}"; do [ "$o" -nt "$bin" ] && relink=1 && break; done
  [ "$relink" -eq 1 ] && "$cc" -fsanitize=fuzzer,address,undefined "${objs[@]}" "${libs[@]}" -o "$bin"
  echo "built $bin"
done
