//! `docs/lease-rules.md` states the lease rules once; its table of defaults is checked here
//! against the constants that are the rules in code, so the page cannot drift from them.

use std::time::Duration;

use typed_snowflake::worker::lease::{
    DEFAULT_CLOCK_TOLERANCE, DEFAULT_MARGIN, DEFAULT_RESERVATION, DEFAULT_STORE_TIMEOUT, DEFAULT_STORE_WAIT,
    DEFAULT_TTL, LeaseError, MemoryLeaseStore, WorkerLease,
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
        let stated = cells[1].split(',').next().unwrap_or_default();
        assert_eq!(stated, seconds(value), "{constant}'s default on the page: {cells:?}");
        let env_cell = env.map_or_else(|| "–".to_owned(), |env| format!("`{env}`"));
        assert_eq!(cells[4], env_cell, "{constant}'s variable on the page: {cells:?}");
    }
    // The ride-through the page promises is what the defaults give.
    let ride = DEFAULT_RESERVATION - DEFAULT_MARGIN;
    assert!(PAGE.contains(&format!("`W − margin`\n({} by default)", seconds(ride))), "W − margin is {ride:?}");
}

/// The policies the page states beside the constants are what a lease gets: `W` the larger of
/// its default and the TTL, the margin the smaller of its default and TTL / 5, a renewal every
/// TTL / 3, and a setting the rules cannot hold under refused.
#[test]
fn the_rules_page_states_the_policies_the_builder_applies() {
    assert_eq!(row("DEFAULT_RESERVATION")[1], "60 s, or the TTL where that is longer");
    assert_eq!(row("DEFAULT_MARGIN")[1], "2 s, or TTL / 5 where that is shorter");
    let renewal = PAGE.lines().find(|line| line.starts_with("| renewal interval")).expect("a renewal row");
    assert!(renewal.contains("| TTL / 3 |"), "{renewal}");
    let timing = |ttl: Duration| WorkerLease::builder(MemoryLeaseStore::new()).ttl(ttl).timing().expect("valid");
    for ttl in [Duration::from_secs(1), Duration::from_secs(5), DEFAULT_TTL, Duration::from_secs(120)] {
        let t = timing(ttl);
        assert_eq!(t.reservation, DEFAULT_RESERVATION.max(ttl), "W for a TTL of {ttl:?}");
        assert_eq!(t.margin, DEFAULT_MARGIN.min(ttl / 5), "the margin for a TTL of {ttl:?}");
        assert_eq!(t.renew_every, ttl / 3, "the renewals for a TTL of {ttl:?}");
    }
    let refused = |builder: typed_snowflake::worker::lease::WorkerLeaseBuilder| {
        matches!(builder.timing(), Err(LeaseError::BadSettings { .. }))
    };
    let builder = || WorkerLease::builder(MemoryLeaseStore::new()).ttl(Duration::from_secs(10));
    assert!(refused(builder().reservation(Duration::from_secs(9))), "W below the TTL");
    assert!(refused(builder().margin(Duration::from_secs(10))), "a margin as long as the TTL");
    assert!(refused(builder().renew_every(Duration::from_secs(8))), "renewals no more frequent than TTL - margin");
    assert!(PAGE.contains("`W` below the TTL or above 24 h, a margin not shorter than the TTL,\nrenewals not more frequent than `TTL − margin`"));
}
