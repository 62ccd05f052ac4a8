#!/usr/bin/env bash
# Runs one end-to-end Python test under Debian's python3 (the python3 first on
# PATH may not see Debian's grpcio). Args: <test.py> <nereid binary> <a stub file>.
set -euo pipefail
test_py=$1
export NEREID_BIN=$PWD/$2
export NEREID_STUBS=$PWD/$(dirname "$3")
export PYTHONPATH=$PWD/test/e2e${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1
exec /usr/bin/python3 "$test_py"
