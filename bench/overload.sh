#!/usr/bin/env bash
# Overload loads against a real `rewardd serve` on loopback: the server alone
# on CPU 0 (one worker; GOMAXPROCS its own: 1, and 2 while a heavy request
# scores), the load generator on CPU 1, so that
# the clients' work does not come out of the server's core, as it would not
# with clients on other machines. A fresh server per run, with the load's
# config.
#
#   bench/overload.sh [path/to/rewardd] [load ...]
#
# rewardd-bench is taken from beside rewardd (make build puts both in bin/).
#
# Loads (default: all, in this order):
#   admission    20 clients sending again the moment they are answered against
#                max_inflight_requests 2 (capacity 2 clients, overload, capacity)
#   unauth       --attack unauth: calls without the token, HEADERS only
#   memory       --attack memory: 64 clients × 32 MiB requests, budget 1 GiB
#   memory-gomemlimit  the same with GOMEMLIMIT=256MiB, and so a budget of 256 MiB
#   streams      --attack streams: ScoreStream clients that never read
#   large        --attack large: one 250 MB request, budget 1.5 GiB, 256 connections
#   slow         --attack slow: 512 HTTP bodies at a byte every 2 s
#   idle         --attack idle: 8,000 idle connections to each port
#   similarity   --attack similarity: 64 × 200k-character inline similarity
#                rollouts next to 1-rollout requests
#
# The --attack loads (`rewardd-bench --attack`) run three phases, the valid
# clients alone (capacity, PHASE), with the attack (SECS), alone again
# (recovery), and print the server's CPU, peak RSS (VmHWM, reset per phase),
# open files, and its metrics before and after; they end with the bar
# (peak RSS under the budget, the valid clients at ≥ 80% of capacity, the
# attacker getting only refusals) and fail when it is not met.
#
# Environment: SERVER_PROCS (the server's GOMAXPROCS; default unset: the
# runtime's, with one P more while a heavy request scores), SERVER_FLAGS (more `rewardd serve` flags, such as
# --worker-nice 0), BENCH_FLAGS (more `rewardd-bench` flags for the --attack
# loads, such as --clients 4), GRPC_ADDR and HTTP_ADDR (the server's
# addresses, default 127.0.0.1:50091 and 127.0.0.1:8191), SECS (attack seconds, default 30), PHASE (capacity and
# recovery seconds, default 5), RUNS (runs of each load, default 1; the
# script ends with each load's shares over its runs and their median), OUT (a
# directory for each run's JSON and server log; default a temporary one,
# removed), DATA (GSM8K test.jsonl).
set -uo pipefail
bin=${1:-bin/rewardd}
benchbin=$(dirname "$bin")/rewardd-bench
shift || true
loads=("$@")
[ ${#loads[@]} -gt 0 ] || loads=(admission unauth memory memory-gomemlimit streams large slow idle similarity)
secs=${SECS:-30}
phase=${PHASE:-5}
runs=${RUNS:-1}
data=${DATA:-../shared/data/gsm8k_test.jsonl}
tmp=$(mktemp -d)
out=${OUT:-$tmp}
mkdir -p "$out"
grpc=${GRPC_ADDR:-127.0.0.1:50091}
http=${HTTP_ADDR:-127.0.0.1:8191}
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
printf 'overload-test-token\n' >"$tmp/token"

# start_server NAME LIMITS [env NAME=VALUE ...] [-- serve flags ...]
start_server() {
  local name=$1 limits=$2
  shift 2
  local envs=() flags=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
  [ "${1:-}" = -- ] && shift
  flags=("$@")
  [ -n "${SERVER_FLAGS:-}" ] && flags+=($SERVER_FLAGS)
  printf '%s\nlimits: {%s}\n' "$("$bin" serve -print-config)" "$limits" >"$tmp/config.yaml"
  [ -n "${SERVER_PROCS:-}" ] && envs+=("GOMAXPROCS=$SERVER_PROCS")
  env "${envs[@]}" taskset -c 0 "$bin" serve --config "$tmp/config.yaml" --workers 1 \
    --grpc-addr "$grpc" --http-addr "$http" "${flags[@]}" >"$out/$name.server.log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do
    curl -sf "$http/readyz" >/dev/null && break
    sleep 0.1
  done
  curl -sf "$http/readyz" >/dev/null || { echo "server did not start:"; cat "$out/$name.server.log"; exit 1; }
  grep -o '"memory_budget":"[^"]*"\|"go_memory_limit":"[^"]*"\|"max_message_bytes":"[^"]*"' "$out/$name.server.log" | tr '\n' ' '
  echo
}

stop_server() {
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "THE SERVER DIED during the load:"
    tail -5 "$out/$1.server.log"
  fi
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  pid=
}

# attack NAME ATTACK [bench flags ...]: one --attack run on the started server.
attack() {
  local name=$1 kind=$2
  shift 2
  taskset -c 1 "$benchbin" --attack "$kind" --addr "$grpc" --http-addr "$http" --server-pid "$pid" \
    --data "$data" --duration "${secs}s" --phase "${phase}s" --out "$out/$name.json" "$@" ${BENCH_FLAGS:-} |
    tee "$tmp/$name.txt"
  local rc=${PIPESTATUS[0]}
  # Each valid client kind's share, for the summary: "load kind percent".
  sed -n "s|^  [A-Z]*  valid \([A-Za-z]*\) clients under attack: .* rollouts/s, \([0-9]*\)% of .*|${name%.*} \1 \2|p" "$tmp/$name.txt" >>"$tmp/shares"
  return "$rc"
}

# summary: each load's valid shares over its runs, and their median.
summary() {
  [ -s "$tmp/shares" ] || return 0
  echo "######## valid clients' share of capacity under attack, by load (runs in order; median)"
  local key vals sorted n med
  while read -r key; do
    vals=$(awk -v k="$key" '$1 " " $2 == k {print $3}' "$tmp/shares")
    sorted=($(sort -n <<<"$vals"))
    n=${#sorted[@]}
    if [ $((n % 2)) -eq 1 ]; then med=${sorted[$((n / 2))]}; else med=$(( (sorted[n / 2 - 1] + sorted[n / 2]) / 2 )); fi
    printf '%-20s %s%%; median %s%%\n' "$key" "$(paste -sd, <<<"$vals" | sed 's/,/%, /g')" "$med"
  done < <(awk '{print $1 " " $2}' "$tmp/shares" | awk '!seen[$0]++')
}

# admission: the first overload test, the excess refused on arrival.
admission() {
  start_server admission 'max_inflight_requests: 2'
  ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
  local hz t0 t1
  hz=$(getconf CLK_TCK)
  for p in "capacity 2 ${phase}s" "overload 20 ${secs}s" "recovery 2 ${phase}s"; do
    set -- $p
    t0=$(ticks)
    echo "== $1: $2 clients, $3"
    taskset -c 1 "$benchbin" --addr "$grpc" --data "$data" --clients "$2" --duration "$3" \
      --baseline=false --out "$out/admission.$1.json" 2>&1 | grep -Ev '^(scenario|machine|note) '
    t1=$(ticks)
    echo "server CPU  $(( (t1 - t0) * 1000 / hz )) ms in $3 (one core)"
  done
  echo "server peak RSS $(awk '/VmHWM/ {print $2, $3}' "/proc/$pid/status")"
  stop_server admission
}

status=0
for load in "${loads[@]}"; do
  for run in $(seq "$runs"); do
    name=$load.$run
    echo "######## $load, run $run of $runs: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), commit $(git rev-parse --short HEAD 2>/dev/null), load average $(cut -d' ' -f1-3 /proc/loadavg)"
    case $load in
    admission) admission; continue ;;
    unauth)
      start_server "$name" 'memory_budget: 1GiB' -- --auth-token-file "$tmp/token"
      attack "$name" unauth --auth-token-file "$tmp/token" --memory-budget 1GiB ;;
    memory)
      start_server "$name" 'memory_budget: 1GiB, max_message_bytes: 41943040'
      attack "$name" memory --memory-budget 1GiB ;;
    memory-gomemlimit)
      # The budget defaults to the Go limit (a budget above it is a config
      # error), and a 33 MiB message must fit a quarter of its request share.
      start_server "$name" 'max_message_bytes: 37748736' GOMEMLIMIT=256MiB
      attack "$name" memory --memory-budget 256MiB ;;
    streams)
      start_server "$name" 'memory_budget: 1GiB, max_message_bytes: 41943040'
      attack "$name" streams --memory-budget 1GiB ;;
    large)
      start_server "$name" 'memory_budget: 1536MiB, max_message_bytes: 268435456, max_connections: 256'
      attack "$name" large --memory-budget 1536MiB ;;
    slow)
      start_server "$name" 'memory_budget: 1GiB, read_timeout: 10s'
      attack "$name" slow --memory-budget 1GiB ;;
    idle)
      start_server "$name" 'memory_budget: 1GiB'
      attack "$name" idle --memory-budget 1GiB ;;
    similarity)
      start_server "$name" 'memory_budget: 1GiB'
      attack "$name" similarity --batch-size 1 --memory-budget 1GiB ;;
    *) echo "unknown load $load"; exit 2 ;;
    esac
    rc=$?
    [ $rc -eq 0 ] || status=1
    stop_server "$name"
  done
done
summary
exit $status
