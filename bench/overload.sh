#!/usr/bin/env bash
# Overload test: a rewardd server alone on CPU 0 (GOMAXPROCS=1, one worker,
# at most 2 requests in flight), the load generator (`rewardd bench --addr`)
# on CPU 1, so that the clients' work does not come out of the server's
# core, as it would not with clients on other machines. Three phases:
# capacity (2 clients, as many as it admits), overload (20 clients sending
# again the moment they are answered: about 10x what it serves), and
# capacity again right after. Prints each phase's bench report and the
# server's CPU and peak RSS from /proc.
#
#   bench/overload.sh [path/to/rewardd] [overload seconds]
set -euo pipefail
bin=${1:-bin/rewardd}
secs=${2:-30}
data=${DATA:-../shared/data/gsm8k_test.jsonl}
tmp=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT

printf '%s\nlimits: {max_inflight_requests: 2}\n' "$("$bin" serve -print-config)" >"$tmp/config.yaml"
GOMAXPROCS=1 taskset -c 0 "$bin" serve --config "$tmp/config.yaml" --workers 1 \
  --grpc-addr 127.0.0.1:50091 --http-addr 127.0.0.1:8191 >"$tmp/server.log" 2>&1 &
pid=$!
for _ in $(seq 50); do
  curl -sf 127.0.0.1:8191/readyz >/dev/null && break
  sleep 0.1
done

ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
hz=$(getconf CLK_TCK)
phase() { # name clients duration
  local t0 t1
  t0=$(ticks)
  echo "== $1: $2 clients, $3"
  taskset -c 1 "$bin" bench --addr 127.0.0.1:50091 --data "$data" --clients "$2" --duration "$3" \
    --baseline=false --out "$tmp/$1.json" 2>&1 | grep -Ev '^(scenario|machine|note) ' || true
  t1=$(ticks)
  echo "server CPU  $(( (t1 - t0) * 1000 / hz )) ms in $3 (one core)"
}
phase capacity 2 5s
phase overload 20 "${secs}s"
phase recovery 2 5s
echo "server peak RSS $(awk '/VmHWM/ {print $2, $3}' "/proc/$pid/status")"
