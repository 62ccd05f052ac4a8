#!/usr/bin/env bash
# Runs pbtxt_crosscheck.py under Debian's python3, the one that sees
# python3-protobuf. Args: <pbtxt_to_binary> <model_config_pb2.py>
# <all_types_pb2.py> <model_config.proto> <all_types.proto>.
set -euo pipefail
exec /usr/bin/python3 server/config/pbtxt_crosscheck.py --tool "$1" \
  --stubs "$(dirname "$2")" --stubs "$(dirname "$3")" --data test/data/pbtxt \
  --model-config-proto "$4" --all-types-proto "$5"
