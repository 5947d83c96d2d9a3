//! Readiness against issuing, sampled: readiness, an ID, readiness again, and the rule that
//! finds where they disagreed (tests/service/readiness.rs, the slow tier's state-file test).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// What readiness said: ready, not ready with the phase, or no answer (the port closed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ready {
    Yes,
    No(String),
    Closed,
}

impl Ready {
    /// Not ready for a lease reason (not draining, where the server still issues).
    pub fn not_for_the_lease(&self) -> bool {
        matches!(self, Ready::No(phase) if phase != "draining")
    }
}

/// What an ID request got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Issue {
    Id,
    Refused,
    Other,
    Closed,
}

/// One sample: readiness, an ID, readiness again, and the refusal's message, if any.
pub type Sample = (Instant, Ready, Issue, Ready, String);

pub fn readyz(agent: &ureq::Agent, url: &str) -> Ready {
    let Ok(mut response) = agent.get(url).call() else { return Ready::Closed };
    let status = response.status().as_u16();
    let Ok(body) = response.body_mut().read_to_string() else { return Ready::Closed };
    let json: serde_json::Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
    match (status, json["ready"].as_bool()) {
        (200, Some(true)) => Ready::Yes,
        (503, Some(false)) => Ready::No(json["phase"].as_str().unwrap_or("?").to_owned()),
        _ => panic!("/readyz answered {status} {body}"),
    }
}

pub fn issue(agent: &ureq::Agent, url: &str) -> (Issue, String) {
    let Ok(mut response) = agent.get(url).call() else { return (Issue::Closed, String::new()) };
    let status = response.status().as_u16();
    let body = response.body_mut().read_to_string().unwrap_or_default();
    match status {
        200 => (Issue::Id, String::new()),
        503 => (Issue::Refused, body),
        _ => (Issue::Other, body),
    }
}

/// How a refusal says that the lease's status did not say issuing when the generator refused
/// (the server then gives the generator's own reason): readiness and issuing disagreed.
pub const REFUSED_WHILE_ISSUING: &str = "the lease refused: ";

/// What `samples` show: the violations, the phases seen, and the flips.
///
/// A violation is an ID refused between two "ready" answers while the lease's status said
/// issuing at the refusal itself (its message gives the generator's reason, not the status's),
/// or an ID issued between two answers "not ready" for a lease reason. A refusal between two
/// "ready" answers that gives the status's own reason (`recovering`, say) is a flip: the status
/// left issuing and came back within the sample's few milliseconds (a lost lease acquired
/// again at once), which readiness said truly at every instant it was asked.
pub fn judge(face: &str, samples: &[Sample]) -> (Vec<String>, Vec<String>, Vec<String>) {
    let (mut violations, mut flips) = (Vec::new(), Vec::new());
    let mut phases: Vec<String> = Vec::new();
    let first = samples.iter().map(|s| s.0).min();
    for (at, before, issued, after, message) in samples {
        for ready in [before, after] {
            let phase = match ready {
                Ready::Yes => "issuing".to_owned(),
                Ready::No(phase) => phase.clone(),
                Ready::Closed => continue,
            };
            if !phases.contains(&phase) {
                phases.push(phase);
            }
        }
        let at = first.map_or(std::time::Duration::ZERO, |first| at.duration_since(first));
        let line = format!("{face} at {at:.3?}: {before:?}, {issued:?}, {after:?} {message}");
        let refused_while_ready = *issued == Issue::Refused && *before == Ready::Yes && *after == Ready::Yes;
        let issued_while_not = *issued == Issue::Id && before.not_for_the_lease() && after.not_for_the_lease();
        if issued_while_not || (refused_while_ready && message.contains(REFUSED_WHILE_ISSUING)) {
            violations.push(line);
        } else if refused_while_ready {
            flips.push(line);
        }
        assert_ne!(*issued, Issue::Other, "{face}: an ID request answered neither an ID nor 503: {message}");
    }
    (violations, phases, flips)
}

/// Samples over HTTP until `stop`.
pub fn hammer_http(base: String, stop: Arc<AtomicBool>) -> Vec<Sample> {
    let agent = super::agent();
    let (ready_url, id_url) = (format!("{base}/readyz"), format!("{base}/v1/ids/order"));
    let mut samples = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let at = Instant::now();
        let before = readyz(&agent, &ready_url);
        let (issued, message) = issue(&agent, &id_url);
        let after = readyz(&agent, &ready_url);
        samples.push((at, before, issued, after, message));
    }
    samples
}
