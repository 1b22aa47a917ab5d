//! The one failure report of the golden-vector tests: the assertion names every failed vector
//! id, and shows what differed for the first few (for all with `RECIPE_VECTORS_VERBOSE=1`).

use std::fmt::Write as _;

/// How many failures show what differed unless `RECIPE_VECTORS_VERBOSE=1` asks for all.
const DETAILS_SHOWN: usize = 20;

/// One failed vector: its id and what differed.
pub struct Failure {
    /// The vector's `id`.
    pub id: String,
    /// What differed, one line each.
    pub mismatches: Vec<String>,
}

/// Panics unless `failures` is empty; the message names every failed id of `what` (e.g.
/// "request vectors"), then what differed for the first ones.
pub fn assert_none_failed(what: &str, failures: &[Failure]) {
    if failures.is_empty() {
        return;
    }
    let ids: Vec<&str> = failures.iter().map(|failure| failure.id.as_str()).collect();
    let mut message = format!("{} {what} failed: {}", failures.len(), ids.join(", "));
    let verbose = std::env::var("RECIPE_VECTORS_VERBOSE").as_deref() == Ok("1");
    let shown = if verbose {
        failures.len()
    } else {
        DETAILS_SHOWN
    };
    for failure in failures.iter().take(shown) {
        let _ = write!(message, "\n{}:", failure.id);
        for mismatch in &failure.mismatches {
            let _ = write!(message, "\n    {mismatch}");
        }
    }
    if failures.len() > shown {
        let _ = write!(
            message,
            "\n({} more; RECIPE_VECTORS_VERBOSE=1 shows all)",
            failures.len() - shown
        );
    }
    panic!("{message}");
}
