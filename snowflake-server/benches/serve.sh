#!/usr/bin/env bash
# The service under load, with wrk: single IDs with keep-alive, batches of 1 000, and the
# constant route /v1/ping (the HTTP floor of the machine) in the same run; then each at about
# half its peak rate for the tail latency. Client and server share the machine's cores.
#
#   snowflake-server/benches/serve.sh            # DURATION=10s CONNECTIONS=32 by default
#
# Needs wrk (apt-get install -y wrk). Prints a Markdown table for BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
DURATION="${DURATION:-10s}"
CONNECTIONS="${CONNECTIONS:-32}"
THREADS="${THREADS:-1}"
LUA="snowflake-server/benches/report.lua"
command -v wrk >/dev/null || { echo "wrk is not installed: apt-get install -y wrk" >&2; exit 1; }

# No lease store is needed here: the server runs as a fixed worker.
cargo build --release -q -p snowflake-server --no-default-features
target="${CARGO_TARGET_DIR:-target}"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
RUST_LOG=warn "$target/release/snowflake-server" --listen "127.0.0.1:$port" --worker 1 \
    --id order=preset=leaf,epoch=2020-01-01 >/dev/null &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
base="http://127.0.0.1:$port"

# run NAME PATH [DELAY_MS] -> "rps p50 p99 p999 errors"
run() {
    local line
    line=$(DELAY_MS="${3:-0}" wrk -t "$THREADS" -c "$CONNECTIONS" -d "$DURATION" --latency -s "$LUA" "$base$2" | grep '^RESULT')
    echo "$1 $line" >&2
    echo "$line" | sed -E 's/.*rps=([0-9]+) p50_us=([0-9]+) p99_us=([0-9]+) p999_us=([0-9]+) max_us=([0-9]+) errors=([0-9]+).*/\1 \2 \3 \4 \6/'
}

wrk -t "$THREADS" -c "$CONNECTIONS" -d 2s "$base/v1/ids/order" >/dev/null   # warm-up
read -r ping_rps ping_p50 ping_p99 ping_p999 ping_err < <(run ping /v1/ping)
read -r one_rps one_p50 one_p99 one_p999 one_err < <(run single /v1/ids/order)
read -r batch_rps batch_p50 batch_p99 batch_p999 batch_err < <(run batch "/v1/ids/order?count=1000")

# About half the peak: each connection waits 1 ms between requests (wrk's Lua `delay`), so
# the rate grows with the connections. A 3 s run at peak/2000 connections calibrates how many
# give half the peak; the measured rate is reported beside the latencies.
half() {
    local target=$(($1 / 2)) c r
    c=$(python3 -c "print(max(1, round($target / 1000)))")
    r=$(DELAY_MS=1 wrk -t "$THREADS" -c "$c" -d 3s -s "$LUA" "$base$2" | sed -nE 's/^RESULT .*rps=([0-9]+).*/\1/p')
    python3 -c "print(max(1, round($c * $target / max($r, 1))))"
}
ping_c=$(half "$ping_rps" /v1/ping)
one_c=$(half "$one_rps" /v1/ids/order)
read -r hping_rps _ hping_p99 hping_p999 hping_err < <(CONNECTIONS=$ping_c run ping-half /v1/ping 1)
read -r hone_rps _ hone_p99 hone_p999 hone_err < <(CONNECTIONS=$one_c run single-half /v1/ids/order 1)

us() { python3 -c "print(f'{$1/1000:.2f} ms')"; }
echo
echo "| route | requests/s | IDs/s | p50 | p99 | p99.9 | errors |"
echo "|---|---:|---:|---:|---:|---:|---:|"
echo "| \`/v1/ping\` (floor), $CONNECTIONS connections | $ping_rps | | $(us "$ping_p50") | $(us "$ping_p99") | $(us "$ping_p999") | $ping_err |"
echo "| \`/v1/ids/order\`, $CONNECTIONS connections | $one_rps | $one_rps | $(us "$one_p50") | $(us "$one_p99") | $(us "$one_p999") | $one_err |"
echo "| \`/v1/ids/order?count=1000\`, $CONNECTIONS connections | $batch_rps | $((batch_rps * 1000)) | $(us "$batch_p50") | $(us "$batch_p99") | $(us "$batch_p999") | $batch_err |"
echo "| \`/v1/ping\` at ~half peak ($ping_c connections, 1 ms apart) | $hping_rps | | | $(us "$hping_p99") | $(us "$hping_p999") | $hping_err |"
echo "| \`/v1/ids/order\` at ~half peak ($one_c connections, 1 ms apart) | $hone_rps | $hone_rps | | $(us "$hone_p99") | $(us "$hone_p999") | $hone_err |"
echo
echo "single IDs / floor: $(python3 -c "print(f'{$one_rps/$ping_rps:.2f}')")×"
