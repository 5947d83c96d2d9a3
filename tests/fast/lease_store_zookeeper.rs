//! The ZooKeeper store against a real server: the conformance suite every store passes, and
//! each bug planted in front of the store (`common/planted.rs`) failing its case. The machine has no
//! shared ZooKeeper: the test starts a private standalone one (Debian's `zookeeper`; without
//! it the test prints `SKIPPED:`, and fails under `CI`). The bug the suite cannot show on a
//! standalone server (`incarnation-constant`: its epoch never changes) is shown by the slow
//! tier, on an ensemble that elects a new leader (`tests/faults/lease_store_zookeeper.rs`).

use std::sync::Arc;
use std::time::Duration;

use typed_snowflake::worker::lease::store::{Query, Slot};
use typed_snowflake::worker::lease::{LeaseStore, ZooKeeperLeaseStore};

use crate::conformance::{Faults, Subject, run_all};
use crate::planted::Bug;
use crate::servers::PrivateZooKeeper;

/// An operator's `delete` of one znode.
struct Operator<'a>(&'a PrivateZooKeeper);

impl Faults for Operator<'_> {
    fn delete(&self, namespace: &str, slot: Slot) {
        let path = match slot {
            Slot::Marker => format!("/conformance/snowflake/ns-{namespace}/marker"),
            Slot::Worker(worker) => format!("/conformance/snowflake/ns-{namespace}/workers/{worker}"),
        };
        self.0.delete(&path);
    }
}

#[test]
fn the_zookeeper_store_passes_the_conformance_suite() {
    let Some(zookeeper) = PrivateZooKeeper::start() else { return };
    let url = format!("{}/conformance", zookeeper.url());
    let open = || {
        Arc::new(ZooKeeperLeaseStore::open(&url).expect("a ZooKeeper URL").timeout(Duration::from_secs(5)))
            as Arc<dyn LeaseStore>
    };
    let faults = Operator(&zookeeper);
    let subject = Subject {
        name: "zookeeper",
        open: &open,
        faults: &faults,
        prefix: format!("t{}", std::process::id()),
        has_clock: true,
    };
    run_all(&subject).unwrap_or_else(|failures| panic!("{failures}"));

    // A standalone server: no incarnation, and a warning that says what a restore then needs.
    let store = open();
    assert_eq!(store.read("x", &Query::workers(0..1)).expect("a read").incarnation, "");
    let warnings = store.warnings().expect("the warnings");
    assert!(warnings.len() == 1 && warnings[0].contains("snowflake leases fence"), "{warnings:?}");

    crate::conformance::planted_bugs_fail(
        &subject,
        &[
            (Bug::CasIgnoresExpect, "a_slot_is_created_only_if_absent"),
            (Bug::CasNotAtomic, "concurrent_writes_lose_nothing"),
            (Bug::WriteNotAtomic, "two_slots_are_written_together_or_not_at_all"),
        ],
    )
    .unwrap_or_else(|failure| panic!("{failure}"));

    // One session serves every call: each call is a round trip, not a session's handshake
    // (a forwarder in front of the server counts the connections).
    let (proxy, proxied) = crate::proxy::Proxy::for_url(&url, 2181).expect("a proxy");
    let store = ZooKeeperLeaseStore::open(&proxied).expect("a ZooKeeper URL").timeout(Duration::from_secs(5));
    for _ in 0..4 {
        store.read("sessions", &Query::workers(0..4)).expect("a read");
    }
    assert_eq!(proxy.accepted(), 1, "connections opened for 4 calls");
}
