//! What the lease thread says while the first acquisition is under way, for `/readyz`.
//!
//! The library's lease thread reports its progress only as `tracing` events (target
//! `typed_snowflake`, with a `namespace` field): the store does not answer yet (with its
//! error, every few seconds), a worker ID is leased, earlier holders of it are waited out.
//! [`layer`] keeps the last of each per namespace; `AppState` reads them to say what a server
//! without its lease waits for. Without the layer installed (a caller of
//! [`serve`](crate::serve) with its own subscriber), the reason says only "acquiring".

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};

/// The last progress of the lease acquisitions in one namespace.
#[derive(Clone, Debug, Default)]
pub(crate) struct Progress {
    /// The last "waits for the lease store" report: what it tried, and the store's error.
    pub store_error: Option<String>,
    /// The worker ID last leased.
    pub worker: Option<u64>,
    /// The last report that earlier holders of the leased worker ID are waited out.
    pub waiting_out: Option<String>,
    /// When the newest of these was reported.
    pub at: Option<Instant>,
}

fn table() -> &'static Mutex<HashMap<String, Progress>> {
    static TABLE: OnceLock<Mutex<HashMap<String, Progress>>> = OnceLock::new();
    TABLE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The progress reported for `namespace` since `since`, if any.
pub(crate) fn latest(namespace: &str, since: Instant) -> Option<Progress> {
    let table = table().lock().unwrap_or_else(|p| p.into_inner());
    table.get(namespace).filter(|p| p.at.is_some_and(|at| at >= since)).cloned()
}

/// A layer that records the lease thread's progress events (see the module's docs).
pub(crate) fn layer<S>() -> impl Layer<S>
where
    S: Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
{
    Capture.with_filter(tracing_subscriber::filter::filter_fn(|meta| {
        meta.target() == "typed_snowflake" && *meta.level() <= tracing::Level::INFO
    }))
}

struct Capture;

#[derive(Default)]
struct Fields {
    namespace: Option<String>,
    message: Option<String>,
    worker: Option<u64>,
    error: Option<String>,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "namespace" => self.namespace = Some(value.to_owned()),
            "message" => self.message = Some(value.to_owned()),
            "error" => self.error = Some(value.to_owned()),
            _ => {}
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        if field.name() == "worker" {
            self.worker = Some(value);
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        match field.name() {
            "namespace" => self.namespace = Some(format!("{value:?}")),
            "message" => self.message = Some(format!("{value:?}")),
            "error" => self.error = Some(format!("{value:?}")),
            _ => {}
        }
    }
}

impl<S: Subscriber> Layer<S> for Capture {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let (Some(namespace), Some(message)) = (fields.namespace, fields.message) else { return };
        let mut table = table().lock().unwrap_or_else(|p| p.into_inner());
        let progress = table.entry(namespace).or_default();
        if message.contains("waits for the lease store") {
            progress.store_error = Some(message);
        } else if message.contains("the lease store answered after") {
            // The store is back: its last error no longer says why the server waits.
            progress.store_error = None;
        } else if message == "worker ID leased" {
            progress.worker = fields.worker;
            progress.waiting_out = None;
        } else if message.contains("earlier holder") {
            progress.worker = fields.worker.or(progress.worker);
            progress.waiting_out = Some(message);
        } else {
            return;
        }
        progress.at = Some(Instant::now());
    }
}
