#!/usr/bin/env bash
# The gRPC API under load beside the HTTP routes, in one run against one server: single IDs,
# batches of 1 000 and streams, as IDs/s with p50 and p99. HTTP through wrk (as serve.sh),
# gRPC through the load client examples/grpc_load.rs (tonic); client and server share the
# machine's cores. When FERROID names a ferroid-tonic-server binary and h2load is installed,
# the same h2load command then asks both servers for 1 000 IDs per call (our IssueBatch, its
# StreamIds), one sequence space each.
#
#   snowflake-server/benches/grpc.sh        # DURATION=10 (seconds per row); prints the tables
#   FERROID=/path/to/ferroid-tonic-server snowflake-server/benches/grpc.sh
#   SERVER=/path/to/another/snowflake-server snowflake-server/benches/grpc.sh   # another build
#
# Besides `order` (Leaf's layout: 12 sequence bits, a cap of 4.096 M IDs/s), the server
# serves `wide` (16 sequence bits, a cap of 65.5 M IDs/s, which no row reaches): its rows cost
# what the transport and the encoding cost without any wait for the clock, and the second
# table sets them layer by layer.
#
# Needs wrk (apt-get install -y wrk) and, for the rows by h2load (a client in C, as wrk is),
# h2load (apt-get install -y nghttp2-client); the comparison needs `cargo install
# ferroid-tonic-server` (which needs protoc to build).
set -euo pipefail
cd "$(dirname "$0")/../.."
DURATION="${DURATION:-10}"
LUA="snowflake-server/benches/report.lua"
command -v wrk >/dev/null || { echo "wrk is not installed: apt-get install -y wrk" >&2; exit 1; }

# No lease store is needed here: the server runs as a fixed worker.
cargo build --release -q -p snowflake-server --no-default-features --features grpc --bin snowflake-server --example grpc_load
target="${CARGO_TARGET_DIR:-target}/release"
SERVER="${SERVER:-$target/snowflake-server}"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port)
RUST_LOG=warn "$SERVER" --listen "127.0.0.1:$port" --worker 1 \
    --id order=preset=leaf,epoch=2020-01-01 --id wide=time=41,worker=6,seq=16,epoch=2020-01-01 >/dev/null &
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

body=$(mktemp)
# h2load URL BODY IDS_PER_CALL -> "IDs/s mean_latency succeeded failed"; BODY is printf's text of
# one gRPC message (a flag byte 0, a 4-byte length, the protobuf), sent as each call's request.
h2() {
    printf "$2" >"$body"
    h2load -D "$DURATION" -c 4 -m 8 -d "$body" -H 'content-type: application/grpc' -H 'te: trailers' "$1" |
        awk -v n="$3" '/^finished in/ { rps = $4 } /^requests:/ { ok = $8; failed = $10 + $12 }
             /^time for request:/ { mean = $6 } END { printf "%.0f %s %s %s\n", rps * n, mean, ok, failed }'
}
# h2row NAME URL BODY IDS_PER_CALL -> a row (h2load gives the mean, not percentiles)
h2row() {
    read -r ids mean ok failed < <(h2 "$2" "$3" "$4")
    row "$1" "h2load: 4 connections × 8 in flight" "$ids" "mean $mean" "" "$failed"
}
# IssueRequest { type: "order" }: 0a 05 "order". IssueBatchRequest adds count 1000: 10 e8 07.
issue='\x00\x00\x00\x00\x07\x0a\x05order'
batch='\x00\x00\x00\x00\x0a\x0a\x05order\x10\xe8\x07'

# Warm-up.
wrk -t 1 -c 32 -d 2s "$base/v1/ids/order" >/dev/null
"$target/examples/grpc_load" "$base" unary 2 32 4 >/dev/null

echo "| call | load | IDs/s (calls/s for the floors) | p50 | p99 | errors |"
echo "|---|---|---:|---:|---:|---:|"
http 'HTTP `GET /v1/ping` (the HTTP floor)' /v1/ping 32 1
http 'HTTP `GET /v1/ids/order`' /v1/ids/order 32 1
if command -v h2load >/dev/null; then
    # The gRPC floor: a health check, through the same port, router and HTTP/2.
    h2row 'gRPC `Check` of `grpc.health.v1.Health` (the gRPC floor)' "$base/grpc.health.v1.Health/Check" '\x00\x00\x00\x00\x00' 1
    h2row 'gRPC `Issue`' "$base/snowflake.v1.Snowflake/Issue" "$issue" 1
