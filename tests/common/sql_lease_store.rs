//! The SQL lease store's tests, written once for PostgreSQL and MySQL/MariaDB: each test
//! file calls [`sql_lease_store_tests!`] with its database's pool type, server URL and the
//! few SQL fragments that differ, and gets the same test functions, each in a table of its
//! own, dropped at the end: the conformance suite (`common/conformance.rs`) and its planted
//! bugs, the table's columns, a table of an earlier version refused, a row locked by another
//! session (the write gives up within the store's timeout), a creation that loses a race to
//! another session (the write leaves nothing), a write the server refuses, one connection
//! for the calls, a server that never answers, a server that is down. Include with
//! `#[macro_use] #[path = "../common/sql_lease_store.rs"] mod sql_lease_store;`, beside
//! `conformance`, `planted`, `proxy` and `servers`.

/// The test functions of the SQL lease store for one database.
///
/// - `pool`: sqlx's pool type for the database;
/// - `url`: the function giving the server's URL, `None` to skip;
/// - `name`: the store's name in the suite's messages;
/// - `placeholders`: the first and second bind parameters' spellings;
/// - `columns_query`: the table's columns and their types, the table name bound;
/// - `columns`, `column_type`: the documented columns, and how a reported type is read;
/// - `old_table`: the lease table of the earlier version, `{}` for its name;
/// - `incarnation`: the incarnation's prefix on this server;
/// - `silent_url`, `down_url`, `down_shown`: URLs for a socket that never answers and a
///   port nothing listens on (`{}` for the address), and how the error shows the latter.
macro_rules! sql_lease_store_tests {
    (
        pool: $pool:ty,
        url: $url:path,
        name: $name:literal,
        placeholders: ($p1:literal, $p2:literal),
        columns_query: $columns_query:literal,
        columns: $columns:expr,
        column_type: $column_type:expr,
        old_table: $old_table:literal,
        incarnation: $incarnation:literal,
        silent_url: $silent_url:literal,
        down_url: $down_url:literal,
        down_shown: $down_shown:literal $(,)?
    ) => {
        /// A table of this test's own, dropped when this is dropped (also when the test fails), and
        /// a runtime and pool of the test's own for looking at it.
        struct Table {
            url: String,
            name: String,
            runtime: Runtime,
            pool: $pool,
        }

        impl Table {
            /// A store of the table: 10 s for each call, as the tests run beside each other
            /// (each creating its table) on a machine that may be loaded.
            fn store(&self) -> SqlLeaseStore {
                self.store_with(Duration::from_secs(10))
            }

            fn store_with(&self, timeout: Duration) -> SqlLeaseStore {
                SqlLeaseStore::builder(&self.url).table(&self.name).timeout(timeout).connect().expect("connecting")
            }

            fn execute(&self, sql: String) -> u64 {
                let done = self.runtime.block_on(sqlx::query(AssertSqlSafe(sql.clone())).execute(&self.pool));
                done.unwrap_or_else(|e| panic!("{sql}: {e}")).rows_affected()
            }
        }

        impl Drop for Table {
            fn drop(&mut self) {
                let drop_table = AssertSqlSafe(format!("DROP TABLE IF EXISTS {}", self.name));
                let _ = self.runtime.block_on(sqlx::query(drop_table).execute(&self.pool));
            }
        }

        /// Deletes rows of the test's table behind the store's back.
        impl Faults for Table {
            fn delete(&self, namespace: &str, slot: Slot) {
                let slot = match slot {
                    Slot::Marker => -1,
                    Slot::Worker(worker) => i64::try_from(worker).expect("a small worker ID"),
                };
                let delete =
                    AssertSqlSafe(format!("DELETE FROM {} WHERE namespace = {} AND slot = {}", self.name, $p1, $p2));
                self.runtime
                    .block_on(sqlx::query(delete).bind(namespace).bind(slot).execute(&self.pool))
                    .expect("deleting a row");
            }
        }

        /// A name of this process and test.
        fn unique(test: &str) -> String {
            format!("t{}_{test}", std::process::id())
        }

        /// The server's URL and a table of this test; `None` to skip.
        fn setup(test: &str) -> Option<Table> {
            let url = $url()?;
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
            let pool = runtime.block_on(<$pool>::connect(&url)).expect("connecting");
            Some(Table { url, name: unique(test), runtime, pool })
        }

        fn subject_with<'a>(table: &'a Table, open: &'a (dyn Fn() -> Arc<dyn LeaseStore> + Sync)) -> Subject<'a> {
            Subject { name: $name, open, faults: table, prefix: unique("c"), has_clock: true }
        }

        #[test]
        fn the_store_passes_the_conformance_suite() {
            let Some(table) = setup("conformance") else { return };
            let open = || Arc::new(table.store()) as Arc<dyn LeaseStore>;
            run_all(&subject_with(&table, &open)).unwrap_or_else(|failures| panic!("{failures}"));
            // The incarnation names the server, and two stores read the same one.
            let read = |store: SqlLeaseStore| store.read("shop", &Query::workers(0..1)).expect("a read").incarnation;
            let incarnation = read(table.store());
            assert!(incarnation.starts_with($incarnation), "{incarnation}");
            assert_eq!(read(table.store()), incarnation);
        }

        #[test]
        fn each_planted_bug_fails_its_case() {
            let Some(table) = setup("planted") else { return };
            let open = || Arc::new(table.store()) as Arc<dyn LeaseStore>;
            let bugs = [
                (Bug::CasIgnoresExpect, "a_write_is_compare_and_set"),
                (Bug::CreateOverwrites, "a_slot_is_created_only_if_absent"),
                (Bug::WriteNotAtomic, "two_slots_are_written_together_or_not_at_all"),
                (Bug::NamespaceFolded, "namespaces_are_apart"),
                (Bug::RangeEndInclusive, "reads_take_ranges_and_say_the_highest"),
                (Bug::ValuesTrimmed, "values_are_kept_byte_for_byte"),
            ];
            planted_bugs_fail(&subject_with(&table, &open), &bugs).unwrap_or_else(|failure| panic!("{failure}"));
        }

        #[test]
        fn the_table_is_the_documented_one() {
            let Some(table) = setup("ddl") else { return };
            let store = table.store();
            drop(table.store()); // a second `CREATE TABLE IF NOT EXISTS` is harmless
            let columns: Vec<(String, String)> = table
                .runtime
                .block_on(sqlx::query_as($columns_query).bind(&table.name).fetch_all(&table.pool))
                .expect("reading the columns");
            let expected: [(&str, &str); 3] = $columns;
            let column_type: fn(String) -> String = $column_type;
            let columns: Vec<(String, String)> = columns.into_iter().map(|(c, t)| (c, column_type(t))).collect();
            assert_eq!(columns, expected.map(|(c, t)| (c.to_owned(), t.to_owned())));

            // One row per slot: the marker at -1, worker IDs at their number, values as written.
            let ops = [Cas::new(Slot::Worker(3), None, "r|3"), Cas::new(Slot::Marker, None, "m|1")];
            assert_eq!(store.write("shop", &ops).expect("writing"), Written::Done);
            let rows: Vec<(String, i64)> = table
                .runtime
                .block_on(
                    sqlx::query_as(AssertSqlSafe(format!("SELECT namespace, slot FROM {} ORDER BY slot", table.name)))
                        .fetch_all(&table.pool),
                )
                .expect("reading the rows");
            assert_eq!(rows, [("shop".to_owned(), -1), ("shop".to_owned(), 3)]);
        }

        #[test]
        fn a_table_of_the_earlier_version_is_refused_naming_the_statement() {
            let Some(table) = setup("old") else { return };
            table.execute(format!($old_table, table.name));
            let err = SqlLeaseStore::builder(&table.url).table(&table.name).connect().unwrap_err();
            let LeaseError::BadTable { table: named, reason } = &err else { panic!("{err:?}") };
            assert_eq!(named, &table.name);
            assert!(reason.contains(&format!("CREATE TABLE IF NOT EXISTS {} (", table.name)), "{err}");
            assert!(reason.contains("value "), "{err}");
        }

        #[test]
        fn a_locked_row_times_out_within_the_bound() {
            let Some(table) = setup("locked") else { return };
            let bound = Duration::from_millis(500);
            let store = table.store_with(bound);
            assert_eq!(store.write("shop", &[Cas::new(Slot::Worker(1), None, "a")]).expect("writing"), Written::Done);

            // Another session holds the row. Dropping its transaction needs the test's runtime.
            let _context = table.runtime.enter();
            let mut locker = table.runtime.block_on(table.pool.begin()).expect("a transaction");
            let lock = AssertSqlSafe(format!(
                "SELECT value FROM {} WHERE namespace = {} AND slot >= 0 FOR UPDATE",
                table.name, $p1
            ));
            let rows = table.runtime.block_on(sqlx::query(lock).bind("shop").fetch_all(&mut *locker));
            assert_eq!(rows.expect("locking the rows").len(), 1);

            let began = Instant::now();
            let written = store.write("shop", &[Cas::new(Slot::Worker(1), Some("a"), "b")]);
            assert!(matches!(written, Err(LeaseError::Timeout { .. } | LeaseError::Store { .. })), "{written:?}");
            assert!(began.elapsed() < bound * 3, "gave up after {:?}", began.elapsed());
            // A read takes no lock: the store still answers.
            let read = store.read("shop", &Query::workers(0..4)).expect("reading beside a locked row");
            assert_eq!(read.record(1), Some("a"));

            // Timed out is not undone: the server may still run the write once the row is free.
            table.runtime.block_on(locker.rollback()).expect("unlocking");
            let read = store.read("shop", &Query::workers(0..4)).expect("reading");
            assert!(matches!(read.record(1), Some("a" | "b")), "{read:?}");
        }

        /// Another session creates worker 9's row, and commits while the write waits on it:
        /// the write's creation of that row conflicts after its other op could be written,
        /// and the write leaves nothing behind.
        #[test]
        fn a_creation_that_loses_a_race_leaves_nothing_written() {
            let Some(table) = setup("race") else { return };
            let store = table.store();
            assert_eq!(store.write("shop", &[Cas::new(Slot::Marker, None, "m1")]).expect("writing"), Written::Done);
            for ops in [
                [Cas::new(Slot::Worker(8), None, "mine"), Cas::new(Slot::Worker(9), None, "mine")],
                [Cas::new(Slot::Marker, Some("m1"), "m2"), Cas::new(Slot::Worker(9), None, "mine")],
            ] {
                table.execute(format!("DELETE FROM {} WHERE slot = 9", table.name));
                // Dropping the other session's transaction needs the test's runtime.
                let _context = table.runtime.enter();
                let mut other = table.runtime.block_on(table.pool.begin()).expect("a transaction");
                let create = AssertSqlSafe(format!(
                    "INSERT INTO {} (namespace, slot, value) VALUES ({}, 9, 'theirs')",
                    table.name, $p1
                ));
                table.runtime.block_on(sqlx::query(create).bind("shop").execute(&mut *other)).expect("creating");
                let written = std::thread::scope(|scope| {
                    let write = scope.spawn(|| store.write("shop", &ops));
                    std::thread::sleep(Duration::from_millis(500));
                    table.runtime.block_on(other.commit()).expect("committing");
                    write.join().expect("the write")
                });
                assert_eq!(written.expect("writing"), Written::Conflict, "{ops:?}");
                let read = store.read("shop", &Query::workers(0..16)).expect("reading");
                assert_eq!(read.marker.as_deref(), Some("m1"), "{ops:?}: {read:?}");
                assert_eq!(read.records, [(9, "theirs".to_owned())], "{ops:?}: {read:?}");
            }
        }

        /// A write the server refuses for another reason than a conflict (here its table,
        /// dropped behind the store's back) fails, and is never told as a conflict, which
        /// would say that nothing of it was written.
        #[test]
        fn a_write_the_server_refuses_is_an_error_not_a_conflict() {
            let Some(table) = setup("dropped") else { return };
            let store = table.store();
            table.execute(format!("DROP TABLE {}", table.name));
            let written = store.write("shop", &[Cas::new(Slot::Worker(1), None, "a")]);
            assert!(matches!(written, Err(LeaseError::Store { .. })), "{written:?}");
        }

        /// One connection serves every call that succeeds: each call is one round trip, not
        /// a connection's several (TCP, TLS, the login).
        #[test]
        fn calls_share_one_connection() {
            let Some(table) = setup("connections") else { return };
            let port = if table.url.starts_with("postgres") { 5432 } else { 3306 };
            let (proxy, url) = crate::proxy::Proxy::for_url(&table.url, port).expect("a proxy");
            let store = SqlLeaseStore::builder(&url).table(&table.name).connect().expect("connecting");
            // Creating the table took a connection of its own.
            let before = proxy.accepted();
            store.write("shop", &[Cas::new(Slot::Worker(1), None, "a")]).expect("writing");
            for _ in 0..3 {
                assert_eq!(store.read("shop", &Query::workers(0..4)).expect("reading").record(1), Some("a"));
            }
            assert_eq!(proxy.accepted(), before + 1, "connections opened for 4 calls");
        }

        #[test]
        fn a_server_that_never_answers_times_out() {
            // A socket that accepts connections and never replies.
            let silent = TcpListener::bind("127.0.0.1:0").expect("binding");
            let url = format!($silent_url, silent.local_addr().expect("an address"));
            let bound = Duration::from_millis(300);
            let began = Instant::now();
            let err = SqlLeaseStore::builder(&url).timeout(bound).connect().unwrap_err();
            assert!(matches!(err, LeaseError::Timeout { .. }), "{err:?}");
            assert!(began.elapsed() < bound * 3, "gave up after {:?}", began.elapsed());
        }

        #[test]
        fn a_server_that_is_down_is_a_store_error() {
            let free = TcpListener::bind("127.0.0.1:0").expect("binding");
            let url = format!($down_url, free.local_addr().expect("an address"));
            drop(free);
            let err = SqlLeaseStore::connect(&url).unwrap_err();
            assert!(matches!(err, LeaseError::Store { .. }), "{err:?}");
            let message = err.to_string();
            assert!(message.contains($down_shown), "{message}");
            assert!(!message.contains("secret"), "{message}");
            assert!(std::error::Error::source(&err).is_some(), "the driver's error is kept");
        }

        #[test]
        fn a_store_may_be_dropped_inside_an_async_runtime() {
            let Some(table) = setup("drop") else { return };
            let store = table.store();
            store.write("shop", &[Cas::new(Slot::Marker, None, "m")]).expect("writing");
            // Neither blocks nor panics, though dropping a runtime inside another one would.
            table.runtime.block_on(async move { drop(store) });
            table.store().read("shop", &Query::workers(0..1)).expect("another store works");
        }
    };
}
