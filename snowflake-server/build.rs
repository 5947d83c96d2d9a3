//! With the `grpc` feature: compiles `proto/snowflake/v1/snowflake.proto` in Rust (protox, no
//! `protoc`) into tonic's server and client code, and keeps the compiled descriptors for the
//! reflection service.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    #[cfg(feature = "grpc")]
    {
        let proto = "proto/snowflake/v1/snowflake.proto";
        println!("cargo:rerun-if-changed={proto}");
        let descriptors = protox::compile([proto], ["proto"])?;
        let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
        std::fs::write(out.join("snowflake_v1_descriptor.bin"), prost::Message::encode_to_vec(&descriptors))?;
        tonic_prost_build::configure().build_transport(false).compile_fds(descriptors)?;
    }
    Ok(())
}
