//! The real server binary, read by clients in other languages: curl, Python's standard library
//! (urllib) and Node's fetch each get an ID and a batch, decode one, and get a 400 with the
//! reason for a bad ID; the IDs come back exactly, as strings. Under CI a missing tool fails.

use crate::common;

use std::process::Command;

use common::Server;
use serde_json::Value;
use snowflake_server::config::IdSpec;

const ORDER: &str = "order=preset=leaf,epoch=2020-01-01";

fn run(program: &str, args: &[&str]) -> String {
    let output = Command::new(program).args(args).output().unwrap_or_else(|e| panic!("{program}: {e}"));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{program} failed: {}\n{stdout}", String::from_utf8_lossy(&output.stderr));
    stdout
}

/// What each client prints: one JSON object with the ID, the batch, the decoded ID and the
/// bad ID's status and error.
fn check(client: &str, out: &str) {
    let v: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{client}: {e}: {out:?}"));
    let layout = IdSpec::parse(ORDER).unwrap().layout;
    let id = v["id"].as_str().unwrap_or_else(|| panic!("{client}: {v}"));
    let raw: i64 = id.parse().unwrap();
    assert_eq!(layout.worker_of(raw), 5, "{client}");
    assert!(raw > 1 << 53, "{client}: an ID above 2^53 survives only as a string");
    assert_eq!(v["decoded"]["id"], id, "{client}: the decoded ID is the same string");
    assert_eq!(v["decoded"]["worker"], 5, "{client}");
    assert_eq!(v["decoded"]["sequence"], layout.sequence_of(raw), "{client}");
    let batch: Vec<i64> = v["batch"].as_array().unwrap().iter().map(|s| s.as_str().unwrap().parse().unwrap()).collect();
    assert_eq!(batch.len(), 3, "{client}");
    assert!(batch[0] > raw && batch.windows(2).all(|w| w[0] < w[1]), "{client}: {batch:?}");
    assert_eq!(v["bad_status"], 400, "{client}");
    assert!(v["bad_error"].as_str().unwrap().contains("decimal digits"), "{client}: {v}");
    assert_eq!(v["leaf"].as_str().unwrap().parse::<i64>().map(|id| layout.worker_of(id)), Ok(5), "{client}");
}

