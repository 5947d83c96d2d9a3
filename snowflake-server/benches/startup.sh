#!/usr/bin/env bash
# Start-up times of `snowflake serve` with the default lease settings (TTL 10 s, reservation
# 60 s), against a store given by URL: a namespace declared new, a restart at once after
# `kill -9`, the first start in a namespace never declared (W + ε by design), a second replica
# two minutes later, and that replica restarted after `kill -9`. Each line is the time from the
# process start to `/readyz` answering 200. Needs a `snowflake` built with the store's feature:
#
#   cargo build -p snowflake-cli --features full
#   snowflake-server/benches/startup.sh redis://127.0.0.1:6379 redis 18100
#   snowflake-server/benches/startup.sh state-file 18500     # the state file, etcd stopped
#
# `state-file` starts a private etcd (Debian's etcd-server), a replica with a lease state file
# and one without, kills the first with `kill -9`, stops etcd with SIGSTOP, starts the first
# again and times it, has both issue while etcd is stopped and after it is back, and counts
# the duplicates among every ID they issued.
set -u
BIN="${SNOWFLAKE_BIN:-target/debug/snowflake}"
if [ "${1:-}" = state-file ]; then
    B="${2:-18500}"
    D=${TMPDIR:-/tmp}/snowflake-startup-$$; rm -rf $D; mkdir -p $D
    etcd --data-dir $D/etcd --listen-client-urls http://127.0.0.1:23791 --advertise-client-urls http://127.0.0.1:23791 --listen-peer-urls http://127.0.0.1:23801 --initial-advertise-peer-urls http://127.0.0.1:23801 --initial-cluster default=http://127.0.0.1:23801 > $D/etcd.log 2>&1 &
    EP=$!; sleep 3
    STORE=etcd://127.0.0.1:23791; NS=startup-file-$$
    $BIN leases init $STORE --namespace $NS >/dev/null
    serve() { SNOWFLAKE_DRAIN=0 $BIN serve --id order=preset=twitter --lease $STORE --namespace $NS --listen 127.0.0.1:$((B+1)) --lease-state-file $D/lease >>$D/serve.log 2>&1 & echo $!; }
    p=$(serve); until curl -sf -o /dev/null http://127.0.0.1:$((B+1))/readyz; do sleep 0.05; done
    # a second replica on the same store, without a file, issuing throughout
    SNOWFLAKE_DRAIN=0 $BIN serve --id order=preset=twitter --lease $STORE --namespace $NS --listen 127.0.0.1:$((B+2)) >>$D/serve2.log 2>&1 & p2=$!
    until curl -sf -o /dev/null http://127.0.0.1:$((B+2))/readyz; do sleep 0.05; done
    for i in $(seq 1 200); do curl -s "http://127.0.0.1:$((B+1))/v1/ids/order?count=1000" >> $D/ids1; echo >> $D/ids1; done
    kill -9 $p; kill -STOP $EP   # the process dies and the store stops answering
    t0=$(date +%s%3N); p=$(serve)
    for _ in $(seq 1 600); do curl -sf -o /dev/null http://127.0.0.1:$((B+1))/readyz && break; sleep 0.05; done
    echo "restart with the state file while etcd is stopped: ready after $(( $(date +%s%3N) - t0 )) ms"
    for i in $(seq 1 200); do curl -s "http://127.0.0.1:$((B+1))/v1/ids/order?count=1000" >> $D/ids1; echo >> $D/ids1; curl -s "http://127.0.0.1:$((B+2))/v1/ids/order?count=1000" >> $D/ids2; echo >> $D/ids2; done
    kill -CONT $EP; sleep 3
    for i in $(seq 1 100); do curl -s "http://127.0.0.1:$((B+1))/v1/ids/order?count=1000" >> $D/ids1; echo >> $D/ids1; curl -s "http://127.0.0.1:$((B+2))/v1/ids/order?count=1000" >> $D/ids2; echo >> $D/ids2; done
    cat $D/ids1 $D/ids2 | grep -o '"[0-9]\{10,\}"' | sort > $D/all
    echo "IDs: $(wc -l < $D/all), duplicates: $(uniq -d $D/all | wc -l)"
    curl -s http://127.0.0.1:$((B+1))/readyz; echo
    kill $p $p2 $EP 2>/dev/null
    exit 0
fi
STORE="$1"; TAG="$2"; B="$3"
ready_ms() { # port -> ms until /readyz 200 (max 120 s)
  local port=$1 t0=$2
  for _ in $(seq 1 2400); do
    if curl -sf -o /dev/null "http://127.0.0.1:$port/readyz"; then echo $(( $(date +%s%3N) - t0 )); return; fi
    sleep 0.05
  done; echo timeout
}
serve() { # port ns extra...
  local port=$1 ns=$2; shift 2
  SNOWFLAKE_DRAIN=0 $BIN serve --id order=preset=twitter --lease "$STORE" --namespace "$ns" --listen 127.0.0.1:$port "$@" >${TMPDIR:-/tmp}/snowflake-startup-$TAG-$port.log 2>&1 &
  echo $!
}
NS_NEW="startup-$TAG-decl-$$"; NS_OLD="startup-$TAG-undecl-$$"
# 1. declared new
$BIN leases init "$STORE" --namespace "$NS_NEW" >/dev/null
t0=$(date +%s%3N); p=$(serve $((B+1)) "$NS_NEW"); echo "$TAG declared-new first start: $(ready_ms $((B+1)) $t0) ms"
# 2. kill -9 and restart at once (declared namespace: a never-granted worker ID)
kill -9 $p; sleep 0.2
t0=$(date +%s%3N); p=$(serve $((B+1)) "$NS_NEW"); echo "$TAG restart after kill -9: $(ready_ms $((B+1)) $t0) ms"
kill -9 $p
# 3. undeclared namespace: the first replica waits W + eps; a second replica 2 minutes later
t0=$(date +%s%3N); p1=$(serve $((B+2)) "$NS_OLD"); echo "$TAG undeclared first start: $(ready_ms $((B+2)) $t0) ms"
sleep $((120 - ( $(date +%s%3N) - t0 ) / 1000 ))
t0=$(date +%s%3N); p2=$(serve $((B+3)) "$NS_OLD"); echo "$TAG second replica 2 min after the first: $(ready_ms $((B+3)) $t0) ms"
kill -9 $p2; sleep 0.2
t0=$(date +%s%3N); p2=$(serve $((B+3)) "$NS_OLD"); echo "$TAG second replica restarted after kill -9: $(ready_ms $((B+3)) $t0) ms"
kill $p1 $p2 2>/dev/null; wait 2>/dev/null
