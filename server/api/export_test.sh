#!/bin/bash
# Checks that a shared library made of //server/api:api_base exports the
# Triton API and nothing else: every defined dynamic function or object is a
# TRITONSERVER_* or TRITONBACKEND_* name (the linker's own _init, _fini,
# _edata, _end, __bss_start aside). The api_ helpers must stay hidden.
set -euo pipefail
lib="$1"
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' |
  grep -Ev '^(_init|_fini|_edata|_end|__bss_start)$' || true)
stray=$(grep -Ev '^(TRITONSERVER|TRITONBACKEND)_' <<<"$exported" || true)
if [[ -n "$stray" ]]; then
  echo "FAIL: exported symbols outside the Triton API:"
  echo "$stray"
  exit 1
fi
# A few that must be there (one per source file).
for sym in TRITONSERVER_ErrorNew TRITONSERVER_MessageDelete TRITONSERVER_ParameterNew \
  TRITONSERVER_DataTypeString TRITONSERVER_LogMessage TRITONSERVER_MetricObserve \
  TRITONSERVER_MetricsFormatted TRITONSERVER_BufferAttributesNew; do
  if ! grep -qx "$sym" <<<"$exported"; then
    echo "FAIL: $sym is not exported"
    exit 1
  fi
done
echo "export_test: $(wc -l <<<"$exported") API symbols exported, nothing else"