#[test]
fn curl_python_and_node_read_ids_exactly() {
    // The type and the worker ID from the environment, as a container sets them.
    let mut server = Server::start_env(&[], &[("SNOWFLAKE_IDS", ORDER), ("SNOWFLAKE_WORKER_ID", "5")]);
    let base = server.base.clone();

    if common::tool("curl").is_some() {
        let id_json = run("curl", &["-sS", "-f", &format!("{base}/v1/ids/order")]);
        let id: Value = serde_json::from_str(&id_json).unwrap();
        let id = id["id"].as_str().unwrap().to_owned();
        let batch: Value =
            serde_json::from_str(&run("curl", &["-sS", "-f", &format!("{base}/v1/ids/order?count=3")])).unwrap();
        let decoded: Value =
            serde_json::from_str(&run("curl", &["-sS", "-f", &format!("{base}/v1/ids/order/{id}")])).unwrap();
        let bad = run("curl", &["-sS", "-w", "\n%{http_code}", &format!("{base}/v1/ids/order/12x4")]);
        let (bad_body, bad_status) = bad.rsplit_once('\n').unwrap();
        let bad_body: Value = serde_json::from_str(bad_body).unwrap();
        let leaf = run("curl", &["-sS", "-f", &format!("{base}/api/snowflake/get/order")]);
        let out = serde_json::json!({
            "id": id,
            "batch": batch["ids"],
            "decoded": decoded,
            "bad_status": bad_status.parse::<u16>().unwrap(),
            "bad_error": bad_body["error"],
            "leaf": leaf,
        });
        check("curl", &out.to_string());
    }

    if common::tool("python3").is_some() {
        let script = r#"
import json, sys, urllib.error, urllib.request
base = sys.argv[1]
def get(path):
    with urllib.request.urlopen(base + path) as r:
        return r.read().decode()
id = json.loads(get("/v1/ids/order"))["id"]
assert isinstance(id, str) and int(id) > 2**53 and str(int(id)) == id
batch = json.loads(get("/v1/ids/order?count=3"))["ids"]
decoded = json.loads(get("/v1/ids/" + "order/" + id))
try:
    get("/v1/ids/order/12x4")
    sys.exit("a bad ID was accepted")
except urllib.error.HTTPError as e:
    bad_status, bad_error = e.code, json.loads(e.read())["error"]
leaf = get("/api/snowflake/get/order")
print(json.dumps({"id": id, "batch": batch, "decoded": decoded, "bad_status": bad_status, "bad_error": bad_error, "leaf": leaf}))
"#;
        check("python3", &run("python3", &["-c", script, &base]));
    }

    if common::tool("node").is_some() {
        let script = r#"
const base = process.argv[1];
(async () => {
  const get = async (path) => { const r = await fetch(base + path); return [r.status, await r.text()]; };
  const id = JSON.parse((await get("/v1/ids/order"))[1]).id;
  if (typeof id !== "string" || BigInt(id).toString() !== id) throw new Error("not an exact string: " + id);
  // As a JSON number it would not survive: a double holds 53 bits.
  if (Number.isSafeInteger(Number(id))) throw new Error("expected an ID above 2^53: " + id);
  const batch = JSON.parse((await get("/v1/ids/order?count=3"))[1]).ids;
  const decoded = JSON.parse((await get("/v1/ids/order/" + id))[1]);
  const [bad_status, bad_body] = await get("/v1/ids/order/12x4");
  const leaf = (await get("/api/snowflake/get/order"))[1];
  console.log(JSON.stringify({ id, batch, decoded, bad_status, bad_error: JSON.parse(bad_body).error, leaf }));
})().catch((e) => { console.error(e); process.exit(1); });
"#;
        check("node", &run("node", &["-e", script, &base]));
    }

    let (code, log) = server.stop();
    assert_eq!(code, Some(0), "a clean exit on SIGTERM:\n{log}");
}

/// The decoders of docs/service.md ("Prefixed IDs in other languages"), kept here word for
/// word: each reads `ord_…` into its integer and parts with the layout `/v1/types` gives.
const PYTHON_DECODE: &str = r#"
ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford's base32, lowercase

def decode(text, t):  # t: the type's entry of GET /v1/types
    prefix, _, suffix = text.rpartition("_")
    if prefix != t["prefix"] or len(suffix) != 13 or suffix[0] > "f" or any(c not in ALPHABET for c in suffix):
        raise ValueError("not a %s_ ID: %r" % (t["prefix"], text))
    n = 0
    for c in suffix:
        n = n * 32 + ALPHABET.index(c)
    seq = n & ((1 << t["seq_bits"]) - 1)
    worker = (n >> t["seq_bits"]) & ((1 << t["worker_bits"]) - 1)
    unix_ms = (n >> (t["seq_bits"] + t["worker_bits"])) + t["epoch_ms"]  # 1 ms ticks, time-worker-seq
    return {"id": str(n), "unix_ms": unix_ms, "worker": worker, "sequence": seq}
"#;

const NODE_DECODE: &str = r#"
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford's base32, lowercase

function decode(text, t) { // t: the type's entry of GET /v1/types
  const at = text.lastIndexOf("_"), suffix = text.slice(at + 1);
  if (text.slice(0, at) !== t.prefix || !/^[0-9a-f][0-9a-hjkmnp-tv-z]{12}$/.test(suffix))
    throw new Error(`not a ${t.prefix}_ ID: ${text}`);
  let n = 0n;
  for (const c of suffix) n = n * 32n + BigInt(ALPHABET.indexOf(c));
  const seqBits = BigInt(t.seq_bits), workerBits = BigInt(t.worker_bits);
  const sequence = Number(n & ((1n << seqBits) - 1n));
  const worker = Number((n >> seqBits) & ((1n << workerBits) - 1n));
  const unix_ms = Number(n >> (seqBits + workerBits)) + t.epoch_ms; // 1 ms ticks, time-worker-seq
  return { id: n.toString(), unix_ms, worker, sequence };
}
"#;

