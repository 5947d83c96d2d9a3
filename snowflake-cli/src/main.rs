//! `snowflake`: decode, draw, generate and convert Snowflake IDs of any public scheme or of a
//! layout given as text, list the presets, serve IDs over HTTP (feature `serve`) and read the
//! worker-ID lease stores (feature `leases`), from the command line.
#![forbid(unsafe_code)]

use std::io::{self, BufRead, BufWriter, IsTerminal, Write};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use serde_json::{Map, Value, json};
use snowflake_types::layout::{LayoutSummary, format_rfc3339};
use snowflake_types::score::score_of;
use snowflake_types::{Generator, Labels, Layout, Parts, Preset, TickUnit};

const AFTER_HELP: &str = "\
Layouts: --preset twitter|discord|instagram|sonyflake|mastodon|leaf|baidu, or --layout with the
text form, e.g. --layout time=42,worker=5,seq=16,epoch=2021-05-05 (keys: time, worker,
datacenter, machine, seq, epoch, unit=1ms|10ms|1s, order=time-worker-seq|time-seq-worker,
preset). `snowflake layouts` lists the presets. inspect and explain also take ID types
(--id order=prefix=ord,preset=twitter, or --config with serve's file): a prefixed ID
(ord_1fvpp347wxqzz) is decoded as the type of its prefix.

Colour: on a terminal, unless NO_COLOR is set; CLICOLOR_FORCE=1 forces it.

Exit status: 0 when every input was handled, 1 when some input was not an ID (each one is
reported on stderr), 2 for a usage error.

Install: cargo install --locked snowflake-cli --features full
  (serve and leases, with every lease store: Redis, PostgreSQL, MySQL/MariaDB, etcd, ZooKeeper);
  cargo install --locked snowflake-cli --features full,zookeeper-tls adds ZooKeeper over TLS
  (zks://), which builds aws-lc-rs, a C library.";

/// The command that installs every subcommand with every lease store, as `--help` and the
/// docs give it.
#[cfg_attr(feature = "leases", allow(dead_code))]
const INSTALL: &str = "cargo install --locked snowflake-cli --features full";
/// The same with ZooKeeper over TLS.
#[cfg_attr(not(feature = "leases"), allow(dead_code))]
const INSTALL_ZOOKEEPER_TLS: &str = "cargo install --locked snowflake-cli --features full,zookeeper-tls";

/// Decode, draw, generate and convert Snowflake IDs; list the presets; serve IDs over HTTP
/// (`serve`); list a lease store's worker IDs (`leases`).
#[derive(Parser)]
#[command(name = "snowflake", version, after_help = AFTER_HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Decode IDs: instant (RFC 3339 UTC and Unix ms), node fields, sequence, Redis score.
    ///
    /// With no IDs, reads standard input, one ID per line (blank lines are skipped). A line
    /// that is not an ID is reported on stderr with its line number; the rest are still
    /// decoded, and the exit status is 1.
    #[command(after_help = "\
Examples:
  snowflake inspect 175928847299117063 --preset discord
  grep -oE '[0-9]{17,20}' app.log | snowflake inspect --preset discord --json
  snowflake inspect ord_1fvpp347wxqzz usr_1fvpp347wxqzz --id order=prefix=ord,preset=twitter \\
      --id user=prefix=usr,preset=twitter")]
    Inspect {
        /// IDs in decimal or prefixed (ord_…); none: read standard input.
        ids: Vec<String>,
        #[command(flatten)]
        layout: DecodeArgs,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Draw an ID's 64 bits as a bar, each field labelled with its width and value.
    #[command(after_help = "\
Examples:
  snowflake explain 1724551110457221119 --preset twitter
  snowflake explain ord_1fvpp347wxqzz --id order=prefix=ord,preset=twitter")]
    Explain {
        /// The ID, in decimal or prefixed (ord_…).
        id: String,
        #[command(flatten)]
        layout: DecodeArgs,
    },
    /// Generate IDs now, as the given worker.
    #[command(after_help = "\
Example:
  snowflake generate -n 3 --layout time=42,worker=5,seq=16,epoch=2021-05-05 --worker 7")]
    Generate {
        /// How many IDs.
        #[arg(short = 'n', long = "count", default_value_t = 1)]
        count: u64,
        #[command(flatten)]
        layout: LayoutArgs,
        /// The node field's value (for a datacenter/machine layout: both halves together,
        /// datacenter << machine bits | machine).
        #[arg(long, default_value_t = 0)]
        worker: u64,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Re-encode an ID in another layout: the same instant, node and sequence.
    ///
    /// The instant is the start of the ID's tick; a field that does not fit the target
    /// layout is an error.
    #[command(after_help = "\
Example:
  snowflake convert 1724551110457221119 --from twitter --to leaf")]
    Convert {
        /// The ID, in decimal.
        id: String,
        /// The ID's layout: a preset name or the text form.
        #[arg(long)]
        from: String,
        /// The target layout: a preset name or the text form.
        #[arg(long)]
        to: String,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Serve IDs over HTTP: `GET /v1/ids/{name}`, decoding, Leaf's routes, health, metrics.
    ///
    /// Each `--id` names a type and its layout; the worker ID is fixed, from
    /// SNOWFLAKE_WORKER_ID, the StatefulSet ordinal, or leased (`--lease URL`). Serves until
    /// SIGTERM or Ctrl-C, then releases the lease.
    #[cfg(feature = "serve")]
    #[command(after_help = "\
Example:
  snowflake serve --id order=preset=leaf,epoch=2020-01-01 --lease redis://127.0.0.1:6379
  curl localhost:8080/v1/ids/order")]
    Serve(Box<snowflake_server::ServeArgs>),
    /// List a namespace's worker IDs as their lease store records them (holder, fence, time
    /// left, high water), or declare a namespace new (`init`), or fence it after a restore
    /// (`fence`).
    ///
    /// Reads any store a lease can live in: redis://, rediss://, redis+sentinel://,
    /// postgres://, mysql://, mariadb://, etcd://, etcds://, zk:// (the URL of
    /// SNOWFLAKE_WORKER_LEASE).
    /// Each worker ID with a record is listed; the holder is the `host:pid` it recorded. Needs
    /// the `leases` feature of snowflake-cli (`cargo install --locked snowflake-cli --features full`).
    #[command(
        args_conflicts_with_subcommands = true,
        subcommand_negates_reqs = true,
        after_help = "\
Examples:
  snowflake leases redis://127.0.0.1:6379 --namespace orders
  snowflake leases postgres://app@db/app --json | jq -r 'select(.leased) | .holder'
  snowflake leases init redis://127.0.0.1:6379 --namespace orders
  snowflake leases fence postgres://app@db/app --namespace orders"
    )]
    Leases {
        #[command(subcommand)]
        action: Option<LeasesAction>,
        /// The lease store's URL.
        #[arg(required = true)]
        url: Option<String>,
        /// The namespace (default: SNOWFLAKE_NAMESPACE, else typed-snowflake, as the
        /// leases themselves take it).
        #[arg(long)]
        namespace: Option<String>,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// List every preset: widths, epoch, tick, and when its time field runs out.
    #[command(after_help = "\
Example:
  snowflake layouts --json")]
    Layouts {
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
}

/// What `snowflake leases` does besides listing.
#[derive(Subcommand, Debug)]
enum LeasesAction {
    /// Declare a namespace new: its first holders issue at once instead of waiting out the
    /// reservation (W, 60 s by default). Refused where the store holds anything of the
    /// namespace (a marker or any record).
    ///
    /// Declare it before the namespace's first holder starts. What it cannot protect against:
    /// a store that just lost its data (a Redis restarted without persistence, a table
    /// emptied) while holders of the namespace still run holds nothing of it either, and
    /// declaring it new then would let new holders issue beside them.
    Init {
        /// The lease store's URL.
        url: String,
        /// The namespace (default: SNOWFLAKE_NAMESPACE, else typed-snowflake).
        #[arg(long)]
        namespace: Option<String>,
    },
    /// Fence a namespace after its store was restored from a backup or a snapshot that the
    /// store itself cannot tell (a table restored from a dump, a ZooKeeper data directory
    /// put back): every worker ID's next holder waits out the reservation, and holders whose
    /// records the restore rolled back stop and acquire again.
    ///
    /// Run it before the restored store serves the holders again.
    Fence {
        /// The lease store's URL.
        url: String,
        /// The namespace (default: SNOWFLAKE_NAMESPACE, else typed-snowflake).
        #[arg(long)]
        namespace: Option<String>,
    },
}

#[derive(Args)]
#[group(required = true, multiple = false)]
struct LayoutArgs {
    /// A public scheme's layout (see `snowflake layouts`).
    #[arg(long)]
    preset: Option<String>,
    /// A layout in the text form, e.g. time=42,worker=5,seq=16,epoch=2021-05-05.
    #[arg(long)]
    layout: Option<String>,
}

/// The layout of the IDs to decode: given outright, or ID types whose prefixes pick one.
#[derive(Args)]
#[group(required = true, multiple = true)]
struct DecodeArgs {
    /// A public scheme's layout (see `snowflake layouts`).
    #[arg(long, conflicts_with_all = ["layout", "types", "config"])]
    preset: Option<String>,
    /// A layout in the text form, e.g. time=42,worker=5,seq=16,epoch=2021-05-05.
    #[arg(long, conflicts_with_all = ["types", "config"])]
    layout: Option<String>,
    /// An ID type, as `snowflake serve` takes it: NAME=LAYOUT with its prefix among the
    /// layout's keys, e.g. order=prefix=ord,preset=twitter. A prefixed ID (ord_…) is decoded
    /// as the type of its prefix; a decimal one needs a single type. Repeat for more types.
    #[arg(long = "id", id = "types", value_name = "NAME=LAYOUT")]
    types: Vec<String>,
    /// `snowflake serve`'s JSON configuration file: its "ids" are read as --id.
    #[arg(long, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
}

/// A layout and what its fields are called.
struct Scheme {
    name: String,
    layout: Layout,
    labels: Labels,
    /// The type's prefix, when it is a prefixed ID type (`--id order=prefix=ord,…`).
    prefix: Option<String>,
}

/// How IDs are decoded: one scheme for every ID, or the ID types of `--id` and `--config`.
enum Decoder {
    Scheme(Scheme),
    Types(Vec<Scheme>),
}

/// An ID read from text: its value and the scheme it was decoded with.
struct Decoded<'a> {
    scheme: &'a Scheme,
    raw: u64,
    /// The prefixed text, when the ID was given (or its type is written) prefixed.
    prefixed: Option<String>,
}

impl Decoder {
    fn from_args(args: &DecodeArgs) -> Result<Decoder, String> {
        if args.preset.is_some() || args.layout.is_some() {
            let layout = LayoutArgs { preset: args.preset.clone(), layout: args.layout.clone() };
            return Scheme::from_args(&layout).map(Decoder::Scheme);
        }
        let mut specs: Vec<(String, String)> = Vec::new();
        for spec in &args.types {
            let Some((name, text)) = spec.split_once('=') else {
                return Err(format!("--id {spec:?}: write NAME=LAYOUT, e.g. order=prefix=ord,preset=twitter"));
            };
            specs.push((name.trim().to_owned(), text.trim().to_owned()));
        }
        if let Some(path) = &args.config {
            let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let file: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            if let Some(ids) = file.get("ids").and_then(Value::as_object) {
                for (name, text) in ids {
                    let text = text
                        .as_str()
                        .ok_or_else(|| format!("{}: \"ids\".{name}: expected a layout string", path.display()))?;
                    specs.push((name.clone(), text.to_owned()));
                }
            }
        }
        let mut types: Vec<Scheme> = Vec::new();
        for (name, text) in specs {
            let (prefix, layout) =
                snowflake_types::prefixed::take_prefix(&text).map_err(|e| format!("ID type {name:?}: {e}"))?;
            let mut scheme = Scheme::from_text(&layout).map_err(|e| format!("ID type {name:?}: {e}"))?;
            if let Some(other) = types.iter().find(|t| t.name == name || (prefix.is_some() && t.prefix == prefix)) {
                return Err(format!("ID types {:?} and {name:?} share a name or a prefix", other.name));
            }
            scheme.name = name;
            scheme.prefix = prefix;
            types.push(scheme);
        }
        if types.is_empty() {
            return Err("no ID type given: add --id NAME=LAYOUT, or --preset or --layout".to_owned());
        }
        Ok(Decoder::Types(types))
    }

    /// Reads `text`: a prefixed ID by its prefix (any prefix under a layout given outright),
    /// decimal digits by the one layout there is.
    fn decode(&self, text: &str) -> Result<Decoded<'_>, String> {
        use snowflake_types::prefixed;

        let prefixed_text = text.contains('_');
        match self {
            Decoder::Scheme(scheme) if prefixed_text => match prefixed::parse_any(&scheme.layout, text) {
                Ok((_, raw)) => Ok(Decoded { scheme, raw: raw.cast_unsigned(), prefixed: Some(text.to_owned()) }),
                Err(e) => Err(format!("{text:?} is not {} {} ID: {e}", prefixed::article(&scheme.name), scheme.name)),
            },
            Decoder::Scheme(scheme) => Ok(Decoded { scheme, raw: scheme.parse(text)?, prefixed: None }),
            Decoder::Types(types) if prefixed_text => {
                let found = prefixed::split(text).map_or(text, |(prefix, _)| prefix);
                let Some(scheme) = types.iter().find(|t| t.prefix.as_deref() == Some(found)) else {
                    let known: Vec<String> =
                        types.iter().filter_map(|t| t.prefix.as_ref().map(|p| format!("{p}_ ({})", t.name))).collect();
                    return Err(format!(
                        "{text:?}: no ID type has the prefix {found:?}; the prefixes are: {}",
                        if known.is_empty() { "none (add prefix=… to an --id)".to_owned() } else { known.join(", ") }
                    ));
                };
                let prefix = scheme.prefix.as_deref().unwrap_or_default();
                let raw = prefixed::parse(prefix, &scheme.layout, prefixed::Decimal::Refuse, text).map_err(|e| {
                    format!("{text:?} is not {} {} ID: {e}", prefixed::article(&scheme.name), scheme.name)
                })?;
                Ok(Decoded { scheme, raw: raw.cast_unsigned(), prefixed: Some(text.to_owned()) })
            }
            Decoder::Types(types) => match types.as_slice() {
                [scheme] => {
                    let raw = scheme.parse(text)?;
                    let prefixed = scheme.prefix.as_deref().map(|prefix| prefixed::format(prefix, raw.cast_signed()));
                    Ok(Decoded { scheme, raw, prefixed })
                }
                _ => Err(format!(
                    "{text:?} is a bare number and there are {} ID types: give it prefixed, or one --id (or --layout)",
                    types.len()
                )),
            },
        }
    }
}

impl Scheme {
    fn from_text(text: &str) -> Result<Scheme, String> {
        if !text.contains('=') {
            let preset = Preset::get(text)
                .ok_or_else(|| format!("unknown preset {text:?}; the presets are: {}", Preset::NAMES))?;
            return Ok(Scheme {
                name: preset.name.to_owned(),
                layout: preset.layout,
                labels: preset.labels,
                prefix: None,
            });
        }
        let layout: Layout = text.parse().map_err(|e| format!("--layout {text:?}: {e}"))?;
        let labels = Preset::labels_of(text, &layout);
        Ok(match Preset::named_in(text, &layout) {
            Some(preset) => Scheme { name: preset.name.to_owned(), layout, labels, prefix: None },
            None => Scheme { name: layout.to_string(), layout, labels, prefix: None },
        })
    }

    fn from_args(args: &LayoutArgs) -> Result<Scheme, String> {
        match (&args.preset, &args.layout) {
            (Some(name), _) => Scheme::from_text(name),
            (None, Some(text)) => Scheme::from_text(text),
            (None, None) => Err("give --preset NAME or --layout TEXT".to_owned()),
        }
    }

    /// The node and sequence fields, named, in the order they are written.
    fn fields(&self, parts: &Parts) -> Vec<(&'static str, u64)> {
        let mut fields = Vec::new();
        if let (Some(dc), Some(machine)) = (parts.datacenter, parts.machine) {
            fields.push((self.labels.datacenter, dc));
            fields.push((self.labels.machine, machine));
        } else if self.layout.worker_bits() > 0 {
            fields.push((self.labels.node, parts.worker));
        }
        fields.push((self.labels.sequence, parts.sequence));
        fields
    }

    /// Parses decimal text as an ID of this layout.
    fn parse(&self, text: &str) -> Result<u64, String> {
        self.layout
            .parse_id(text)
            .map(i64::cast_unsigned)
            .map_err(|e| format!("{text:?} is not an ID of the {} layout: {e}", self.name))
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    #[cfg(feature = "serve")]
    if let Command::Serve(args) = &cli.command {
        return snowflake_server::run(args);
    }
    let stdout = io::stdout();
    // Colour on a terminal unless NO_COLOR is set; CLICOLOR_FORCE asks for it anywhere.
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0");
    let colour = set("CLICOLOR_FORCE") || (stdout.is_terminal() && !set("NO_COLOR"));
    let mut out = BufWriter::new(stdout.lock());
    let result = run(cli.command, &mut out, colour).and_then(|status| {
        out.flush().map_err(|e| e.to_string())?;
        Ok(status)
    });
    match result {
        Ok(status) => status,
        // A closed pipe (`snowflake generate -n 1000000 | head`) is not a failure.
        Err(message) if message.contains("Broken pipe") => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("snowflake: {message}");
            ExitCode::FAILURE
        }
    }
}

fn io_err(e: io::Error) -> String {
    e.to_string()
}

fn run(command: Command, out: &mut impl Write, colour: bool) -> Result<ExitCode, String> {
    match command {
        Command::Inspect { ids, layout, json } => {
            let decoder = Decoder::from_args(&layout)?;
            let mut failed = 0_usize;
            // One hint per run, at the first ID whose date looks wrong.
            let mut hinted = false;
            let mut handle = |text: &str, place: &str, out: &mut dyn Write| -> Result<(), String> {
                match decoder.decode(text) {
                    Ok(decoded) => {
                        if !hinted && let Some(hint) = epoch_hint(&decoded, wall_ms()) {
                            hinted = true;
                            eprintln!("snowflake: hint: {hint}");
                        }
                        inspect(&decoded, json, out).map_err(io_err)
                    }
                    Err(message) => {
                        failed += 1;
                        eprintln!("snowflake: {place}: {message}");
                        Ok(())
                    }
                }
            };
            if ids.is_empty() {
                // Bytes, not `lines()`: a line that is not UTF-8 is one bad line, not the end.
                for (n, line) in io::stdin().lock().split(b'\n').enumerate() {
                    let line = line.map_err(|e| format!("reading standard input: {e}"))?;
                    let line = String::from_utf8_lossy(&line);
                    let text = line.trim();
                    if !text.is_empty() {
                        handle(text, &format!("line {}", n + 1), out)?;
                    }
                }
            } else {
                for (n, text) in ids.iter().enumerate() {
                    handle(text, &format!("argument {}", n + 1), out)?;
                }
            }
            Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
        }
        Command::Explain { id, layout } => {
            let decoder = Decoder::from_args(&layout)?;
            let decoded = decoder.decode(&id)?;
            if let Some(hint) = epoch_hint(&decoded, wall_ms()) {
                eprintln!("snowflake: hint: {hint}");
            }
            explain(&decoded, colour, out).map_err(io_err)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Generate { count, layout, worker, json } => {
            let scheme = Scheme::from_args(&layout)?;
            // The generator names its type in errors; here the type is the layout's name.
            let name: &'static str = Box::leak(scheme.name.clone().into_boxed_str());
            let generator = Generator::builder(scheme.layout)
                .name(name)
                .worker(worker)
                .build()
                .map_err(|e| format!("cannot generate {} IDs: {e}", scheme.name))?;
            for _ in 0..count {
                let raw = generator.next_raw().map_err(|e| format!("cannot generate {} IDs: {e}", scheme.name))?;
                let id = raw.cast_unsigned();
                if json {
                    writeln!(out, "{}", json!({ "id": id.to_string() })).map_err(io_err)?;
                } else {
                    writeln!(out, "{id}").map_err(io_err)?;
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Convert { id, from, to, json } => {
            let (from, to) = (Scheme::from_text(&from)?, Scheme::from_text(&to)?);
            let raw = from.parse(&id)?;
            let parts = from.layout.parts_of(raw.cast_signed());
            let converted = to
                .layout
                .encode(parts.timestamp_ms, parts.worker, parts.sequence)
                .map_err(|e| format!("{id} ({}) does not fit {}: {e}", from.name, to.name))?
                .cast_unsigned();
            if json {
                let line = json!({
                    "id": raw.to_string(),
                    "from": from.layout.to_string(),
                    "to": to.layout.to_string(),
                    "converted": converted.to_string(),
                });
                writeln!(out, "{line}").map_err(io_err)?;
            } else {
                writeln!(out, "{converted}").map_err(io_err)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Layouts { json } => {
            layouts(json, out).map_err(io_err)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Leases { action, url, namespace, json } => {
            let namespace_of = |namespace: Option<String>| {
                namespace
                    .or_else(|| std::env::var(snowflake_types::worker::NAMESPACE_ENV).ok().filter(|ns| !ns.is_empty()))
                    .unwrap_or_else(|| snowflake_types::worker::lease::DEFAULT_NAMESPACE.to_owned())
            };
            match action {
                None => leases(&url.unwrap_or_default(), &namespace_of(namespace), json, out)?,
                Some(LeasesAction::Init { url, namespace }) => {
                    leases_admin(&url, &namespace_of(namespace), Admin::Init, out)?;
                }
                Some(LeasesAction::Fence { url, namespace }) => {
                    leases_admin(&url, &namespace_of(namespace), Admin::Fence, out)?;
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        #[cfg(feature = "serve")]
        Command::Serve(_) => unreachable!("main runs the server before any output is set up"),
    }
}

/// The time now, in Unix ms.
fn wall_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| i64::try_from(since.as_millis()).unwrap_or(i64::MAX))
}

/// A hint that the epoch may be wrong, when `decoded` reads as a time far from `now_ms`: more
/// than a day ahead, or more than a year back under an epoch the user chooses (a preset that
/// leaves it to the user, or a layout given as text). An ID decoded with another epoch than
/// the one it was made with reads as a date off by the difference; the schemes whose epoch is
/// fixed (Twitter, Discord, Instagram, Mastodon) have old IDs that are really old.
fn epoch_hint(decoded: &Decoded<'_>, now_ms: i64) -> Option<String> {
    const DAY_MS: i64 = 86_400_000;
    let layout = &decoded.scheme.layout;
    let at_ms = layout.parts_of(decoded.raw.cast_signed()).timestamp_ms;
    let ahead_ms = at_ms.saturating_sub(now_ms);
    let fixed_epoch = Preset::ALL.iter().any(|p| !p.epoch_configurable && p.layout == *layout);
    let far = if ahead_ms > DAY_MS {
        "after now"
    } else if -ahead_ms > 365 * DAY_MS && !fixed_epoch {
        "before now"
    } else {
        return None;
    };
    let days = ahead_ms.unsigned_abs() / DAY_MS.unsigned_abs();
    // Whole days, or years to one decimal place (of 365.25 days), for a reader.
    #[allow(clippy::cast_precision_loss)]
    let distance = if days < 365 { format!("{days} days") } else { format!("{:.1} years", days as f64 / 365.25) };
    Some(format!(
        "{} reads as {}, {distance} {far}: if it was made with another epoch than {}, give that one \
         (--layout with epoch=YYYY-MM-DD, e.g. --layout preset=leaf,epoch=2020-01-01)",
        decoded.raw,
        format_rfc3339(at_ms),
        format_rfc3339(layout.epoch_ms()).split('T').next().unwrap_or_default()
    ))
}

fn inspect(decoded: &Decoded<'_>, json: bool, out: &mut dyn Write) -> io::Result<()> {
    let (scheme, raw) = (decoded.scheme, decoded.raw);
    let layout = &scheme.layout;
    let parts = layout.parts_of(raw.cast_signed());
    let instant = format_rfc3339(parts.timestamp_ms);
    // An integer below 2^53: exact.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let score = score_of(layout, raw.cast_signed()) as u64;
    let fields = scheme.fields(&parts);
    if json {
        let mut named = Map::new();
        for &(name, value) in &fields {
            named.insert(name.to_owned(), json!(value));
        }
        let mut line = json!({
            "id": raw.to_string(),
            "layout": layout.to_string(),
            "time": instant,
            "unix_ms": parts.timestamp_ms,
            "ticks": parts.ticks,
            "worker": parts.worker,
            "datacenter": parts.datacenter,
            "machine": parts.machine,
            "sequence": parts.sequence,
            "fields": Value::Object(named),
            "redis_score": score,
        });
        if let Some(text) = &decoded.prefixed {
            line["prefixed"] = json!(text);
            line["type"] = json!(scheme.name);
        }
        writeln!(out, "{line}")
    } else {
        let fields: Vec<String> = fields.iter().map(|(name, value)| format!("{name} {value}")).collect();
        let id = match &decoded.prefixed {
            Some(text) => format!("{text} ({} {raw})", scheme.name),
            None => raw.to_string(),
        };
        writeln!(out, "{id}: {instant} ({} ms), {}, redis score {score}", parts.timestamp_ms, fields.join(", "))
    }
}

/// One field of the bar: its name, highest and lowest bit, and value.
struct Field {
    name: String,
    high: u32,
    low: u32,
    value: u64,
    colour: &'static str,
    is_time: bool,
}

fn explain(decoded: &Decoded<'_>, colour: bool, out: &mut dyn Write) -> io::Result<()> {
    let (scheme, raw) = (decoded.scheme, decoded.raw);
    let layout = &scheme.layout;
    let parts = layout.parts_of(raw.cast_signed());
    let mut fields = Vec::new();
    let used = layout.used_bits();
    if used < 64 {
        fields.push(Field {
            name: "unused".to_owned(),
            high: 63,
            low: used,
            value: raw >> used,
            colour: "2",
            is_time: false,
        });
    }
    let time_shift = layout.time_shift();
    fields.push(Field {
        name: "time".to_owned(),
        high: used - 1,
        low: time_shift,
        value: parts.ticks,
        colour: "36",
        is_time: true,
    });
    let node = |fields: &mut Vec<Field>, shift: u32| {
        if let (Some(dc), Some(machine)) = (parts.datacenter, parts.machine) {
            let machine_bits = layout.machine_bits();
            fields.push(Field {
                name: scheme.labels.datacenter.to_owned(),
                high: shift + layout.worker_bits() - 1,
                low: shift + machine_bits,
                value: dc,
                colour: "33",
                is_time: false,
            });
            fields.push(Field {
                name: scheme.labels.machine.to_owned(),
                high: shift + machine_bits - 1,
                low: shift,
                value: machine,
                colour: "35",
                is_time: false,
            });
        } else if layout.worker_bits() > 0 {
            fields.push(Field {
                name: scheme.labels.node.to_owned(),
                high: shift + layout.worker_bits() - 1,
                low: shift,
                value: parts.worker,
                colour: "33",
                is_time: false,
            });
        }
    };
    let seq = Field {
        name: scheme.labels.sequence.to_owned(),
        high: layout.seq_shift() + layout.seq_bits() - 1,
        low: layout.seq_shift(),
        value: parts.sequence,
        colour: "32",
        is_time: false,
    };
    if layout.seq_shift() == 0 {
        node(&mut fields, layout.worker_shift());
        fields.push(seq);
    } else {
        fields.push(seq);
        node(&mut fields, layout.worker_shift());
    }

    let paint = |text: &str, code: &str| if colour { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_owned() };
    // A layout given as text is named by its text: printed once; a prefixed ID first.
    let head = match &decoded.prefixed {
        Some(text) => format!("{text} = {raw}"),
        None => raw.to_string(),
    };
    if scheme.name == layout.to_string() {
        writeln!(out, "{head} ({layout})")?;
    } else {
        writeln!(out, "{head} ({}: {layout})", scheme.name)?;
    }
    let bits = format!("{raw:064b}");
    let bar: Vec<String> =
        fields.iter().map(|f| paint(&bits[(63 - f.high) as usize..=(63 - f.low) as usize], f.colour)).collect();
    writeln!(out, "{}", bar.join(" "))?;
    let name_width = fields.iter().map(|f| f.name.len()).max().unwrap_or(0);
    for f in &fields {
        let width = f.high - f.low + 1;
        let range = if width == 1 { format!("bit {}", f.high) } else { format!("bits {}..{}", f.high, f.low) };
        let mut line = format!(
            "{:<name_width$}  {range:<13} {width:>2} bit{} = {}",
            f.name,
            if width == 1 { " " } else { "s" },
            f.value
        );
        if f.is_time {
            let unit = match layout.unit() {
                TickUnit::Millis => "ms",
                TickUnit::TenMillis => "× 10 ms",
                TickUnit::Seconds => "s",
            };
            line.push_str(&format!(
                " {unit} since {} = {}",
                format_rfc3339(layout.epoch_ms()),
                format_rfc3339(parts.timestamp_ms)
            ));
        }
        writeln!(out, "{}", paint(&line, f.colour))?;
    }
    Ok(())
}

/// What `snowflake leases init` and `fence` do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Admin {
    Init,
    Fence,
}

/// The store a `snowflake leases` URL names, or why this build cannot open it.
#[cfg(feature = "leases")]
fn lease_store(url: &str) -> Result<std::sync::Arc<dyn snowflake_types::worker::lease::LeaseStore>, String> {
    let scheme = url.trim().split_once("://").map_or(String::new(), |(scheme, _)| scheme.to_ascii_lowercase());
    if matches!(scheme.as_str(), "zks" | "zk+tls") && !cfg!(feature = "zookeeper-tls") {
        return Err(format!(
            "this snowflake was built without ZooKeeper over TLS ({scheme}://): install it with `{INSTALL_ZOOKEEPER_TLS}`"
        ));
    }
    snowflake_types::worker::lease::open_store(url).map_err(|e| e.to_string())
}

/// `snowflake leases init` and `fence`.
#[cfg(feature = "leases")]
fn leases_admin(url: &str, namespace: &str, admin: Admin, out: &mut dyn Write) -> Result<(), String> {
    use snowflake_types::worker::lease::admin::{create_namespace, fence_namespace};

    let store = lease_store(url)?;
    let said = match admin {
        Admin::Init => {
            create_namespace(&*store, namespace).map_err(|e| e.to_string())?;
            "declared new: its never-used worker IDs issue at once"
        }
        Admin::Fence => {
            fence_namespace(&*store, namespace).map_err(|e| e.to_string())?;
            "fenced: every worker ID's next holder waits out the reservation"
        }
    };
    writeln!(out, "namespace {namespace:?} in {}: {said}", store.describe()).map_err(io_err)
}

#[cfg(not(feature = "leases"))]
fn leases_admin(_url: &str, _namespace: &str, _admin: Admin, _out: &mut dyn Write) -> Result<(), String> {
    Err(format!("this snowflake was built without the lease stores: install it with `{INSTALL}`"))
}

/// `snowflake leases`: the store's records of `namespace`, one line (or JSON object) per
/// worker ID.
#[cfg(feature = "leases")]
fn leases(url: &str, namespace: &str, json: bool, out: &mut dyn Write) -> Result<(), String> {
    use snowflake_types::worker::lease::admin::inspect;

    let store = lease_store(url)?;
    let report = inspect(&*store, namespace).map_err(|e| e.to_string())?;
    let now_ms = report.now_ms;
    let records = &report.workers;
    let date = |ms: Option<i64>| ms.map(format_rfc3339);
    if !json {
        let leased = records.iter().filter(|r| r.leased).count();
        let known = match report.known_since_ms {
            Some(since) if report.declared => format!("known since {} (declared new)", format_rfc3339(since)),
            Some(since) => format!("known since {}", format_rfc3339(since)),
            None => "not known to this store (its first holder waits out the reservation)".to_owned(),
        };
        writeln!(
            out,
            "namespace {namespace:?} in {} at {}: {known}; {leased} leased, {} free; worker IDs from {} never granted",
            store.describe(),
            format_rfc3339(now_ms),
            records.len() - leased,
            report.granted_below
        )
        .map_err(io_err)?;
        writeln!(out, "{:<8} {:<48} {:<18} {:<10} {:<8} high water", "worker", "holder", "fence", "left", "vouched")
            .map_err(io_err)?;
    }
    for record in records {
        let left_ms = record.expires_in.map(|left| i64::try_from(left.as_millis()).unwrap_or(i64::MAX));
        let line = if json {
            json!({
                "worker": record.worker,
                "leased": record.leased,
                "holder": record.holder,
                // A string, as IDs are: exact in every JSON reader.
                "fence": record.fence.map(|fence| fence.to_string()),
                "expires_in_ms": left_ms,
                "expires_at": date(left_ms.map(|left| now_ms.saturating_add(left))),
                "high_water_ms": record.high_water_ms,
                "high_water": date(record.high_water_ms),
                "vouched": record.vouched,
            })
            .to_string()
        } else {
            let left = match (record.leased, left_ms) {
                (false, _) => "free".to_owned(),
                (true, None) => "-".to_owned(),
                (true, Some(ms)) => format!("{}.{:03}s", ms / 1000, ms % 1000),
            };
            format!(
                "{:<8} {:<48} {:<18} {:<10} {:<8} {}",
                record.worker,
                record.holder.as_deref().unwrap_or("-"),
                record.fence.map_or_else(|| "-".to_owned(), |fence| fence.to_string()),
                left,
                if record.vouched { "yes" } else { "no" },
                date(record.high_water_ms).unwrap_or_else(|| "-".to_owned())
            )
        };
        writeln!(out, "{line}").map_err(io_err)?;
    }
    Ok(())
}

#[cfg(not(feature = "leases"))]
fn leases(_url: &str, _namespace: &str, _json: bool, _out: &mut dyn Write) -> Result<(), String> {
    Err(format!("this snowflake was built without the lease stores: install it with `{INSTALL}`"))
}

fn layouts(json: bool, out: &mut dyn Write) -> io::Result<()> {
    if !json {
        writeln!(out, "{:<10} {:<12} {:<5} {:<24} {:<24} text form", "preset", "widths", "tick", "epoch", "runs out")?;
    }
    for preset in Preset::ALL {
        let layout = &preset.layout;
        let node = if layout.is_split() {
            format!("{}+{}", layout.datacenter_bits(), layout.machine_bits())
        } else {
            layout.worker_bits().to_string()
        };
        let widths = match layout.order() {
            snowflake_types::FieldOrder::WorkerAboveSeq => {
                format!("{}/{node}/{}", layout.time_bits(), layout.seq_bits())
            }
            snowflake_types::FieldOrder::SeqAboveWorker => {
                format!("{}/{}/{node}", layout.time_bits(), layout.seq_bits())
            }
        };
        let runs_out = format_rfc3339(layout.max_timestamp_ms());
        if json {
            let mut line = json!(LayoutSummary(layout));
            line["preset"] = json!(preset.name);
            line["epoch_configurable"] = json!(preset.epoch_configurable);
            line["about"] = json!(preset.about);
            line["source"] = json!(preset.source);
            writeln!(out, "{line}")?;
        } else {
            writeln!(
                out,
                "{:<10} {:<12} {:<5} {:<24} {:<24} {layout}",
                preset.name,
                widths,
                layout.unit().as_str(),
                format_rfc3339(layout.epoch_ms()),
                runs_out
            )?;
        }
    }
    Ok(())
}
