//! The SQL lease store's tests, written once for PostgreSQL and MySQL/MariaDB: each test
//! file calls [`sql_lease_store_tests!`] with its database's pool type, server URL and the
//! few SQL fragments that differ, and gets the same test functions (each in a table of its
//! own, dropped at the end): the store's contract from `common/lease_store.rs`, the table's
//! columns, a row locked by another session (the renewal gives up within the store's
//! timeout), a server that never answers, a server that is down. Include with
//! `#[macro_use] #[path = "common/sql_lease_store.rs"] mod sql_lease_store;`, beside
//! `lease_store` and `servers`.

/// The test functions of the SQL lease store for one database.
///
/// - `pool`: sqlx's pool type for the database;
/// - `url`: the function giving the server's URL, `None` to skip;
/// - `placeholder`: the first bind parameter's spelling;
/// - `an_hour_from_now`: SQL for an hour from the server's present, in `lease_until`;
/// - `columns_query`: the table's columns and their types, the table name bound;
/// - `columns`, `column_type`: the documented columns, and how a reported type is read;
/// - `silent_url`, `down_url`, `down_shown`: URLs for a socket that never answers and a
///   port nothing listens on (`{}` for the address), and how the error shows the latter.
macro_rules! sql_lease_store_tests {
    (
        pool: $pool:ty,
        url: $url:path,
        placeholder: $placeholder:literal,
        an_hour_from_now: $an_hour_from_now:literal,
        columns_query: $columns_query:literal,
        columns: $columns:expr,
        column_type: $column_type:expr,
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
            fn store(&self) -> SqlLeaseStore {
                self.store_with(Duration::from_secs(2))
            }

            fn store_with(&self, timeout: Duration) -> SqlLeaseStore {
                SqlLeaseStore::builder(&self.url).table(&self.name).timeout(timeout).connect().expect("connecting")
            }
        }

        impl Drop for Table {
            fn drop(&mut self) {
                let drop_table = AssertSqlSafe(format!("DROP TABLE IF EXISTS {}", self.name));
                let _ = self.runtime.block_on(sqlx::query(drop_table).execute(&self.pool));
            }
        }

        /// The server's URL and a table and namespace of this test; `None` to skip.
        fn setup(test: &str) -> Option<(Table, String)> {
            let url = $url()?;
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
            let pool = runtime.block_on(<$pool>::connect(&url)).expect("connecting");
            let table = Table { url, name: unique(test), runtime, pool };
            Some((table, unique(test)))
        }

        #[test]
        fn thirty_two_holders_share_a_five_bit_space() {
            let Some((table, namespace)) = setup("holders") else { return };
            // Eight stores connecting at once to a table nobody created yet: each creates it.
            let stores: Vec<SqlLeaseStore> = std::thread::scope(|scope| {
                let handles: Vec<_> = (0..8).map(|_| scope.spawn(|| table.store())).collect();
                handles.into_iter().map(|h| h.join().expect("connecting")).collect()
            });
            lease_store::thirty_two_holders_share_a_five_bit_space(&stores, &namespace);
        }

        #[test]
        fn high_water_rises_until_the_release() {
            let Some((table, namespace)) = setup("hw") else { return };
            lease_store::high_water_rises_until_the_release(&table.store(), &namespace);
        }

        #[test]
        fn the_leases_are_listed() {
            let Some((table, namespace)) = setup("list") else { return };
            lease_store::the_leases_are_listed(&table.store(), &namespace, true);
        }

        #[test]
        fn a_stale_token_is_lost() {
            let Some((table, namespace)) = setup("stale") else { return };
            lease_store::a_stale_token_is_lost(&table.store(), &namespace);
        }

        #[test]
        fn an_expired_lease_is_taken_over() {
            let Some((table, namespace)) = setup("expired") else { return };
            lease_store::an_expired_lease_is_taken_over(&table.store(), &table.store(), &namespace);
        }

        #[test]
        fn fences_follow_the_clock_and_the_claim() {
            let Some((table, namespace)) = setup("fences") else { return };
            lease_store::fences_follow_the_clock_and_the_claim(&table.store(), &namespace);
        }

        #[test]
        fn a_store_that_lost_its_data_vouches_for_nothing() {
            let Some((table, namespace)) = setup("loss") else { return };
            let lose = || {
                let delete = AssertSqlSafe(format!("DELETE FROM {}", table.name));
                table.runtime.block_on(sqlx::query(delete).execute(&table.pool)).expect("emptying the table");
            };
            lease_store::a_store_that_lost_its_data_vouches_for_nothing(&table.store(), &namespace, lose);
        }

        #[test]
        fn the_store_clock_is_close() {
            let Some((table, namespace)) = setup("clock") else { return };
            lease_store::the_store_clock_is_close(&table.store(), &namespace);
        }

        #[test]
        fn bad_arguments_are_refused() {
            let Some((table, namespace)) = setup("bad") else { return };
            lease_store::bad_arguments_are_refused(&table.store(), &namespace);
        }

        #[test]
        fn namespaces_differ_by_case() {
            let Some((table, namespace)) = setup("case") else { return };
            lease_store::namespaces_differ_by_case(&table.store(), &namespace);
        }

        #[test]
        fn the_last_free_id_is_found() {
            let Some((table, namespace)) = setup("wide") else { return };
            let store = table.store();
            // Generated numbers and this test's own namespace: nothing to bind.
            let rows: Vec<String> = (0..lease_store::WIDE_SPACE)
                .filter(|&worker| worker != lease_store::FREE)
                .map(|worker| format!("('{namespace}', {worker}, 'another holder', 1, {})", $an_hour_from_now))
                .collect();
            let fill = AssertSqlSafe(format!(
                "INSERT INTO {} (namespace, worker_id, holder, fence, lease_until) VALUES {}",
                table.name,
                rows.join(", ")
            ));
            table.runtime.block_on(sqlx::query(fill).execute(&table.pool)).expect("filling the space");
            lease_store::the_last_free_id_is_found(&store, &namespace);
        }

        #[test]
        fn the_table_is_the_documented_one() {
            let Some((table, namespace)) = setup("ddl") else { return };
            let store = table.store();
            drop(table.store()); // a second `CREATE TABLE IF NOT EXISTS` is harmless
            let columns: Vec<(String, String)> = table
                .runtime
                .block_on(sqlx::query_as($columns_query).bind(&table.name).fetch_all(&table.pool))
                .expect("reading the columns");
            let expected: [(&str, &str); 6] = $columns;
            let column_type: fn(String) -> String = $column_type;
            let columns: Vec<(String, String)> = columns.into_iter().map(|(c, t)| (c, column_type(t))).collect();
            assert_eq!(columns, expected.map(|(c, t)| (c.to_owned(), t.to_owned())));

            // A release keeps the row, its fence and its high water for the next holder.
            let grant = store.acquire(&Claim::new(&namespace, 1, TTL)).expect("acquiring");
            store.release(&namespace, &grant, HIGH_WATER).expect("releasing");
            let row: (String, i64, Option<i64>) = table
                .runtime
                .block_on(
                    sqlx::query_as(AssertSqlSafe(format!(
                        "SELECT holder, fence, high_water_ms FROM {} WHERE namespace = {} AND worker_id = 0",
                        table.name, $placeholder
                    )))
                    .bind(&namespace)
                    .fetch_one(&table.pool),
                )
                .expect("reading the row");
            let (holder, fence, high_water) = row;
            assert_eq!((fence, high_water), (i64::try_from(grant.fence).expect("a small fence"), Some(HIGH_WATER)));
            // The holder column: the token's first 16 digits and this process's `host:pid`.
            let (token, name) = holder.split_once('/').expect("token/host:pid");
            assert_eq!(token, &grant.token[..16]);
            assert!(name.ends_with(&format!(":{}", std::process::id())) && holder.len() <= 64, "{holder}");
        }

        #[test]
        fn a_locked_row_times_out_within_the_bound() {
            let Some((table, namespace)) = setup("locked") else { return };
            let bound = Duration::from_millis(500);
            let store = table.store_with(bound);
            let live = store.acquire(&Claim::new(&namespace, 2, TTL)).expect("acquiring");
            let expired = store.acquire(&Claim::new(&namespace, 2, Duration::from_millis(300))).expect("acquiring");
            std::thread::sleep(Duration::from_millis(400));

            // Another session holds both rows. Dropping its transaction needs the test's runtime.
            let _context = table.runtime.enter();
            let mut locker = table.runtime.block_on(table.pool.begin()).expect("a transaction");
            let lock = AssertSqlSafe(format!(
                "SELECT holder FROM {} WHERE namespace = {} AND worker_id >= 0 FOR UPDATE",
                table.name, $placeholder
            ));
            let rows = table.runtime.block_on(sqlx::query(lock).bind(&namespace).fetch_all(&mut *locker));
            assert_eq!(rows.expect("locking the rows").len(), 2);

            let began = Instant::now();
            timed_out(store.renew(&namespace, &live, TTL, HIGH_WATER), began, bound);
            // The expired lease is free, but its row is locked.
            let began = Instant::now();
            timed_out(store.acquire(&Claim::new(&namespace, 2, TTL)), began, bound);
            // The clock needs no row: the store still answers.
            store.now_ms().expect("reading the clock beside a locked row");
            assert_ne!(live.worker, expired.worker);

            // Timed out is not undone: the server may still run the renewal and the acquisition once
            // the rows are free, so nothing here relies on them not having run.
            table.runtime.block_on(locker.rollback()).expect("unlocking");
            store.renew(&namespace, &live, TTL, HIGH_WATER).expect("renewing once the row is free");
            store.release(&namespace, &live, HIGH_WATER).expect("releasing");
        }

        #[test]
        fn a_server_that_never_answers_times_out() {
            // A socket that accepts connections and never replies.
            let silent = TcpListener::bind("127.0.0.1:0").expect("binding");
            let url = format!($silent_url, silent.local_addr().expect("an address"));
            let bound = Duration::from_millis(300);
            let began = Instant::now();
            timed_out(SqlLeaseStore::builder(&url).timeout(bound).connect(), began, bound);
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
            let Some((table, namespace)) = setup("drop") else { return };
            let store = table.store();
            let grant = store.acquire(&Claim::new(&namespace, 32, TTL)).expect("acquiring");
            store.release(&namespace, &grant, HIGH_WATER).expect("releasing");
            // Neither blocks nor panics, though dropping a runtime inside another one would.
            table.runtime.block_on(async move { drop(store) });
            table.store().now_ms().expect("another store works");
        }
    };
}
