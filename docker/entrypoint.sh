#!/usr/bin/env bash
# Container entrypoint. Everything is configured by environment variables (see docs/deploy.md).
#
#   ROLE=all     (default) redis-server (unless CELERY_BROKER_URL points elsewhere), one Celery worker
#                with beat (the reconciler), and the web process `python -m space` on $PORT.
#   ROLE=web     only the web process; CELERY_BROKER_URL must name the shared Redis.
#   ROLE=worker  only Celery worker(s) on the shared Redis (WORKER_CONCURRENCY, WORKER_QUEUES, WORKER_BEAT).
#
# The Celery worker is supervised: when it exits (a broker outage it could not ride out, an OOM kill) it is
# restarted with back-off (1 s doubling up to WORKER_RESTART_MAX_DELAY, 30 s) and health says "restarting"
# meanwhile; no outage of Redis needs a person. If any other child exits, the entrypoint logs which one and
# why, stops the others and exits non-zero, so the platform restarts it.
#
# Two OS users: started as root (the image's default), it prepares DATA_DIR (docker/two_users.py) and runs
# Redis and the workers as `user`, the web process as `web`, which can open none of the workers' private
# files. Started as another uid (a Space runs it as 1000), that one uid runs everything and the web process
# shuts itself out with Landlock (WEB_SANDBOX, space/sandbox.py).
#
# With arguments it runs them instead, in the same environment (as `user`): `docker run IMAGE python -m
# worker seed`.
set -euo pipefail
cd "$(dirname "$0")/.."

ROLE=${ROLE:-all}
DATA_DIR=${DATA_DIR:-/home/user/data}
REDIS_PORT=${REDIS_PORT:-6379}
WORKER_QUEUES=${WORKER_QUEUES:-submissions,publish,rescore}
WORKER_CONCURRENCY=${WORKER_CONCURRENCY:-1}
WORKER_NODE_FILE=/tmp/celery-worker-node
export DATA_DIR

as_workers=() as_web=()
# TWO_OS_USERS=1 is set by the image, whose users these are (run elsewhere as root, the script keeps its uid).
if [ "$(id -u)" = 0 ] && [ "${TWO_OS_USERS:-0}" = 1 ]; then
  # Both users make files their group may share, and nobody else may read.
  umask 007
  python docker/two_users.py
  # No capabilities and no way to regain any; each with its own home.
  step_down=(--init-groups --inh-caps=-all --bounding-set=-all --no-new-privs)
  as_workers=(setpriv --reuid=user --regid=user "${step_down[@]}" env HOME=/home/user)
  as_web=(setpriv --reuid=web --regid=web "${step_down[@]}" env HOME=/home/web)
else
  mkdir -p "$DATA_DIR"
fi

if [ "$#" -gt 0 ]; then
  exec "${as_workers[@]}" "$@"
fi

log() { echo "entrypoint: $*" >&2; }

pids=()
declare -A names=()
started() {  # started NAME: remember the last background child under NAME
  pids+=("$!")
  names[$!]=$1
  log "started $1 (pid $!)"
}
stop_pids() {  # stop_pids SECONDS PID...: SIGTERM, then SIGKILL whatever still runs after SECONDS
  local grace=$1 pid deadline
  shift
  for pid in "$@"; do kill -TERM "$pid" 2>/dev/null || true; done
  deadline=$((SECONDS + grace))
  for pid in "$@"; do
    while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  wait "$@" 2>/dev/null || true
}
stop_all() {
  # Our Redis goes last: a stopping Celery worker hands its running tasks back through the broker, and with
  # the broker gone first its shutdown would wait for it forever.
  local others=() pid
  for pid in "${pids[@]}"; do [ "$pid" = "${redis_pid:-}" ] || others+=("$pid"); done
  if [ "${#others[@]}" -gt 0 ]; then stop_pids 10 "${others[@]}"; fi
  if [ -n "${redis_pid:-}" ]; then stop_pids 5 "$redis_pid"; fi
}
trap 'log "stopping (signal)"; stop_all; exit 143' TERM INT

start_redis() {
  local dir=$DATA_DIR/redis pid
  mkdir -p "$dir"
  rm -f "$dir/redis.sock"
  # Loopback only, no persistence: the broker holds messages, the store holds the truth, and the
  # reconciler re-sends anything lost in a restart. The unix socket in our own DATA_DIR is how we know
  # it is OUR server that answers: another Redis already on the port (host networking) cannot answer
  # there, and ours then fails to bind the port and exits, which the loop below reports.
  "${as_workers[@]}" redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --unixsocket "$dir/redis.sock" --unixsocketperm 700 \
    --save "" --appendonly no --dir "$dir" --logfile "" &
  pid=$!
  redis_pid=$pid
  started redis-server
  for _ in $(seq 100); do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "redis-server exited before it was ready (is 127.0.0.1:$REDIS_PORT taken? set REDIS_PORT)"
      stop_all
      exit 1
    fi
    [ "$(redis-cli -s "$dir/redis.sock" ping 2>/dev/null)" = PONG ] && return 0
    sleep 0.1
  done
  log "redis-server did not answer on $dir/redis.sock within 10 s"
  stop_all
  exit 1
}

