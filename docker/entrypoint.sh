#!/usr/bin/env bash
# Container entrypoint. Everything is configured by environment variables (see docs/deploy.md).
#
#   ROLE=all     (default) redis-server (unless CELERY_BROKER_URL points elsewhere), one Celery worker
#                with beat (the reconciler), and the web process `python -m space` on $PORT.
#   ROLE=web     only the web process; CELERY_BROKER_URL must name the shared Redis.
#   ROLE=worker  only Celery worker(s) on the shared Redis (WORKER_CONCURRENCY, WORKER_QUEUES, WORKER_BEAT).
#
# If any child exits, the others are stopped and the container exits non-zero, so the platform restarts it
# (no half-alive container that serves a UI while nothing scores).
set -euo pipefail
cd "$(dirname "$0")/.."

ROLE=${ROLE:-all}
DATA_DIR=${DATA_DIR:-/home/user/data}
REDIS_PORT=${REDIS_PORT:-6379}
WORKER_QUEUES=${WORKER_QUEUES:-submissions,publish,rescore}
WORKER_CONCURRENCY=${WORKER_CONCURRENCY:-1}
export DATA_DIR
mkdir -p "$DATA_DIR"

pids=()
stop_all() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait || true
}
trap 'stop_all; exit 143' TERM INT

start_redis() {
  mkdir -p "$DATA_DIR/redis"
  # Loopback only, no persistence: the broker holds messages, the store holds the truth, and the
  # reconciler re-sends anything lost in a restart.
  redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no \
    --dir "$DATA_DIR/redis" --logfile "" &
  pids+=("$!")
  for _ in $(seq 100); do
    redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "redis-server did not start" >&2
  exit 1
}

start_worker() {
  local beat=()
  if [ "${WORKER_BEAT:-1}" = 1 ]; then
    beat=(--beat --schedule "$DATA_DIR/celerybeat-schedule")
  fi
  celery -A worker worker --queues "$WORKER_QUEUES" --concurrency "$WORKER_CONCURRENCY" \
    --loglevel "${LOG_LEVEL:-INFO}" "${beat[@]}" &
  pids+=("$!")
}

case "$ROLE" in
  all)
    if [ -z "${CELERY_BROKER_URL:-}" ]; then
      start_redis
      export CELERY_BROKER_URL="redis://127.0.0.1:$REDIS_PORT/0"
    fi
    # Idempotent: references, public files and demo baselines, only when missing (local store demo).
    if [ "${SEED_DEMO:-1}" = 1 ]; then python -m worker seed; fi
    start_worker
    python -m space &
    pids+=("$!")
    ;;
  web)
    : "${CELERY_BROKER_URL:?ROLE=web needs CELERY_BROKER_URL (the shared Redis)}"
    python -m space &
    pids+=("$!")
    ;;
  worker)
    : "${CELERY_BROKER_URL:?ROLE=worker needs CELERY_BROKER_URL (the shared Redis)}"
    start_worker
    ;;
  *)
    echo "ROLE must be all, web or worker (got '$ROLE')" >&2
    exit 2
    ;;
esac

# Exit as soon as one child does; take the others down with it.
status=0
wait -n || status=$?
stop_all
exit "${status:-1}"
