#!/usr/bin/env bash
# Starts redpoll (HTTP API, stream and workers) on the embedded default server,
# with its data where every `redpoll` command looks for it: REDPOLL_DATA_DIR,
# else $XDG_DATA_HOME/redpoll (~/.local/share/redpoll). Installs into
# .venv first, but only when the install there is older than pyproject.toml
# (or missing): a restart does not spend seconds in pip. Options go to
# `redpoll serve` (see --help).
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
STAMP=.venv/.redpoll-installed  # touched after each install of this checkout
[ -x .venv/bin/python ] || "$PY" -m venv .venv
if [ ! -e "$STAMP" ] || [ ! -x .venv/bin/redpoll ] || [ pyproject.toml -nt "$STAMP" ]; then
    echo "run.sh: installing redpoll into .venv (pyproject.toml is newer than the install)" >&2
    .venv/bin/python -m pip install -q --disable-pip-version-check -e .
    touch "$STAMP"
fi
if [ -z "${REDPOLL_DATA_DIR:-}" ] && [ -d redpoll-data ]; then
    echo "run.sh: ./redpoll-data is not used; the data is where every redpoll command looks" \
         "(REDPOLL_DATA_DIR=$PWD/redpoll-data to keep using that one)" >&2
fi
exec .venv/bin/redpoll serve "$@"
