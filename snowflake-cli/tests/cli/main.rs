//! The `snowflake` command, run as users run it, linked once as one test binary (instead of
//! one per file): the ID subcommands (`cli`), `snowflake leases` (feature `leases`) and
//! `snowflake serve` (feature `serve`). Each runs the binary as a child process; nothing is
//! shared in this one.

mod cli;
#[cfg(feature = "leases")]
mod leases;
#[cfg(feature = "serve")]
mod serve;
