//! `snowflake-server`: the service of `snowflake serve`, as a binary of its own.
#![forbid(unsafe_code)]

use clap::Parser;

/// Typed Snowflake IDs over HTTP.
#[derive(Parser)]
#[command(name = "snowflake-server", version)]
struct Cli {
    #[command(flatten)]
    serve: snowflake_server::ServeArgs,
}

fn main() -> std::process::ExitCode {
    snowflake_server::run(&Cli::parse().serve)
}
