#!/bin/bash
# Checks each backend library given as an argument: it defines (exports)
# only backend entry points, never a server API function (those must stay
# undefined, to bind to libtritonserver.so), and it has the one required
# entry point, TRITONBACKEND_ModelInstanceExecute. One case per library.
set -u
entry_points='^TRITONBACKEND_(Initialize|Finalize|GetBackendAttribute|ModelInitialize|ModelFinalize|ModelInstanceInitialize|ModelInstanceFinalize|ModelInstanceExecute|ModelBatcherInitialize|ModelBatcherFinalize|ModelBatchIncludeRequest|ModelBatchInitialize|ModelBatchFinalize)$'
passed=0
failed=0
for lib in "$@"; do
  defined=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^$')
  extra=$(grep -Ev "$entry_points" <<<"$defined")
  ok=1
  if [ -n "$extra" ]; then
    echo "$lib exports more than entry points:"
    echo "$extra" | sed 's/^/  /'
    ok=0
  fi
  if ! grep -qx TRITONBACKEND_ModelInstanceExecute <<<"$defined"; then
    echo "$lib lacks TRITONBACKEND_ModelInstanceExecute"
    ok=0
  fi
  if ! nm -D --undefined-only "$lib" | grep -q ' TRITONSERVER_ErrorNew$'; then
    echo "$lib does not leave TRITONSERVER_ErrorNew to the server"
    ok=0
  fi
  if [ $ok = 1 ]; then
    echo "exports.$(basename "$lib") ok"
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done
echo "unit: $passed passed, $failed failed"
[ $failed = 0 ] && [ $passed -gt 0 ]
