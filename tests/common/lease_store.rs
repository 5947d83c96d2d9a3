//! What every lease store must do, written once against the `LeaseStore` trait; each store's
//! test file runs these against its real server. Include with
//! `#[path = "common/lease_store.rs"] mod lease_store;`.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::sync::Barrier;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use typed_snowflake::worker::lease::{Claim, Grant, LeaseError, LeaseStore, WorkerRecord};

/// Long enough that no lease of a test expires unless the test means it to.
pub const TTL: Duration = Duration::from_secs(30);

/// A high water in the past, as a holder records it.
pub const HIGH_WATER: i64 = 1_700_000_000_000;

/// A namespace (or a name for tables and keys) of this process and test, so that runs that
/// share a server never meet.
pub fn unique(test: &str) -> String {
    format!("t{}_{test}", std::process::id())
}

fn local_now_ms() -> i64 {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).expect("the clock is after 1970");
    i64::try_from(now.as_millis()).expect("Unix ms fit in an i64")
}

fn lost(result: Result<(), LeaseError>, namespace: &str, worker: u64) {
    match result {
        Err(LeaseError::Lost { namespace: ns, worker: w }) if ns == namespace && w == worker => {}
        other => panic!("expected the lease on worker {worker} to be lost, got {other:?}"),
    }
}

