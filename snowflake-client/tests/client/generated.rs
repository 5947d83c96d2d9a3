//! The generated code is checked in (`src/generated/snowflake.v1.rs`), so that building the
//! client needs no protobuf compiler: this test generates it again from the server's `.proto`
//! and fails when the two differ. `SNOWFLAKE_CLIENT_REGENERATE=1 cargo test -p
//! snowflake-client --test client generated` writes the new code in place (then read the diff).

use std::path::Path;

#[test]
fn the_checked_in_code_is_what_the_proto_gives() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let proto_dir = root.join("../snowflake-server/proto");
    let descriptors = protox::compile(["snowflake/v1/snowflake.proto"], [&proto_dir]).expect("the .proto compiles");
    let out = std::env::temp_dir().join(format!("snowflake-client-generated-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    // The client alone, on any tonic channel: no server code, no `connect` of its own (the
    // crate's `SnowflakeClient` connects).
    tonic_prost_build::configure()
        .build_server(false)
        .build_transport(false)
        .out_dir(&out)
        .compile_fds(descriptors)
        .expect("the code is generated");
    let fresh = std::fs::read_to_string(out.join("snowflake.v1.rs")).unwrap();
    std::fs::remove_dir_all(&out).unwrap();
    let checked_in = root.join("src/generated/snowflake.v1.rs");
    if std::env::var_os("SNOWFLAKE_CLIENT_REGENERATE").is_some() {
        std::fs::write(&checked_in, &fresh).unwrap();
        return;
    }
    let current = std::fs::read_to_string(&checked_in).unwrap_or_default();
    assert!(
        current == fresh,
        "{} is not what the .proto gives: run SNOWFLAKE_CLIENT_REGENERATE=1 cargo test -p snowflake-client --test client generated",
        checked_in.display()
    );
}
