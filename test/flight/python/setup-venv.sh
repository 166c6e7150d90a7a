#!/usr/bin/env bash
# Creates .venv-flight (repo root) with pyarrow (pyarrow.flight) and protobuf/grpcio-tools for the
# Flight SQL tests, from the machine's configured pip index (a local wheel index here).
# Idempotent: does nothing when the venv already imports everything. Exits non-zero, loudly,
# when it cannot.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
venv="$root/.venv-flight"
py="$venv/bin/python"
check() { "$py" -c 'import pyarrow.flight, google.protobuf, grpc_tools.protoc' >/dev/null 2>&1; }
if [ -x "$py" ] && check; then exit 0; fi
python3 -m venv "$venv"
# --retries 0: pip would otherwise retry an unreachable public index for a long time.
"$py" -m pip install --quiet --disable-pip-version-check --retries 0 \
  pyarrow==25.0.1 protobuf==7.36.2 grpcio==1.84.0 grpcio-tools==1.84.0 numpy
if ! check; then
  echo "setup-venv.sh: pyarrow.flight / protobuf / grpcio-tools do not import in $venv" >&2
  exit 1
fi