/// 32 holders (threads, spread over `stores`) contend for a 5-bit space and get 32 distinct
/// worker IDs; the 33rd gets `NoFreeWorker`; a released ID is taken again, with the high water
/// its holder released it with and a higher fence.
pub fn thirty_two_holders_share_a_five_bit_space<S: LeaseStore>(stores: &[S], namespace: &str) {
    const HOLDERS: usize = 32;
    let start = Barrier::new(HOLDERS);
    let began = Instant::now();
    let grants: Vec<(usize, Grant, Duration)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..HOLDERS)
            .map(|holder| {
                let store = &stores[holder % stores.len()];
                let start = &start;
                scope.spawn(move || {
                    start.wait();
                    let asked = Instant::now();
                    let grant = store
                        .acquire(&Claim::new(namespace, 32, TTL))
                        .unwrap_or_else(|e| panic!("holder {holder}: {e}"));
                    (holder, grant, asked.elapsed())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a holder panicked")).collect()
    });
    let slowest = grants.iter().map(|(_, _, took)| *took).max().unwrap_or_default();
    eprintln!("32 holders acquired in {:?} (slowest acquisition {slowest:?})", began.elapsed());

    let workers: BTreeSet<u64> = grants.iter().map(|(_, grant, _)| grant.worker).collect();
    assert_eq!(workers, (0..32).collect(), "32 holders must hold 32 distinct worker IDs");
    let tokens: BTreeSet<&str> = grants.iter().map(|(_, grant, _)| grant.token.as_str()).collect();
    assert_eq!(tokens.len(), HOLDERS, "every acquisition has its own token");

    match stores[0].acquire(&Claim::new(namespace, 32, TTL)) {
        Err(err @ LeaseError::NoFreeWorker { .. }) => assert_eq!(
            err.to_string(),
            format!("no free worker ID in namespace \"{namespace}\": all 32 (0..32) are leased")
        ),
        other => panic!("the 33rd holder must find no free worker ID, got {other:?}"),
    }

    // One holder records a high water, then releases with a higher one.
    let (holder, released, _) = &grants[7];
    let store = &stores[holder % stores.len()];
    store.renew(namespace, released, TTL, HIGH_WATER).expect("renewing a live lease");
    store.release(namespace, released, HIGH_WATER + 7).expect("releasing a live lease");
    lost(store.renew(namespace, released, TTL, HIGH_WATER), namespace, released.worker);

    let again = stores[1 % stores.len()].acquire(&Claim::new(namespace, 32, TTL)).expect("the released ID is free");
    assert_eq!(again.worker, released.worker, "the only free ID is the released one");
    assert_eq!(again.previous_high_water_ms, Some(HIGH_WATER + 7), "the new holder starts after the old one");
    assert!(again.fence > released.fence, "fence {} must exceed {}", again.fence, released.fence);
    assert_ne!(again.token, released.token);

    for (holder, grant, _) in grants.iter().filter(|(_, grant, _)| grant.worker != released.worker) {
        stores[holder % stores.len()].release(namespace, grant, HIGH_WATER).expect("releasing");
    }
    stores[0].release(namespace, &again, HIGH_WATER).expect("releasing");
}

/// Renewals raise the high water and never lower it; the release replaces it with the final
/// value (the holder has stopped, and its renewals recorded deadlines beyond its last ID); a
/// first holder sees none.
pub fn high_water_rises_until_the_release<S: LeaseStore>(store: &S, namespace: &str) {
    let first = store.acquire(&Claim::new(namespace, 1, TTL)).expect("acquiring");
    assert_eq!(first.previous_high_water_ms, None, "no holder came before");
    store.renew(namespace, &first, TTL, HIGH_WATER + 100).expect("renewing");
    store.renew(namespace, &first, TTL, HIGH_WATER).expect("renewing with a lower high water");
    let lapsed = store.acquire(&Claim::new(namespace, 1, TTL));
    assert!(matches!(lapsed, Err(LeaseError::NoFreeWorker { .. })), "{lapsed:?}");
    store.release(namespace, &first, HIGH_WATER + 50).expect("releasing");
    let second = store.acquire(&Claim::new(namespace, 1, TTL)).expect("acquiring again");
    assert_eq!(second.previous_high_water_ms, Some(HIGH_WATER + 50), "the release's final value");
    assert!(second.fence > first.fence);
    store.release(namespace, &second, HIGH_WATER + 200).expect("releasing");
    let third = store.acquire(&Claim::new(namespace, 1, TTL)).expect("acquiring a third time");
    assert_eq!(third.previous_high_water_ms, Some(HIGH_WATER + 200));
    assert!(third.fence > second.fence);
    store.release(namespace, &third, HIGH_WATER).expect("releasing");
}

/// `list` shows every worker ID the store has a record of, in order: the live leases with this
/// process as their holder, their fences and the time left (`None` where the store ties a
/// lease to a session, `counts_time` false), a released one free with its final high water;
/// another namespace's leases do not show.
pub fn the_leases_are_listed<S: LeaseStore>(store: &S, namespace: &str, counts_time: bool) {
    assert_eq!(store.list(namespace).expect("listing an empty namespace"), Vec::<WorkerRecord>::new());
    let take = |namespace: &str| store.acquire(&Claim::new(namespace, 4, TTL)).expect("acquiring");
    let (renewed, released, fresh) = (take(namespace), take(namespace), take(namespace));
    let other_namespace = format!("{namespace}-other");
    let other = take(&other_namespace);
    store.renew(namespace, &renewed, TTL, HIGH_WATER + 1).expect("renewing");
    store.release(namespace, &released, HIGH_WATER + 2).expect("releasing");

    let records = store.list(namespace).expect("listing");
    let mut workers: Vec<u64> = [renewed.worker, released.worker, fresh.worker].into();
    workers.sort_unstable();
    assert_eq!(records.iter().map(|r| r.worker).collect::<Vec<_>>(), workers, "{records:?}");
    let record = |worker: u64| records.iter().find(|r| r.worker == worker).expect("listed");
    let me = format!(":{}", std::process::id());
    for (grant, high_water) in [(&renewed, Some(HIGH_WATER + 1)), (&fresh, None)] {
        let listed = record(grant.worker);
        assert!(listed.leased, "{listed:?}");
        assert_eq!(listed.fence, Some(grant.fence), "{listed:?}");
        assert_eq!(listed.high_water_ms, high_water, "{listed:?}");
        let holder = listed.holder.as_deref().unwrap_or_else(|| panic!("no holder recorded: {listed:?}"));
        assert!(holder.ends_with(&me) && holder.len() > me.len(), "holder {holder:?} is not host{me}");
        match listed.expires_in {
            // etcd counts whole seconds.
            Some(left) => assert!(counts_time && left <= TTL && left > TTL - Duration::from_secs(10), "{listed:?}"),
            None => assert!(!counts_time, "no time left given: {listed:?}"),
        }
    }
    let free = record(released.worker);
    assert!(!free.leased && free.holder.is_none() && free.fence.is_none() && free.expires_in.is_none(), "{free:?}");
    assert_eq!(free.high_water_ms, Some(HIGH_WATER + 2), "{free:?}");

    let others = store.list(&other_namespace).expect("listing");
    assert_eq!(others.iter().map(|r| (r.worker, r.fence)).collect::<Vec<_>>(), [(other.worker, Some(other.fence))]);
    assert!(matches!(store.list("bad namespace"), Err(LeaseError::BadNamespace { .. })));
    for (namespace, grant) in [(namespace, &renewed), (namespace, &fresh), (other_namespace.as_str(), &other)] {
        store.release(namespace, grant, HIGH_WATER).expect("releasing");
    }
}

/// A grant with another token or fence holds nothing: its renewal and release are `Lost`, and
/// the real holder keeps the lease. A released grant holds nothing either.
pub fn a_stale_token_is_lost<S: LeaseStore>(store: &S, namespace: &str) {
    let grant = store.acquire(&Claim::new(namespace, 32, TTL)).expect("acquiring");
    let forged_token = Grant { token: "0123456789abcdef0123456789abcdef".into(), ..grant.clone() };
    let forged_fence = Grant { fence: grant.fence + 1, ..grant.clone() };
    for forged in [&forged_token, &forged_fence] {
        lost(store.renew(namespace, forged, TTL, HIGH_WATER), namespace, grant.worker);
        lost(store.release(namespace, forged, HIGH_WATER), namespace, grant.worker);
    }
    let err = store.renew(namespace, &forged_token, TTL, HIGH_WATER).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "the lease on worker ID {} in namespace \"{namespace}\" is lost: it expired or another holder took it",
            grant.worker
        )
    );
    store.renew(namespace, &grant, TTL, HIGH_WATER).expect("the real holder still holds it");
    store.release(namespace, &grant, HIGH_WATER).expect("releasing");
    lost(store.renew(namespace, &grant, TTL, HIGH_WATER), namespace, grant.worker);
    lost(store.release(namespace, &grant, HIGH_WATER), namespace, grant.worker);
}

