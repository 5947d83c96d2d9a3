//! The `snowflake` command, run as a user runs it: golden outputs for each preset's
//! published example, every subcommand, standard input with bad lines, exit codes, `--json`
//! and `--help`.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn snowflake(args: &[&str], stdin: Option<&str>) -> Output {
    snowflake_env(args, stdin, &[])
}

fn snowflake_env(args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_snowflake"))
        .args(args)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the snowflake binary runs");
    let mut input = child.stdin.take().expect("piped stdin");
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).expect("stdin written");
    }
    drop(input);
    child.wait_with_output().expect("the snowflake binary exits")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("UTF-8 output")
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("UTF-8 output")
}

/// Runs a command that must succeed (exit code 0, nothing on standard error but a hint that
/// the epoch may be wrong, see `a_date_far_from_now_hints_at_the_epoch`) and returns its
/// standard output.
fn ok(args: &[&str]) -> String {
    let output = snowflake(args, None);
    assert_eq!(output.status.code(), Some(0), "{args:?}: {}", stderr(&output));
    assert!(stderr(&output).lines().all(|line| line.starts_with("snowflake: hint: ")), "{args:?}: {}", stderr(&output));
    stdout(&output)
}

/// The hint `inspect` or `explain` writes on standard error, if any.
fn hint(args: &[&str], stdin: Option<&str>) -> Option<String> {
    let output = snowflake(args, stdin);
    assert_eq!(output.status.code(), Some(0), "{args:?}: {}", stderr(&output));
    let err = stderr(&output);
    assert!(err.lines().count() <= 1, "one hint per run: {err}");
    err.strip_prefix("snowflake: hint: ").map(str::to_owned)
}

fn wall_ms() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("after 1970");
    i64::try_from(since.as_millis()).expect("an i64")
}

