#!/bin/sh
# The derive's build cost: a crate deriving 100 ID types (four layouts: written out, a preset,
# a split node field with an RFC 3339 epoch, a preset with its own epoch), checked with a cold
# target, so the derive's dependencies (syn, quote, proc-macro2, snowflake-layout) and the
# runtime's default ones are compiled too; then the crate alone again (the 100 expansions).
#
#   benches/derive100.sh [WORKSPACE]    (default: this repository)
#
# Prints /usr/bin/time's wall and CPU seconds for each. To compare two revisions, run it on
# a checkout of each (`git worktree add` or `git archive REV | tar -x -C DIR`), alternately.
set -eu
ws=$(cd "${1:-$(dirname "$0")/..}" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mkdir -p "$out/src"
cat > "$out/Cargo.toml" <<T
[package]
name = "derive100"
version = "0.0.0"
edition = "2024"
publish = false
[dependencies]
typed-snowflake = { path = "$ws" }
[workspace]
T
cp "$ws/Cargo.lock" "$out/Cargo.lock"
{
    echo "#![allow(dead_code)]"
    echo "use typed_snowflake::SnowflakeId;"
    i=0
    while [ $i -lt 100 ]; do
        derive="#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]"
        case $((i % 4)) in
            0) layout='time = 42, worker = 5, seq = 16, epoch = "2021-05-05"' ;;
            1) layout='preset = "twitter"' ;;
            2) layout='time = 41, datacenter = 5, machine = 5, seq = 12, epoch = "2010-11-04T01:42:54.657Z"' ;;
            *) layout='preset = "sonyflake", epoch = "2024-01-01"' ;;
        esac
        echo "$derive #[layout($layout)] pub struct Id$i(i64);"
        i=$((i + 1))
    done
    echo "fn main() {}"
} > "$out/src/main.rs"
cd "$out"
cargo fetch -q
CARGO_TARGET_DIR="$out/target" /usr/bin/time -f "cold target: %e s wall, %U s user, %S s system" cargo check -q
touch src/main.rs
CARGO_TARGET_DIR="$out/target" /usr/bin/time -f "the 100 derives alone: %e s wall, %U s user, %S s system" cargo check -q
