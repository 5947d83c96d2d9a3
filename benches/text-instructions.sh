#!/usr/bin/env bash
# Instructions per ID of every case of the `text` bench, counted by callgrind: steadier than
# wall-clock time on a shared machine. Builds the bench, runs it once under
# `valgrind --tool=callgrind` with `--instructions` (each case the same number of passes over
# the same 1 024 IDs, no criterion), and prints each case's inclusive count per ID and the
# ratios of the bench's table.
#
#   benches/text-instructions.sh            # TEXT_PASSES=20 passes of 1 024 IDs per case
#   TEXT_BENCH=/path/to/text-… benches/text-instructions.sh   # a bench binary built elsewhere
set -euo pipefail
cd "$(dirname "$0")/.."
passes="${TEXT_PASSES:-20}"
binary=${TEXT_BENCH:-}
[ -n "$binary" ] || binary=$(cargo bench -q -p typed-snowflake-benches --bench text --no-run --message-format json 2>/dev/null \
    | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "text" and m.get("executable"):
        print(m["executable"])')
out="$(mktemp)"
TEXT_PASSES="$passes" valgrind --tool=callgrind --callgrind-out-file="$out" "$binary" --instructions >/dev/null 2>&1
# Each case runs `passes` times, and once more in the bench's own check of its results.
callgrind_annotate --inclusive=yes --threshold=100 --auto=no "$out" | python3 -c '
import re, sys
per_pass = (int(sys.argv[1]) + 1) * 1024
counts = {}
for line in sys.stdin:
    m = re.match(r"\s*([\d,]+)\s+\(.*?\)\s+\S*?text::case_(\w+)", line)
    if m:
        # A function inlining code of other files has a line per file: the sum is its total.
        counts[m.group(2)] = counts.get(m.group(2), 0) + int(m.group(1).replace(",", "")) / per_pass
rows = [
    ("prefixed encode on stack vs ferroid", "encode_prefixed", "encode_ferroid"),
    ("13-char suffix alone vs ferroid", "encode_prefixed_suffix", "encode_ferroid"),
    ("decimal encode on stack vs itoa", "encode_decimal", "encode_itoa"),
    ("prefixed Display vs ferroid", "display_prefixed", "display_ferroid"),
    ("decimal Display vs std u64", "display_decimal", "display_std_u64"),
    ("prefixed to_string vs ferroid", "to_string_prefixed", "to_string_ferroid"),
    ("decimal to_string vs std u64", "to_string_decimal", "to_string_std_u64"),
    ("prefixed FromStr vs ferroid decode", "parse_prefixed", "parse_ferroid"),
    ("prefixed FromStr vs std parse::<u64>", "parse_prefixed", "parse_std_u64"),
    ("prefixed parse_bytes vs ferroid decode", "parse_prefixed_bytes", "parse_ferroid"),
    ("decimal FromStr vs ferroid decode", "parse_decimal", "parse_ferroid"),
    ("decimal FromStr vs std parse::<u64>", "parse_decimal", "parse_std_u64"),
    ("decimal parse_id_bytes vs std parse::<u64>", "parse_decimal_bytes", "parse_std_u64"),
    ("JSON write, prefixed vs ferroid str", "json_write_prefixed", "json_write_ferroid"),
    ("JSON write, prefixed vs bare u64", "json_write_prefixed", "json_write_u64"),
    ("JSON write, decimal vs bare u64", "json_write_decimal", "json_write_u64"),
    ("JSON write, a ready &str vs bare u64", "json_write_str", "json_write_u64"),
    ("JSON read, prefixed vs bare u64", "json_read_prefixed", "json_read_u64"),
    ("JSON read, decimal vs bare u64", "json_read_decimal", "json_read_u64"),
]
print("%-44s %8s %8s %7s" % ("instructions per ID", "ours", "peer", "ratio"))
for label, ours, peer in rows:
    if ours in counts and peer in counts:
        print(f"{label:<44} {counts[ours]:>8.1f} {counts[peer]:>8.1f} {counts[ours] / counts[peer]:>6.2f}x")
print()
for name, count in sorted(counts.items()):
    print(f"case_{name:<40} {count:>8.1f}")
' "$passes"
rm -f "$out"