/// A lease that is not renewed expires: until then nobody else gets the worker ID, after it a
/// new holder does, with a higher fence and the old holder's high water; the old holder's
/// renewal and release are then `Lost` and leave the new lease alone.
pub fn an_expired_lease_is_taken_over<S: LeaseStore>(old_store: &S, new_store: &S, namespace: &str) {
    let short = Duration::from_millis(300);
    let old = old_store.acquire(&Claim::new(namespace, 1, short)).expect("acquiring");
    old_store.renew(namespace, &old, short, HIGH_WATER).expect("renewing");
    assert!(
        matches!(new_store.acquire(&Claim::new(namespace, 1, TTL)), Err(LeaseError::NoFreeWorker { .. })),
        "a live lease is not taken"
    );
    std::thread::sleep(short + Duration::from_millis(200));
    let new = new_store.acquire(&Claim::new(namespace, 1, TTL)).expect("an expired lease is free");
    assert_eq!(new.worker, old.worker);
    assert!(new.fence > old.fence, "fence {} must exceed {}", new.fence, old.fence);
    assert_eq!(new.previous_high_water_ms, Some(HIGH_WATER));
    lost(old_store.renew(namespace, &old, TTL, HIGH_WATER + 1), namespace, old.worker);
    lost(old_store.release(namespace, &old, HIGH_WATER + 1), namespace, old.worker);
    new_store.renew(namespace, &new, TTL, HIGH_WATER + 2).expect("the new holder keeps it");
    new_store.release(namespace, &new, HIGH_WATER + 2).expect("releasing");
    let next = new_store.acquire(&Claim::new(namespace, 1, TTL)).expect("acquiring");
    assert_eq!(next.previous_high_water_ms, Some(HIGH_WATER + 2), "the old holder's late release changed nothing");
    new_store.release(namespace, &next, HIGH_WATER).expect("releasing");
}

