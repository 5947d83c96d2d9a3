//! The reference store (`MemoryLeaseStore`) passes the conformance suite that every real
//! store is held to: the suite itself is checked on the reference.

use std::sync::Arc;

use typed_snowflake::worker::lease::store::Slot;
use typed_snowflake::worker::lease::{LeaseStore, MemoryLeaseStore};

use crate::conformance::{Faults, Subject, run_all};

struct Memory(MemoryLeaseStore);

impl Faults for Memory {
    fn delete(&self, namespace: &str, slot: Slot) {
        self.0.delete(namespace, slot);
    }
}

#[test]
fn the_reference_store_passes_the_conformance_suite() {
    for store in [MemoryLeaseStore::new(), MemoryLeaseStore::without_clock()] {
        let has_clock =
            store.read("x", &typed_snowflake::worker::lease::store::Query::workers(0..1)).unwrap().now_ms.is_some();
        let open = {
            let store = store.clone();
            move || Arc::new(store.clone()) as Arc<dyn LeaseStore>
        };
        let faults = Memory(store);
        let subject = Subject {
            name: "memory",
            open: &open,
            faults: &faults,
            prefix: format!("t{}", std::process::id()),
            has_clock,
        };
        run_all(&subject).unwrap_or_else(|failures| panic!("{failures}"));
    }
}

/// A process restarted with its lease state file while the store does not answer issues at
/// once, above everything it issued before, and goes on with the store when it answers.
#[test]
fn a_restart_with_its_state_file_issues_while_the_store_is_away() {
    use std::time::{Duration, Instant};
    use typed_snowflake::worker::lease::admin::create_namespace;
    use typed_snowflake::worker::lease::{LeaseStatus, WorkerLease};
    use typed_snowflake::{Generator, Layout};

    let store = MemoryLeaseStore::new();
    let namespace = format!("t{}-file", std::process::id());
    create_namespace(&store, &namespace).unwrap();
    let dir = std::env::temp_dir().join(format!("snowflake-lease-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("lease");
    let layout = Layout::new(41, 2, 12, 1_288_834_974_657).unwrap();
    let lease = |store: &MemoryLeaseStore| {
        WorkerLease::builder(store.clone())
            .namespace(namespace.clone())
            .space(4)
            .ttl(Duration::from_secs(3))
            .margin(Duration::from_millis(500))
            .reservation(Duration::from_secs(30))
            .wait_for_store(Duration::from_secs(5))
            .state_file(&path)
            .acquire()
            .unwrap()
    };
    let first = lease(&store);
    let worker = first.worker();
    let generator = Generator::builder(layout).lease(first.clone()).build().unwrap();
    let mut last = 0;
    for _ in 0..1000 {
        last = generator.next_raw().unwrap();
    }
    // A second process on the same file is refused.
    let refused = WorkerLease::builder(store.clone()).namespace(namespace.clone()).state_file(&path).acquire();
    assert!(refused.unwrap_err().to_string().contains("another process holds it"));
    // Killed: no release; the store goes away.
    first.abandon();
    drop(generator);
    std::thread::sleep(Duration::from_millis(50));
    // Stalled as a paused server is: every call hangs for its whole timeout.
    store.set_stalled(Duration::from_secs(2));
    let began = Instant::now();
    let resumed = lease(&store);
    assert!(began.elapsed() < Duration::from_secs(1), "resumed in {:?}", began.elapsed());
    assert_eq!(resumed.worker(), worker);
    let generator = Generator::builder(layout).lease(resumed.clone()).build().unwrap();
    let next = generator.next_raw().unwrap();
    assert!(next > last, "{next} after {last}");
    store.set_stalled(Duration::ZERO);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !matches!(resumed.status(), LeaseStatus::Issuing { store_answering: true, .. }) {
        assert!(Instant::now() < deadline, "{:?}", resumed.status());
        std::thread::sleep(Duration::from_millis(20));
    }
    resumed.release().unwrap();
    assert!(!path.exists(), "the file is gone with the release");
    std::fs::remove_dir_all(&dir).unwrap();
}