/// What each client prints for a prefixed type: the ID, its parts decoded by the client, and
/// the server's decoding of the same ID.
fn check_prefixed(client: &str, out: &str) {
    let v: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{client}: {e}: {out:?}"));
    let spec = IdSpec::parse(PREFIXED).unwrap();
    let text = v["text"].as_str().unwrap_or_else(|| panic!("{client}: {v}"));
    let raw = snowflake_types::prefixed::parse("ord", &spec.layout, snowflake_types::prefixed::Decimal::Refuse, text)
        .unwrap_or_else(|e| panic!("{client}: {text}: {e}"));
    let parts = spec.layout.parts_of(raw);
    let mine = &v["mine"];
    assert_eq!(mine["id"], raw.to_string(), "{client}");
    assert_eq!(mine["unix_ms"], parts.timestamp_ms, "{client}");
    assert_eq!((mine["worker"].as_u64(), mine["sequence"].as_u64()), (Some(5), Some(parts.sequence)), "{client}");
    // The server's decoding says the same.
    let server = &v["server"];
    assert_eq!((&server["id"], &server["decimal"]), (&v["text"], &mine["id"]), "{client}");
    assert_eq!(
        (&server["unix_ms"], &server["worker"], &server["sequence"]),
        (&mine["unix_ms"], &mine["worker"], &mine["sequence"])
    );
    assert_eq!(v["refused"], true, "{client}: another prefix is refused");
}

const PREFIXED: &str = "order=prefix=ord,preset=leaf,epoch=2020-01-01";

#[test]
fn python_and_node_decode_prefixed_ids_into_their_parts() {
    let mut server = Server::start_env(&[], &[("SNOWFLAKE_IDS", PREFIXED), ("SNOWFLAKE_WORKER_ID", "5")]);
    let base = server.base.clone();

    if common::tool("python3").is_some() {
        let script = format!(
            r#"
import json, sys, urllib.request
{PYTHON_DECODE}
base = sys.argv[1]
def get(path):
    with urllib.request.urlopen(base + path) as r:
        return json.loads(r.read())
t = next(t for t in get("/v1/types")["types"] if t["name"] == "order")
text = get("/v1/ids/order")["id"]
try:
    decode("usr" + text[3:], t)
    refused = False
except ValueError:
    refused = True
print(json.dumps({{"text": text, "mine": decode(text, t), "server": get("/v1/ids/order/" + text), "refused": refused}}))
"#
        );
        check_prefixed("python3", &run("python3", &["-c", &script, &base]));
    }

    if common::tool("node").is_some() {
        let script = format!(
            r#"
const base = process.argv[1];
{NODE_DECODE}
(async () => {{
  const get = async (path) => (await fetch(base + path)).json();
  const t = (await get("/v1/types")).types.find((t) => t.name === "order");
  const text = (await get("/v1/ids/order")).id;
  let refused = false;
  try {{ decode("usr" + text.slice(3), t); }} catch {{ refused = true; }}
  console.log(JSON.stringify({{ text, mine: decode(text, t), server: await get("/v1/ids/order/" + text), refused }}));
}})().catch((e) => {{ console.error(e); process.exit(1); }});
"#
        );
        check_prefixed("node", &run("node", &["-e", &script, &base]));
    }

    let (code, log) = server.stop();
    assert_eq!(code, Some(0), "a clean exit on SIGTERM:\n{log}");
}

#[test]
fn the_decoders_in_docs_service_md_are_the_ones_tested() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/service.md")).expect("docs/service.md");
    assert!(doc.contains(PYTHON_DECODE.trim()), "docs/service.md's Python decoder differs from PYTHON_DECODE");
    assert!(doc.contains(NODE_DECODE.trim()), "docs/service.md's Node decoder differs from NODE_DECODE");
}