/// The store's clock, read alone and at acquisition, is within 1 s of this machine's.
pub fn the_store_clock_is_close<S: LeaseStore>(store: &S, namespace: &str) {
    let store_ms = store.now_ms().expect("reading the store's clock");
    let local_ms = local_now_ms();
    assert!((store_ms - local_ms).abs() < 1_000, "store {store_ms} vs local {local_ms}");
    let grant = store.acquire(&Claim::new(namespace, 4, TTL)).expect("acquiring");
    let local_ms = local_now_ms();
    assert!((grant.store_now_ms - local_ms).abs() < 1_000, "store {} vs local {local_ms}", grant.store_now_ms);
    store.release(namespace, &grant, grant.store_now_ms).expect("releasing");
}

/// Namespaces that could escape a key or a statement, spaces and TTLs out of range: refused
/// before anything is sent, each with its own error.
pub fn bad_arguments_are_refused<S: LeaseStore>(store: &S, namespace: &str) {
    let long = "n".repeat(65);
    let grant = Grant {
        worker: 0,
        token: "0".repeat(32),
        fence: 1,
        previous_high_water_ms: None,
        store_now_ms: 0,
        namespace_since_ms: None,
    };
    for hostile in ["", long.as_str(), "a b", "shop*", "{shop}", "x'; DROP TABLE users; --", "shop\r\nDEL x", "café"] {
        for result in [
            store.acquire(&Claim::new(hostile, 32, TTL)).map(drop),
            store.renew(hostile, &grant, TTL, 0),
            store.release(hostile, &grant, 0),
        ] {
            match result {
                Err(LeaseError::BadNamespace { namespace, reason }) => {
                    assert_eq!(namespace, hostile);
                    assert!(!reason.is_empty());
                }
                other => panic!("{hostile:?} must be refused, got {other:?}"),
            }
        }
    }
    for space in [0, (1 << 22) + 1] {
        assert!(
            matches!(store.acquire(&Claim::new(namespace, space, TTL)), Err(LeaseError::BadSpace { .. })),
            "space {space}"
        );
    }
    for ttl in [Duration::ZERO, Duration::from_secs(24 * 60 * 60 + 1)] {
        assert!(
            matches!(store.acquire(&Claim::new(namespace, 32, ttl)), Err(LeaseError::BadTtl { .. })),
            "ttl {ttl:?}"
        );
        assert!(matches!(store.renew(namespace, &grant, ttl, 0), Err(LeaseError::BadTtl { .. })), "ttl {ttl:?}");
    }
    // The widest space is accepted, and the scan stops at the first free ID.
    let wide = store.acquire(&Claim::new(namespace, 1 << 22, TTL)).expect("acquiring in the widest space");
    assert!(wide.worker < 1 << 22);
    store.release(namespace, &wide, 0).expect("releasing");
}

/// A space wider than what an acquisition reads in one round trip (1024 IDs).
pub const WIDE_SPACE: u64 = 2_500;

/// The one free worker ID of [`WIDE_SPACE`] in [`the_last_free_id_is_found`].
pub const FREE: u64 = 1_500;