/// `inspect --json` of `ids` in `layout` (the text form): one object per ID, in order.
fn inspect_json(ids: &[u64], layout: &str) -> Vec<serde_json::Value> {
    let mut args = vec!["inspect".to_owned()];
    args.extend(ids.iter().map(u64::to_string));
    args.extend(["--layout".to_owned(), layout.to_owned(), "--json".to_owned()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(&args).lines().map(|line| serde_json::from_str(line).expect("each line is JSON")).collect()
}

#[test]
fn inspect_decodes_each_presets_published_example() {
    // Discord's developer documentation, "Snowflakes": 175928847299117063 is
    // 2016-04-30 11:18:25.796 UTC, worker 1, process 0, increment 7.
    assert_eq!(
        ok(&["inspect", "175928847299117063", "--preset", "discord"]),
        "175928847299117063: 2016-04-30T11:18:25.796Z (1462015105796 ms), worker 1, process 0, increment 7, \
         redis score 85902757470272\n"
    );
    // The reference vector of the README's tour and of `Layout::TWITTER`'s docs (Twitter's
    // IdWorker formula: 1700000000000 ms, datacenter 7, machine 13, sequence 4095).
    assert_eq!(
        ok(&["inspect", "1724551110457221119", "--preset", "twitter"]),
        "1724551110457221119: 2023-11-14T22:13:20.000Z (1700000000000 ms), datacenter 7, machine 13, \
         sequence 4095, redis score 1684131943805879\n"
    );
    // Instagram's "Sharding & IDs at Instagram" worked example: 1387263000 ms after its
    // epoch, shard 1341, sequence 5001 % 1024 = 905.
    assert_eq!(
        ok(&["inspect", "11637205501278089", "--preset", "instagram"]),
        "11637205501278089: 2011-09-09T22:28:04.721Z (1315607284721 ms), shard 1341, sequence 905, \
         redis score 5682229248670\n"
    );
    // Sonyflake's composition: elapsed << 24 | sequence << 16 | machine (sony/sonyflake).
    let sony = (100_u64 << 24) | (2 << 16) | 3;
    assert_eq!(
        ok(&["inspect", &sony.to_string(), "--preset", "sonyflake"]),
        // 63 bits used: the score is the top 53, the ID shifted right by 10.
        format!(
            "{sony}: 2014-09-01T00:00:01.000Z (1409529601000 ms), machine 3, sequence 2, redis score {}\n",
            sony >> 10
        )
    );
    // Mastodon: Unix ms << 16 | sequence data.
    let toot = (1_700_000_000_123_u64 << 16) | 0xBEEF;
    assert_eq!(
        ok(&["inspect", &toot.to_string(), "--preset", "mastodon"]),
        format!("{toot}: 2023-11-14T22:13:20.123Z (1700000000123 ms), sequence 48879, redis score {}\n", toot >> 11)
    );
    // Leaf's IdWorker formula with its default epoch; Baidu's BitsAllocator.
    let leaf = ((1_600_000_000_000_u64 - 1_288_834_974_657) << 22) | (1023 << 12) | 17;
    assert!(
        ok(&["inspect", &leaf.to_string(), "--preset", "leaf"])
            .contains("2020-09-13T12:26:40.000Z (1600000000000 ms), worker 1023, sequence 17")
    );
    let baidu = (100_000_000_u64 << 35) | (4_194_303 << 13) | 8191;
    assert!(
        ok(&["inspect", &baidu.to_string(), "--preset", "baidu"])
            .contains("2019-07-21T09:46:40.000Z (1563702400000 ms), worker 4194303, sequence 8191")
    );
}

#[test]
fn inspect_reads_stdin_and_reports_bad_lines_by_number() {
    let input = "175928847299117063\nabc\n\n  175928847299117064  \n-5\n99999999999999999999\n";
    let output = snowflake(&["inspect", "--preset", "discord"], Some(input));
    assert_eq!(output.status.code(), Some(1), "some lines were not IDs");
    let out = stdout(&output);
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(out.contains("increment 7") && out.contains("increment 8"));
    let err = stderr(&output);
    assert!(
        err.contains("line 2: \"abc\" is not an ID of the discord layout: an ID is written in decimal digits"),
        "{err}"
    );
    assert!(
        err.contains("line 5: \"-5\" is not an ID of the discord layout: an ID is written without a sign"),
        "{err}"
    );
    assert!(err.contains("line 6: \"99999999999999999999\""), "{err}");
    assert!(!err.contains("line 3"), "blank lines are skipped: {err}");

    // A line that is not UTF-8, CRLF line ends, no final newline.
    let mut child = Command::new(env!("CARGO_BIN_EXE_snowflake"))
        .args(["inspect", "--preset", "twitter"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the snowflake binary runs");
    let mut input = child.stdin.take().expect("piped stdin");
    input.write_all(b"1\r\n\xff\xfe\r\n2").expect("stdin written");
    drop(input);
    let mixed = child.wait_with_output().expect("the snowflake binary exits");
    assert_eq!(mixed.status.code(), Some(1));
    assert_eq!(stdout(&mixed).lines().count(), 2);
    assert!(stderr(&mixed).contains("line 2: "), "{}", stderr(&mixed));

    let clean = snowflake(&["inspect", "--preset", "twitter"], Some("1724551110457221119\n"));
    assert_eq!(clean.status.code(), Some(0));
    let empty = snowflake(&["inspect", "--preset", "twitter"], Some(""));
    assert_eq!((empty.status.code(), stdout(&empty).as_str()), (Some(0), ""));
}

#[test]
fn inspect_refuses_values_outside_the_layout_with_exit_code_1() {
    // 2^63 has the sign bit set: no Twitter ID; a 64-bit Discord ID.
    let output = snowflake(&["inspect", "9223372036854775808", "1", "--preset", "twitter"], None);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("argument 1: \"9223372036854775808\" is not an ID of the twitter layout"));
    assert_eq!(stdout(&output).lines().count(), 1);
    assert!(
        ok(&["inspect", "18446744073709551615", "--preset", "discord"])
            .starts_with("18446744073709551615: 2154-05-15T07:35:11.103Z")
    );
    // A narrow layout given as text: bits above it are refused.
    let narrow = snowflake(&["inspect", "1099511627776", "--layout", "time=30,worker=4,seq=6,epoch=2024-01-01"], None);
    assert_eq!(narrow.status.code(), Some(1));
    assert!(stderr(&narrow).contains("sets bits above the layout's 40 bits"));
}

#[test]
fn inspect_json_is_one_object_per_line() {
    let out = ok(&["inspect", "175928847299117063", "175928847299117064", "--preset", "discord", "--json"]);
    let lines: Vec<serde_json::Value> =
        out.lines().map(|line| serde_json::from_str(line).expect("each line is JSON")).collect();
    assert_eq!(lines.len(), 2);
    let first = &lines[0];
    assert_eq!(first["id"], "175928847299117063");
    assert_eq!(first["time"], "2016-04-30T11:18:25.796Z");
    assert_eq!(first["unix_ms"], 1_462_015_105_796_i64);
    assert_eq!(first["fields"]["worker"], 1);
    assert_eq!(first["fields"]["process"], 0);
    assert_eq!(first["fields"]["increment"], 7);
    assert_eq!(first["redis_score"], 85_902_757_470_272_u64);
    assert_eq!(lines[1]["sequence"], 8);
}

#[test]
fn explain_draws_the_bits_of_every_field() {
    let out = ok(&["explain", "175928847299117063", "--preset", "discord"]);
    assert_eq!(
        out,
        "175928847299117063 (discord: time=42,datacenter=5,machine=5,seq=12,epoch=2015-01-01)\n\
         000000100111000100000110010110101100000100 00001 00000 000000000111\n\
         time       bits 63..22   42 bits = 41944705796 ms since 2015-01-01T00:00:00.000Z = 2016-04-30T11:18:25.796Z\n\
         worker     bits 21..17    5 bits = 1\n\
         process    bits 16..12    5 bits = 0\n\
         increment  bits 11..0    12 bits = 7\n"
    );
    assert!(!out.contains('\x1b'), "no colour when stdout is not a terminal");
    // Forced colour: each field's bits and its line in the field's colour.
    let coloured = stdout(&snowflake_env(
        &["explain", "175928847299117063", "--preset", "discord"],
        None,
        &[("CLICOLOR_FORCE", "1")],
    ));
    assert!(
        coloured.contains("\x1b[36m000000100111000100000110010110101100000100\x1b[0m \x1b[33m00001\x1b[0m"),
        "{coloured:?}"
    );
    assert!(coloured.contains("\x1b[32mincrement  bits 11..0    12 bits = 7\x1b[0m"), "{coloured:?}");
    let plain = stdout(&snowflake_env(&["explain", "1", "--preset", "discord"], None, &[("CLICOLOR_FORCE", "0")]));
    assert!(!plain.contains('\x1b'));
    // Sonyflake: the sequence is drawn above the machine ID; the sign bit is unused.
    let sony = ok(&["explain", &((100_u64 << 24) | (2 << 16) | 3).to_string(), "--preset", "sonyflake"]);
    let lines: Vec<&str> = sony.lines().collect();
    assert_eq!(lines[1], "0 000000000000000000000000000000001100100 00000010 0000000000000011");
    assert!(lines[2].starts_with("unused "));
    assert!(lines[3].starts_with("time ") && lines[3].contains("= 100 × 10 ms since 2014-09-01"));
    assert!(lines[4].starts_with("sequence ") && lines[4].ends_with("= 2"));
    assert!(lines[5].starts_with("machine ") && lines[5].ends_with("= 3"));
    let bad = snowflake(&["explain", "12x", "--preset", "discord"], None);
    assert_eq!(bad.status.code(), Some(1));
    assert!(stderr(&bad).contains("found 'x' at byte 2"));
}

/// `--layout` reads the derive's own spelling (spaces, quoted values, the attribute pasted
/// whole) as well as the text form, and `explain` prints the canonical form back.
#[test]
fn layouts_are_read_in_the_derive_s_spelling_too() {
    let canonical = "time=42,worker=5,seq=16,epoch=2021-05-05";
    let id = ok(&["generate", "-n", "1", "--layout", canonical, "--worker", "7"]);
    let id = id.trim();
    let want = ok(&["inspect", id, "--layout", canonical]);
    for spelling in [
        r#"time = 42, worker = 5, seq = 16, epoch = "2021-05-05""#,
        r#"#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]"#,
    ] {
        assert_eq!(ok(&["inspect", id, "--layout", spelling]), want, "{spelling}");
    }
    let unbalanced = snowflake(&["inspect", id, "--layout", r#"time=42,worker=5,seq=16,epoch="2021-05-05"#], None);
    assert_eq!(unbalanced.status.code(), Some(1), "a layout that cannot be read, as an unknown preset");
    assert!(stderr(&unbalanced).contains("unbalanced quote"), "{}", stderr(&unbalanced));
}

#[test]
fn generate_issues_increasing_ids_of_the_layout_and_worker() {
    let layout = "time=42,worker=5,seq=16,epoch=2021-05-05";
    let before = wall_ms();
    let out = ok(&["generate", "-n", "50", "--layout", layout, "--worker", "7"]);
    let after = wall_ms();
    let ids: Vec<u64> = out.lines().map(|line| line.parse().expect("decimal IDs")).collect();
    assert_eq!(ids.len(), 50);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert!(ids.iter().all(|id| (id >> 16) & 0x1F == 7));
    // Decoded by `inspect`: issued now, by worker 7, each sequence after the previous one
    // in its millisecond.
    let decoded = inspect_json(&ids, layout);
    assert_eq!(decoded.len(), 50);
    let mut previous: Option<(i64, u64)> = None;
    for (id, value) in ids.iter().zip(&decoded) {
        assert_eq!(value["id"], id.to_string());
        let ms = value["unix_ms"].as_i64().expect("an integer");
        assert!((before..=after).contains(&ms), "{id} at {ms}, generated between {before} and {after}");
        assert_eq!(value["fields"]["worker"], 7, "{value}");
        let sequence = value["sequence"].as_u64().expect("an integer");
        if let Some((last_ms, last_sequence)) = previous.filter(|&(last_ms, _)| last_ms == ms) {
            assert_eq!((ms, sequence), (last_ms, last_sequence + 1), "{value}");
        }
        previous = Some((ms, sequence));
    }
    // Sonyflake's machine ID sits in the low 16 bits.
    let sony = ok(&["generate", "-n", "3", "--preset", "sonyflake", "--worker", "65535", "--json"]);
    assert_eq!(sony.lines().count(), 3, "{sony}");
    for line in sony.lines() {
        let value: serde_json::Value = serde_json::from_str(line).expect("JSON");
        let id: u64 = value["id"].as_str().expect("a string").parse().expect("decimal");
        assert_eq!(id & 0xFFFF, 65535);
        let back = ok(&["inspect", &id.to_string(), "--preset", "sonyflake"]);
        assert!(back.contains(", machine 65535, sequence "), "{back}");
    }
    // A worker too wide for the layout, and a preset whose time field ran out: errors.
    let wide = snowflake(&["generate", "--preset", "leaf", "--worker", "1024"], None);
    assert_eq!(wide.status.code(), Some(1));
    assert!(stderr(&wide).contains("1024"), "{}", stderr(&wide));
    let baidu = snowflake(&["generate", "--preset", "baidu"], None);
    assert_eq!(baidu.status.code(), Some(1));
    assert!(stderr(&baidu).contains("ran out"), "{}", stderr(&baidu));
    // With an epoch of its own, Baidu's layout issues again: one ID, worker 0, in the
    // present second (its time field counts seconds).
    let rebased = "preset=baidu,epoch=2025-01-01";
    let before = wall_ms();
    let out = ok(&["generate", "--layout", rebased]);
    let after = wall_ms();
    let id: u64 = out.strip_suffix('\n').expect("one line").parse().expect("a decimal ID");
    let decoded = inspect_json(&[id], rebased);
    let ms = decoded[0]["unix_ms"].as_i64().expect("an integer");
    assert!((before - before % 1_000..=after).contains(&ms), "{id} at {ms}, generated between {before} and {after}");
    assert_eq!((decoded[0]["worker"].as_u64(), decoded[0]["sequence"].as_u64()), (Some(0), Some(0)), "{}", decoded[0]);
}

#[test]
fn convert_keeps_instant_node_and_sequence() {
    // Twitter and Leaf share their widths and epoch: the same bits.
    assert_eq!(ok(&["convert", "1724551110457221119", "--from", "twitter", "--to", "leaf"]), "1724551110457221119\n");
    // Discord's example as an Instagram ID: same instant, node 1 << 5 | 0, sequence 7.
    let out = ok(&["convert", "175928847299117063", "--from", "discord", "--to", "instagram", "--json"]);
    let value: serde_json::Value = serde_json::from_str(out.trim()).expect("JSON");
    let converted: u64 = value["converted"].as_str().expect("a string").parse().expect("decimal");
    let back = ok(&["inspect", &converted.to_string(), "--preset", "instagram"]);
    assert!(back.contains("2016-04-30T11:18:25.796Z") && back.contains("shard 32, sequence 7"), "{back}");
    // A sequence of 4095 does not fit Sonyflake's 8 bits.
    let output = snowflake(&["convert", "1724551110457221119", "--from", "twitter", "--to", "sonyflake"], None);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("sequence 4095 is out of range; the layout holds 0..=255"));
    // Before the target's epoch.
    let early = snowflake(&["convert", "1", "--from", "twitter", "--to", "discord"], None);
    assert_eq!(early.status.code(), Some(1));
    assert!(stderr(&early).contains("before the epoch"));
    let unknown = snowflake(&["convert", "1", "--from", "twiter", "--to", "discord"], None);
    assert_eq!((unknown.status.code(), stdout(&unknown).as_str()), (Some(1), ""));
    assert!(stderr(&unknown).contains("unknown preset \"twiter\"; the presets are: twitter, discord"));
}

#[test]
fn layouts_lists_every_preset_with_the_date_it_runs_out() {
    let out = ok(&["layouts"]);
    assert_eq!(out.lines().count(), 8);
    assert!(out.contains("baidu      28/22/13     1s    2016-05-20T00:00:00.000Z 2024-11-20T21:24:15.999Z"), "{out}");
    assert!(out.contains("sonyflake  39/8/16      10ms"), "{out}");
    let json = ok(&["layouts", "--json"]);
    let names: Vec<String> = json
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).expect("JSON")["preset"].as_str().expect("name").to_owned()
        })
        .collect();
    assert_eq!(names, ["twitter", "discord", "instagram", "sonyflake", "mastodon", "leaf", "baidu"]);
    // The layout's description, as the service's /v1/types writes it, and the preset's own keys.
    let baidu: serde_json::Value = serde_json::from_str(json.lines().last().expect("baidu")).expect("JSON");
    for (key, value) in [
        ("time_bits", serde_json::json!(28)),
        ("worker_bits", serde_json::json!(22)),
        ("seq_bits", serde_json::json!(13)),
        ("tick", serde_json::json!("1s")),
        ("epoch", serde_json::json!("2016-05-20T00:00:00.000Z")),
        ("runs_out", serde_json::json!("2024-11-20T21:24:15.999Z")),
        ("epoch_configurable", serde_json::json!(true)),
    ] {
        assert_eq!(baidu[key], value, "{key}: {baidu}");
    }
    assert!(baidu["source"].as_str().is_some_and(|s| s.starts_with("http")), "{baidu}");
}

#[test]
fn usage_errors_exit_with_2_and_every_subcommand_has_an_example() {
    for args in
        [&["inspect", "1"][..], &["inspect", "1", "--preset", "discord", "--layout", "time=1"], &["frobnicate"], &[]]
    {
        let output = snowflake(args, None);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
    }
    let bad_layout = snowflake(&["inspect", "1", "--layout", "time=42,worker=6,seq=17,epoch=0"], None);
    assert_eq!(bad_layout.status.code(), Some(1));
    assert!(stderr(&bad_layout).contains("the widths sum to 65"));
    for sub in ["inspect", "explain", "generate", "convert", "layouts"] {
        let help = ok(&[sub, "--help"]);
        assert!(help.contains("Example") && help.contains(&format!("snowflake {sub} ")), "{sub}: {help}");
    }
}

/// A layout given as text is its own name: `explain` prints it once, not as `name: layout`.
#[test]
fn explain_prints_a_text_layout_once() {
    let layout = "time=42,worker=5,seq=16,epoch=2021-05-05";
    let out = ok(&["explain", "1", "--layout", layout]);
    assert_eq!(out.lines().next(), Some(format!("1 ({layout})").as_str()), "{out}");
    // A preset keeps its name beside its layout.
    let leaf = ok(&["explain", "1", "--layout", "preset=leaf,epoch=2020-01-01"]);
    assert_eq!(leaf.lines().next(), Some("1 (leaf: time=41,worker=10,seq=12,epoch=2020-01-01)"), "{leaf}");
}

/// `--help` names the one install command the docs give, and a build without a subcommand's
/// feature says which crate and flag give it.
#[test]
fn help_and_missing_features_name_the_install_command() {
    let help = ok(&["--help"]);
    assert!(help.contains("Install: cargo install --locked snowflake-cli --features full\n"), "{help}");
    assert!(help.contains("cargo install --locked snowflake-cli --features full,zookeeper-tls adds"), "{help}");
    let leases = snowflake(&["leases", "zks://127.0.0.1:1/"], None);
    if cfg!(feature = "zookeeper-tls") {
        return;
    }
    assert_eq!(leases.status.code(), Some(1));
    let want = if cfg!(feature = "leases") {
        "install it with `cargo install --locked snowflake-cli --features full,zookeeper-tls`"
    } else {
        "install it with `cargo install --locked snowflake-cli --features full`"
    };
    assert!(stderr(&leases).contains(want), "{}", stderr(&leases));
}

/// Prefixed IDs (`ord_…`): the prefix picks the type among `--id`s (or a `--config` file's
/// `ids`), or any prefix is read under a layout given outright.
#[test]
fn inspect_and_explain_decode_prefixed_ids() {
    let types =
        ["--id", "order=prefix=ord,preset=twitter", "--id", "user=prefix=usr,time=42,worker=5,seq=16,epoch=2021-05-05"];
    let mut args = vec!["inspect", "ord_1fvpp347wxqzz"];
    args.extend(types);
    assert_eq!(
        ok(&args),
        "ord_1fvpp347wxqzz (order 1724551110457221119): 2023-11-14T22:13:20.000Z (1700000000000 ms), datacenter 7, \
         machine 13, sequence 4095, redis score 1684131943805879\n"
    );
    // Another prefix, another type: the same bits decode under the user layout.
    let mut args = vec!["inspect", "usr_1fvpp347wxqzz", "--json"];
    args.extend(types);
    let line: serde_json::Value = serde_json::from_str(&ok(&args)).expect("JSON");
    assert_eq!(line["type"], "user");
    assert_eq!(line["prefixed"], "usr_1fvpp347wxqzz");
    assert_eq!(line["id"], "1724551110457221119");
    assert_eq!(line["layout"], "time=42,worker=5,seq=16,epoch=2021-05-05");
    // A layout given outright reads any prefix.
    let out = ok(&["inspect", "cus_1fvpp347wxqzz", "--preset", "twitter"]);
    assert!(out.starts_with("cus_1fvpp347wxqzz (twitter 1724551110457221119): 2023-11-14T22:13:20.000Z"), "{out}");
    // explain draws it, naming both spellings.
    let mut args = vec!["explain", "ord_1fvpp347wxqzz"];
    args.extend(types);
    let out = ok(&args);
    assert!(out.starts_with("ord_1fvpp347wxqzz = 1724551110457221119 (order: time=41,datacenter=5"), "{out}");
    // With one type, a decimal ID is read and shown prefixed too.
    let out = ok(&["inspect", "1724551110457221119", "--id", "order=prefix=ord,preset=twitter"]);
    assert!(out.starts_with("ord_1fvpp347wxqzz (order 1724551110457221119)"), "{out}");

    // The same types from serve's configuration file.
    let dir = std::env::temp_dir().join(format!("snowflake-cli-prefixed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let file = dir.join("serve.json");
    std::fs::write(&file, r#"{"ids": {"order": "prefix=ord,preset=twitter"}, "worker": 1}"#).expect("written");
    let out = ok(&["inspect", "ord_1fvpp347wxqzz", "--config", file.to_str().expect("UTF-8")]);
    assert!(out.starts_with("ord_1fvpp347wxqzz (order 1724551110457221119)"), "{out}");
    std::fs::remove_dir_all(&dir).expect("removed");

    // Each bad input is reported with its reason; the others are still decoded.
    let mut args = vec!["inspect", "cus_1fvpp347wxqzz", "ord_1fvpp347wxqzZ", "123", "ord_", "ord_1fvpp347wxqzz"];
    args.extend(types);
    let output = snowflake(&args, None);
    assert_eq!(output.status.code(), Some(1));
    let errors = stderr(&output);
    for says in [
        "argument 1: \"cus_1fvpp347wxqzz\": no ID type has the prefix \"cus\"; the prefixes are: ord_ (order), usr_ (user)",
        "argument 2: \"ord_1fvpp347wxqzZ\" is not an order ID: 'Z' at byte 16 is not a base32 character: IDs are written in lowercase",
        "argument 3: \"123\" is a bare number and there are 2 ID types",
        "argument 4: \"ord_\" is not an order ID: An ord_ ID has 13 characters after `ord_`; found 0",
    ] {
        assert!(errors.contains(says), "{says}\n{errors}");
    }
    assert_eq!(stdout(&output).lines().count(), 1);
    let bad_type = snowflake(&["inspect", "ord_1fvpp347wxqzz", "--id", "order=prefix=Ord,preset=twitter"], None);
    assert_eq!(bad_type.status.code(), Some(1));
    assert!(
        stderr(&bad_type).contains("ID type \"order\": prefix=\"Ord\": a prefix is lowercase"),
        "{}",
        stderr(&bad_type)
    );
    let twice = snowflake(&["inspect", "x", "--id", "a=prefix=ord,twitter", "--id", "b=prefix=ord,discord"], None);
    assert!(stderr(&twice).contains("share a name or a prefix"), "{}", stderr(&twice));
}

/// An ID decoded with another epoch than the one it was made with reads as a date years off:
/// a date far from now (a day ahead, or a year back under an epoch the user chooses) comes
/// with a hint on standard error; a date near now, and an old ID of a scheme whose epoch is
/// fixed, do not.
#[test]
fn a_date_far_from_now_hints_at_the_epoch() {
    // Made now by a Leaf-layout service with its own epoch, 2020-01-01.
    let made = ((wall_ms() - 1_577_836_800_000) << 22) | 5;
    let made = made.to_string();
    assert_eq!(hint(&["inspect", &made, "--layout", "preset=leaf,epoch=2020-01-01"], None), None);
    // Read with Leaf's default epoch (2010-11-04): about nine years back.
    let back = hint(&["inspect", &made, "--preset", "leaf"], None).expect("a hint");
    assert!(back.starts_with(&format!("{made} reads as ")), "{back}");
    assert!(
        back.contains("years before now: if it was made with another epoch than 2010-11-04, give that one"),
        "{back}"
    );
    assert!(back.contains("--layout preset=leaf,epoch=2020-01-01"), "{back}");
    // The other way round: years ahead.
    let old = ((wall_ms() - 1_288_834_974_657) << 22).to_string();
    let ahead = hint(&["explain", &old, "--layout", "preset=leaf,epoch=2020-01-01"], None).expect("a hint");
    assert!(ahead.contains("years after now") && ahead.contains("another epoch than 2020-01-01"), "{ahead}");
    // Once per run, at the first such ID; the output itself is unchanged.
    let two = format!("{made}\n{made}\n");
    assert!(hint(&["inspect", "--preset", "leaf", "--json"], Some(&two)).is_some());
    // Discord's epoch is fixed: its old IDs are old, no hint; one from 2154 is not Discord's.
    assert_eq!(hint(&["inspect", "175928847299117063", "--preset", "discord"], None), None);
    assert!(
        hint(&["inspect", "18446744073709551615", "--preset", "discord"], None)
            .is_some_and(|h| h.contains("after now"))
    );
}
