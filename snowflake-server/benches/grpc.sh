#!/usr/bin/env bash
# The gRPC API under load beside the HTTP routes, in one run against one server: single IDs,
# batches of 1 000 and streams, as IDs/s with p50 and p99. HTTP through wrk (as serve.sh),
# gRPC through the load client examples/grpc_load.rs (tonic); client and server share the
# machine's cores. When FERROID names a ferroid-tonic-server binary and h2load is installed,
# the same h2load command then asks both servers for 1 000 IDs per call (our IssueBatch, its
# StreamIds), one sequence space each.
#
#   snowflake-server/benches/grpc.sh        # DURATION=10 (seconds per row); prints the table
#   FERROID=/path/to/ferroid-tonic-server snowflake-server/benches/grpc.sh
#
# Needs wrk (apt-get install -y wrk); the comparison needs h2load (apt-get install -y
# nghttp2-client) and `cargo install ferroid-tonic-server` (which needs protoc to build).
set -euo pipefail
cd "$(dirname "$0")/../.."
DURATION="${DURATION:-10}"
LUA="snowflake-server/benches/report.lua"
command -v wrk >/dev/null || { echo "wrk is not installed: apt-get install -y wrk" >&2; exit 1; }

# No lease store is needed here: the server runs as a fixed worker.
cargo build --release -q -p snowflake-server --no-default-features --features grpc --bin snowflake-server --example grpc_load
target="${CARGO_TARGET_DIR:-target}/release"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port)
RUST_LOG=warn "$target/snowflake-server" --listen "127.0.0.1:$port" --worker 1 \
    --id order=preset=leaf,epoch=2020-01-01 >/dev/null &
server=$!
ferroid=""
trap 'kill $server $ferroid 2>/dev/null; wait 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
base="http://127.0.0.1:$port"

ms() { python3 -c "print(f'{$1/1000:.2f} ms')"; }
row() { printf '| %s | %s | %s | %s | %s | %s |\n' "$@"; }

# http NAME PATH CONNECTIONS IDS_PER_REQUEST -> a row
http() {
    local line
    line=$(DELAY_MS=0 wrk -t 1 -c "$3" -d "${DURATION}s" --latency -s "$LUA" "$base$2" | grep '^RESULT')
    read -r rps p50 p99 errors < <(echo "$line" |
        sed -E 's/.*rps=([0-9]+) p50_us=([0-9]+) p99_us=([0-9]+) p999_us=([0-9]+) max_us=([0-9]+) errors=([0-9]+).*/\1 \2 \3 \6/')
    row "$1" "$3 connections" "$((rps * $4))" "$(ms "$p50")" "$(ms "$p99")" "$errors"
}

# grpc NAME MODE CONCURRENCY CONNECTIONS COUNT -> a row
grpc() {
    local line
    line=$("$target/examples/grpc_load" "$base" "$2" "$DURATION" "$3" "$4" "$5")
    read -r ids p50 p99 errors < <(echo "$line" |
        sed -E 's/.*ids_per_s=([0-9]+) p50_us=([0-9]+) p99_us=([0-9]+) errors=([0-9]+).*/\1 \2 \3 \4/')
    row "$1" "$3 in flight, $4 connections" "$ids" "$(ms "$p50")" "$(ms "$p99")" "$errors"
}

# Warm-up.
wrk -t 1 -c 32 -d 2s "$base/v1/ids/order" >/dev/null
"$target/examples/grpc_load" "$base" unary 2 32 4 >/dev/null

echo "| call | load | IDs/s | p50 | p99 | errors |"
echo "|---|---|---:|---:|---:|---:|"
http 'HTTP `GET /v1/ids/order`' /v1/ids/order 32 1
grpc 'gRPC `Issue`' unary 32 4 1
http 'HTTP `GET /v1/ids/order?count=1000`' "/v1/ids/order?count=1000" 32 1000
grpc 'gRPC `IssueBatch`, 1 000' batch 32 4 1000
grpc 'gRPC `IssueStream`, chunks of 1 000 (p50/p99: between chunks)' stream 4 1 1000
grpc 'gRPC `IssueStream`, chunks of 4 096 (p50/p99: between chunks)' stream 1 1 4096

if [ -n "${FERROID:-}" ] && command -v h2load >/dev/null; then
    fport=$(free_port)
    "$FERROID" --server-addr "127.0.0.1:$fport" --num-workers 1 --ids-per-chunk 1000 >/dev/null 2>&1 &
    ferroid=$!
    sleep 2
    body=$(mktemp)
    # h2load CALL URL BODY_HEX -> "requests/s mean"; a gRPC message: flag 0, length, protobuf.
    h2() {
        printf "$3" >"$body"
        h2load -D "$DURATION" -c 4 -m 8 -d "$body" -H 'content-type: application/grpc' -H 'te: trailers' "$2" |
            awk '/^finished in/ { rps = $4 } /^requests:/ { ok = $8 } /^time for request:/ { mean = $6 }
                 END { print rps, mean, ok }'
    }
    echo
    echo "| server (h2load, 4 connections, 8 calls in flight each) | call | IDs/s | mean | succeeded |"
    echo "|---|---|---:|---:|---:|"
    # IssueBatchRequest { type: "order", count: 1000 }: 0a 05 "order" 10 e8 07.
    read -r rps mean ok < <(h2 ours "$base/snowflake.v1.Snowflake/IssueBatch" '\x00\x00\x00\x00\x0a\x0a\x05order\x10\xe8\x07')
    echo "| snowflake serve | \`IssueBatch\`, 1 000 | $(python3 -c "print(round($rps * 1000))") | $mean | $ok |"
    # StreamIdsRequest { count: 1000 }: 08 e8 07.
    read -r rps mean ok < <(h2 ferroid "http://127.0.0.1:$fport/ferroid.IdGenerator/StreamIds" '\x00\x00\x00\x00\x03\x08\xe8\x07')
    echo "| ferroid-tonic-server, 1 worker | \`StreamIds\`, 1 000 | $(python3 -c "print(round($rps * 1000))") | $mean | $ok |"
    rm -f "$body"
fi