/// After the caller leased every worker ID of [`WIDE_SPACE`] but [`FREE`] (with a holder of
/// its own, for an hour), an acquisition takes `FREE` and the next finds none, each in a few
/// round trips rather than one per worker ID.
pub fn the_last_free_id_is_found<S: LeaseStore>(store: &S, namespace: &str) {
    let began = Instant::now();
    let grant = store.acquire(&Claim::new(namespace, WIDE_SPACE, TTL)).expect("acquiring the last free ID");
    assert_eq!(grant.worker, FREE);
    let refused = store.acquire(&Claim::new(namespace, WIDE_SPACE, TTL));
    let took = began.elapsed();
    // About 10 ms against local servers; a statement per worker ID took seconds.
    assert!(took < Duration::from_secs(1), "two scans of {WIDE_SPACE} IDs took {took:?}");
    match refused {
        Err(err @ LeaseError::NoFreeWorker { .. }) => assert_eq!(
            err.to_string(),
            format!("no free worker ID in namespace \"{namespace}\": all 2500 (0..2500) are leased")
        ),
        other => panic!("a full space must be refused, got {other:?}"),
    }
}

/// Namespaces are compared byte for byte: `x_A` and `x_a` are two namespaces, whatever the
/// store's collation.
pub fn namespaces_differ_by_case<S: LeaseStore>(store: &S, namespace: &str) {
    let upper = format!("{namespace}_A");
    let lower = format!("{namespace}_a");
    let a = store.acquire(&Claim::new(&upper, 1, TTL)).expect("acquiring in one namespace");
    let b = store.acquire(&Claim::new(&lower, 1, TTL)).expect("acquiring in the other");
    assert_eq!((a.worker, b.worker), (0, 0));
    store.release(&upper, &a, HIGH_WATER).expect("releasing");
    store.release(&lower, &b, HIGH_WATER).expect("releasing");
}

/// Asserts `result` is a `Timeout` that came within `bound` of `began`, plus at most 300 ms of
/// scheduling: a call that waited out the bound twice fails.
pub fn timed_out<T: std::fmt::Debug>(result: Result<T, LeaseError>, began: Instant, bound: Duration) {
    let took = began.elapsed();
    match result {
        Err(LeaseError::Timeout { after, .. }) => assert_eq!(after, bound),
        other => panic!("expected a timeout after {bound:?}, got {other:?} after {took:?}"),
    }
    assert!(took < bound + Duration::from_millis(300), "the timeout of {bound:?} took {took:?}");
}

/// Fencing numbers follow the store's clock in microseconds, unless the last one (or the
/// claim's) is higher, and grow with every acquisition; the preferred worker ID is taken when
/// it is free, another when it is not.
pub fn fences_follow_the_clock_and_the_claim<S: LeaseStore>(store: &S, namespace: &str) {
    // The store's clock and ours agree within two seconds on this machine.
    let skew_us = 2_000_000;
    let before_us = local_now_ms() * 1000;
    let first = store.acquire(&Claim::new(namespace, 32, TTL).prefer(7)).expect("acquiring");
    let after_us = local_now_ms() * 1000;
    assert_eq!(first.worker, 7, "the preferred worker ID, free");
    let fence = i64::try_from(first.fence).expect("a fence fits an i64");
    assert!(
        fence >= before_us - skew_us && fence <= after_us + skew_us,
        "the fence {fence} is the store's clock in µs ({before_us}..{after_us})"
    );
    let ahead = first.fence + 1_000_000_000_000;
    let second = store.acquire(&Claim::new(namespace, 32, TTL).prefer(7).fence_above(ahead)).expect("acquiring");
    assert_ne!(second.worker, 7, "the preferred worker ID is held: another");
    assert!(second.fence > ahead, "above the claim's fence: {} <= {ahead}", second.fence);
    store.release(namespace, &first, HIGH_WATER).expect("releasing");
    let third = store.acquire(&Claim::new(namespace, 32, TTL).prefer(7)).expect("acquiring");
    assert_eq!(third.worker, 7, "free again");
    assert!(third.fence > first.fence, "never backwards for a worker ID");
    assert_eq!(third.previous_high_water_ms, Some(HIGH_WATER));
    store.release(namespace, &second, HIGH_WATER).expect("releasing");
    store.release(namespace, &third, HIGH_WATER).expect("releasing");
}