start_web() {
  # The web process never signs and never reads the references: no SIGNING_KEY, and its own Hub token
  # (HF_WEB_TOKEN, which should not be able to read the references repo) or, with the local store, none.
  # As `web` it cannot open the workers' private files; on a Space it runs as their uid, so it also shuts
  # itself out of them with Landlock (space/sandbox.py): WEB_SANDBOX=auto unless the operator chose
  # otherwise (require: refuse to start without it; off).
  local unset_args=(-u SIGNING_KEY -u HF_WEB_TOKEN) set_args=("WEB_SANDBOX=${WEB_SANDBOX:-auto}")
  if [ -n "${HF_WEB_TOKEN:-}" ]; then
    set_args+=("HF_TOKEN=$HF_WEB_TOKEN")
  elif [ "${STORE:-}" = hub ] || [ -n "${HF_RESULTS_REPO:-}" ]; then
    log "warning: HF_WEB_TOKEN is unset, so the web process holds HF_TOKEN; give it a token of its own"
  else
    unset_args+=(-u HF_TOKEN)
  fi
  "${as_web[@]}" env "${unset_args[@]}" "${set_args[@]}" python -m space &  # env: options before NAME=VALUE
  started "web (python -m space)"
}

start_worker() {
  local beat=() node
  if [ "${WORKER_BEAT:-1}" = 1 ]; then
    # In the workers' own folder: a pickle shelf, never where the web user may write (docker/two_users.py).
    "${as_workers[@]}" mkdir -p "$DATA_DIR/workers"
    beat=(--beat --schedule "$DATA_DIR/workers/celerybeat-schedule")
  fi
  # A node name no other container shares (containers in one pod share the host name), kept where only
  # this container looks: the HEALTHCHECK pings exactly this node (docker/healthcheck.py).
  node=worker-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')@${HOSTNAME:-localhost}
  echo "$node" > "$WORKER_NODE_FILE"
  # SIGTERM -> Celery's cold shutdown with a soft phase (WORKER_SOFT_SHUTDOWN_TIMEOUT): running tasks get that
  # long, then their late-acked messages go back to the queue, so a restart hands work back at once.
  supervise "celery worker" "${as_workers[@]}" env REMAP_SIGTERM=SIGQUIT \
    celery -A worker worker --hostname "$node" --queues "$WORKER_QUEUES" --concurrency "$WORKER_CONCURRENCY" \
    --loglevel "${LOG_LEVEL:-INFO}" "${beat[@]}"
}

supervise() {  # supervise NAME CMD...: run CMD in the background; restart it with back-off when it exits
  local name=$1
  shift
  (
    child="" delay=1 max_delay=${WORKER_RESTART_MAX_DELAY:-30}
    max_delay=${max_delay%.*}
    trap '[ -n "$child" ] && kill -TERM "$child" 2>/dev/null; [ -n "$child" ] && wait "$child"; exit 143' TERM INT
    while true; do
      began=$SECONDS
      "$@" &
      child=$!
      status=0
      wait "$child" || status=$?
      pid=$child child=""
      # It had been running for a minute: a fresh failure, not a crash loop.
      [ $((SECONDS - began)) -ge 60 ] && delay=1
      log "$name exited (status $status); restarting in $delay s"
      # Health: "restarting" now (the dead worker's heartbeat dropped), not "ok" until it goes stale.
      "${as_workers[@]}" python -m worker.heartbeat restarting "$pid" >/dev/null 2>&1 || true
      sleep "$delay" &
      wait $! || true
      delay=$((delay * 2 > max_delay ? max_delay : delay * 2))
    done
  ) &
  started "$name (restarted when it exits)"
}

case "$ROLE" in
  all)
    if [ -z "${CELERY_BROKER_URL:-}" ]; then
      start_redis
      export CELERY_BROKER_URL="redis://127.0.0.1:$REDIS_PORT/0"
    fi
    # Idempotent: references, public files and demo baselines, only when missing (local store demo).
    if [ "${SEED_DEMO:-1}" = 1 ]; then
      "${as_workers[@]}" python -m worker seed || { log "python -m worker seed failed (exit $?)"; stop_all; exit 1; }
    fi
    start_worker
    start_web
    ;;
  web)
    : "${CELERY_BROKER_URL:?ROLE=web needs CELERY_BROKER_URL (the shared Redis)}"
    start_web
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

# Exit as soon as one child does; say which and why; take the others down with it.
status=0 exited=""
wait -n -p exited "${pids[@]}" || status=$?
why="exit status $status" name="a child"
if [ "$status" -gt 128 ]; then why="killed by SIG$(kill -l "$((status - 128))")"; fi
if [ -n "$exited" ]; then name=${names[$exited]:-a child}; fi
log "$name (pid ${exited:-?}) stopped: $why; stopping the others"
stop_all
[ "$status" = 0 ] && status=1  # a service that ends on its own is a failure too
exit "$status"
