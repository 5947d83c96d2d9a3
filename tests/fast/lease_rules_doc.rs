//! `docs/lease-rules.md` states the lease rules once; its table of defaults is checked here
//! against the constants that are the rules in code, so the page cannot drift from them.

use std::time::Duration;

use typed_snowflake::worker::lease::{
    DEFAULT_CLOCK_TOLERANCE, DEFAULT_MARGIN, DEFAULT_RESERVATION, DEFAULT_STORE_TIMEOUT, DEFAULT_STORE_WAIT,
    DEFAULT_TTL,
};
use typed_snowflake::worker::{LEASE_RESERVATION_ENV, LEASE_TTL_ENV, LEASE_WAIT_ENV};

const PAGE: &str = include_str!("../../docs/lease-rules.md");

/// The cells of the defaults table's row whose constant is `constant`.
fn row(constant: &str) -> Vec<String> {
    let needle = format!("`{constant}`");
    let line = PAGE.lines().find(|line| line.starts_with('|') && line.contains(&needle));
    let line = line.unwrap_or_else(|| panic!("docs/lease-rules.md has no row for {constant}"));
    line.trim_matches('|').split('|').map(|cell| cell.trim().to_owned()).collect()
}

fn seconds(d: Duration) -> String {
    format!("{} s", d.as_secs())
}

#[test]
fn the_rules_page_states_the_defaults_the_code_has() {
    for (constant, value, env) in [
        ("DEFAULT_TTL", DEFAULT_TTL, Some(LEASE_TTL_ENV)),
        ("DEFAULT_RESERVATION", DEFAULT_RESERVATION, Some(LEASE_RESERVATION_ENV)),
        ("DEFAULT_MARGIN", DEFAULT_MARGIN, None),
        ("DEFAULT_CLOCK_TOLERANCE", DEFAULT_CLOCK_TOLERANCE, None),
        ("DEFAULT_STORE_TIMEOUT", DEFAULT_STORE_TIMEOUT, None),
        ("DEFAULT_STORE_WAIT", DEFAULT_STORE_WAIT, Some(LEASE_WAIT_ENV)),
    ] {
        let cells = row(constant);
        assert_eq!(cells[1], seconds(value), "{constant}'s default on the page: {cells:?}");
        let env_cell = env.map_or_else(|| "–".to_owned(), |env| format!("`{env}`"));
        assert_eq!(cells[4], env_cell, "{constant}'s variable on the page: {cells:?}");
    }
    // The ride-through the page promises is what the defaults give.
    let ride = DEFAULT_RESERVATION - DEFAULT_MARGIN;
    assert!(PAGE.contains(&format!("`W − margin`\n({} by default)", seconds(ride))), "W − margin is {ride:?}");
}