/// A store that lost its records of a namespace (`lose` deletes them, as a restart without
/// persistence, a flush or an emptied table would) grants its worker IDs without a high
/// water, so the holder waits out any earlier one, and with a fence above every earlier one;
/// what holders record afterwards is vouched for again.
pub fn a_store_that_lost_its_data_vouches_for_nothing<S: LeaseStore>(store: &S, namespace: &str, lose: impl Fn()) {
    let first = store.acquire(&Claim::new(namespace, 1, TTL)).expect("acquiring");
    assert_eq!(first.previous_high_water_ms, None, "never leased before");
    store.renew(namespace, &first, TTL, HIGH_WATER).expect("renewing");
    lose();
    let second = store.acquire(&Claim::new(namespace, 1, TTL)).expect("the lost lease is free");
    assert_eq!(second.previous_high_water_ms, None, "after the loss the store vouches for nothing");
    assert!(second.fence > first.fence, "the fence never goes backwards: {} <= {}", second.fence, first.fence);
    lost(store.renew(namespace, &first, TTL, HIGH_WATER), namespace, first.worker);
    store.release(namespace, &second, HIGH_WATER + 5).expect("releasing");
    let third = store.acquire(&Claim::new(namespace, 1, TTL)).expect("acquiring");
    assert_eq!(third.previous_high_water_ms, Some(HIGH_WATER + 5), "recorded since the loss");
    assert!(third.fence > second.fence);
    store.release(namespace, &third, HIGH_WATER).expect("releasing");
}

/// [`an_expired_lease_is_taken_over`] for stores whose leases expire late but never early
/// (etcd counts whole seconds and reaps expired leases every half second; ZooKeeper expires
/// sessions by ticks): a lease of `ttl` that is not renewed is held for at least `ttl` after
/// its last renewal, then taken over within `bound`, with a higher fence and the old holder's
/// high water; the old holder's renewal and release are then `Lost`.
pub fn an_expired_lease_is_taken_over_within<S: LeaseStore>(
    old_store: &S,
    new_store: &S,
    namespace: &str,
    ttl: Duration,
    bound: Duration,
) {
    let old = old_store.acquire(&Claim::new(namespace, 1, ttl)).expect("acquiring");
    let renewed = Instant::now();
    old_store.renew(namespace, &old, ttl, HIGH_WATER).expect("renewing");
    let new = loop {
        match new_store.acquire(&Claim::new(namespace, 1, TTL)) {
            Ok(grant) => break grant,
            Err(LeaseError::NoFreeWorker { .. }) => {
                assert!(renewed.elapsed() < bound, "the lease did not expire within {bound:?}");
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(other) => panic!("acquiring: {other}"),
        }
    };
    assert!(renewed.elapsed() >= ttl, "taken {:?} after the renewal, before the TTL {ttl:?}", renewed.elapsed());
    assert_eq!(new.worker, old.worker);
    assert!(new.fence > old.fence, "fence {} must exceed {}", new.fence, old.fence);
    assert_eq!(new.previous_high_water_ms, Some(HIGH_WATER));
    lost(old_store.renew(namespace, &old, ttl, HIGH_WATER + 1), namespace, old.worker);
    lost(old_store.release(namespace, &old, HIGH_WATER + 1), namespace, old.worker);
    new_store.renew(namespace, &new, TTL, HIGH_WATER + 2).expect("the new holder keeps it");
    new_store.release(namespace, &new, HIGH_WATER + 2).expect("releasing");
    let next = new_store.acquire(&Claim::new(namespace, 1, TTL)).expect("acquiring");
    assert_eq!(next.previous_high_water_ms, Some(HIGH_WATER + 2), "the old holder's late release changed nothing");
    new_store.release(namespace, &next, HIGH_WATER).expect("releasing");
}
