#!/usr/bin/env bash
# Starts redpoll (HTTP API, stream and workers) on the embedded default server,
# data in ./redpoll-data unless REDPOLL_DATA_DIR says otherwise. Installs what
# it needs into .venv first. Options go to `redpoll serve` (see --help).
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e .
exec .venv/bin/redpoll serve "$@"
