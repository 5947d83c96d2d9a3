// A Node client of `snowflake serve`'s gRPC API, its code generated from the repository's
// .proto at run time by @grpc/proto-loader. Prints what it got as one JSON object, which
// snowflake-server/tests/service/grpc.rs checks.
//
//     node client.js HOST:PORT all|waiting|refused PROTO_DIR [CA [CERT KEY]]
const fs = require("fs");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const [target, mode, protoDir, ca, cert, key] = process.argv.slice(2);
// 64-bit fields as strings: a JavaScript number would round an ID above 2^53. The options
// of docs/service.md's snippet: a field left at 0 reads 0, and no made-up oneof keys.
const definition = protoLoader.loadSync("snowflake/v1/snowflake.proto", {
  includeDirs: [protoDir], keepCase: true, longs: String, defaults: true,
});
const { Snowflake } = grpc.loadPackageDefinition(definition).snowflake.v1;
// The CA, and a client certificate and its key when given (mTLS).
const read = (path) => (path ? fs.readFileSync(path) : null);
const credentials = ca ? grpc.credentials.createSsl(read(ca), read(key), read(cert)) : grpc.credentials.createInsecure();
const ids = new Snowflake(target, credentials);

const call = (method, request) =>
  new Promise((resolve, reject) => ids[method](request, (e, answer) => (e ? reject(e) : resolve(answer))));
const codeName = (code) => Object.keys(grpc.status).find((name) => grpc.status[name] === code);
// The status a call ended with: its code's name, its message and its retry-after.
const refusal = (promise) =>
  promise.then(
    () => null,
    (e) => ({ code: codeName(e.code), details: e.details, retry_after: (e.metadata.get("retry-after")[0] ?? null) }),
  );
// The first `n` messages of a stream, then a cancel.
const firstOf = (stream, n) =>
  new Promise((resolve, reject) => {
    const got = [];
    stream.on("data", (message) => {
      got.push(message);
      if (got.length === n) stream.cancel();
    });
    stream.on("error", (e) => (e.code === grpc.status.CANCELLED ? resolve(got) : reject(e)));
    stream.on("end", () => resolve(got));
  });

(async () => {
  if (mode === "refused") {
    const deadline = new Date(Date.now() + 10000);
    const issue = await refusal(new Promise((resolve, reject) =>
      ids.Issue({ type: "order" }, { deadline }, (e, answer) => (e ? reject(e) : resolve(answer)))));
    console.log(JSON.stringify({ issue }));
    return;
  }
  if (mode === "waiting") {
    const issue = await refusal(call("Issue", { type: "order" }));
    const stream = await refusal(firstOf(ids.IssueStream({ type: "order", chunk: 10 }), 1));
    const types = (await call("ListTypes", {})).types.map((t) => t.name);
    console.log(JSON.stringify({ issue, stream, types }));
    return;
  }
  const one = await call("Issue", { type: "order" });
  const batch = await call("IssueBatch", { type: "order", count: 3, text: true });
  const chunks = (await firstOf(ids.IssueStream({ type: "order", chunk: 1000 }), 3)).map((m) => [
    m.ids[0], m.ids[m.ids.length - 1], m.ids.length,
  ]);
  const d = await call("Decode", { type: "order", number: one.id });
  const user = await call("Issue", { type: "user" });
  const userDecoded = await call("Decode", { type: "user", text: user.text });
  const listed = (await call("ListTypes", {})).types;
  // Keys the options would have made up (a oneof's name, proto3's `_preset` for an optional).
  const madeUp = [...listed, d].flatMap((m) => Object.keys(m)).filter((k) => k.startsWith("_"));
  const types = listed.map((t) => ({
    name: t.name, prefix: t.prefix ?? null, worker: Number(t.worker),
  }));
  const errors = {
    unknown_type: await refusal(call("Issue", { type: "nope" })),
    bad_id: await refusal(call("Decode", { type: "order", text: "12x4" })),
    wrong_prefix: await refusal(call("Decode", { type: "user", text: "ord" + user.text.slice(3) })),
    bad_count: await refusal(call("IssueBatch", { type: "order", count: 0 })),
  };
  console.log(JSON.stringify({
    id: one.id, text: one.text, batch: batch.ids, batch_texts: batch.texts, chunks,
    decoded: { id: d.id, text: d.text, time: d.time, unix_ms: Number(d.unix_ms), worker: Number(d.worker), sequence: Number(d.sequence) },
    prefixed: { id: user.id, text: user.text, decoded: userDecoded.id },
    types, errors, made_up: madeUp,
  }));
})().catch((e) => { console.error(e); process.exit(1); });