fi
grpc 'gRPC `Issue`' unary 32 4 1
http 'HTTP `GET /v1/ids/order?count=1000`' "/v1/ids/order?count=1000" 32 1000
grpc 'gRPC `IssueBatch`, 1 000' batch 32 4 1000
if command -v h2load >/dev/null; then
    h2row 'gRPC `IssueBatch`, 1 000' "$base/snowflake.v1.Snowflake/IssueBatch" "$batch" 1000
fi
grpc 'gRPC `IssueStream`, chunks of 1 000 (p50/p99: between chunks)' stream 4 1 1000
grpc 'gRPC `IssueStream`, chunks of 4 096 (p50/p99: between chunks)' stream 1 1 4096

if command -v h2load >/dev/null; then
    # Layer by layer, per call: the gRPC floor, then one ID, then 1 000 IDs without a wait
    # (`wide`), then 1 000 at the cap (`order`); HTTP's batch routes beside them.
    layer() {
        read -r ids mean ok failed < <(h2 "$base/$2" "$3" "$4")
        printf '| %s | %s | %s | %s |\n' "$1" "$(python3 -c "print(round($ids / $4))")" "$ids" "$failed"
    }
    http_layer() {
        read -r rps _ < <(DELAY_MS=0 wrk -t 1 -c 32 -d "${DURATION}s" --latency -s "$LUA" "$base$2" | grep '^RESULT' |
            sed -E 's/.*rps=([0-9]+) .*errors=([0-9]+).*/\1 \2/')
        printf '| %s | %s | %s | |\n' "$1" "$rps" "$((rps * $3))"
    }
    echo
    echo "| layer (h2load: 4 connections × 8 in flight; wrk: 32 connections) | calls/s | IDs/s | errors |"
    echo "|---|---:|---:|---:|"
    layer 'gRPC `Check` (the floor: HTTP/2, tonic, no ID)' grpc.health.v1.Health/Check '\x00\x00\x00\x00\x00' 1
    layer 'gRPC `IssueBatch`, 1 ID of `wide`' snowflake.v1.Snowflake/IssueBatch '\x00\x00\x00\x00\x08\x0a\x04wide\x10\x01' 1
    layer 'gRPC `IssueBatch`, 1 000 IDs of `wide` (no wait)' snowflake.v1.Snowflake/IssueBatch '\x00\x00\x00\x00\x09\x0a\x04wide\x10\xe8\x07' 1000
    layer 'gRPC `IssueBatch`, 1 000 IDs of `order` (at the cap)' snowflake.v1.Snowflake/IssueBatch "$batch" 1000
    http_layer 'HTTP `GET /v1/ids/wide?count=1000` (no wait)' "/v1/ids/wide?count=1000" 1000
    http_layer 'HTTP `GET /v1/ids/order?count=1000` (at the cap)' "/v1/ids/order?count=1000" 1000
fi

if [ -n "${FERROID:-}" ] && command -v h2load >/dev/null; then
    fport=$(free_port)
    "$FERROID" --server-addr "127.0.0.1:$fport" --num-workers 1 --ids-per-chunk 1000 >/dev/null 2>&1 &
    ferroid=$!
    sleep 2
    echo
    echo "| server | call (h2load: 4 connections × 8 in flight) | IDs/s | mean | errors |"
    echo "|---|---|---:|---:|---:|"
    read -r ids mean ok failed < <(h2 "$base/snowflake.v1.Snowflake/IssueBatch" "$batch" 1000)
    echo "| snowflake serve | \`IssueBatch\`, 1 000 | $ids | $mean | $failed |"
    # StreamIdsRequest { count: 1000 }: 08 e8 07; one chunk of 1 000 IDs, then the end.
    read -r ids mean ok failed < <(h2 "http://127.0.0.1:$fport/ferroid.IdGenerator/StreamIds" '\x00\x00\x00\x00\x03\x08\xe8\x07' 1000)
    echo "| ferroid-tonic-server 2.0, 1 worker | \`StreamIds\`, 1 000 | $ids | $mean | $failed |"
fi
rm -f "$body"
