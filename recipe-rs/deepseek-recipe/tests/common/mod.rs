//! Helpers shared by the golden-vector tests: locating the vectors folder and reading JSONL.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The vectors folder: `RECIPE_VECTORS`, else `../shared/vectors` next to the repository root.
///
/// A missing folder fails the test, unless `RECIPE_VECTORS_OPTIONAL=1` turns it into a skip
/// (`None`).
pub fn vectors_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("RECIPE_VECTORS") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/vectors"),
    };
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var("RECIPE_VECTORS_OPTIONAL").as_deref() == Ok("1"),
        "golden vectors not found at {} (set RECIPE_VECTORS, or RECIPE_VECTORS_OPTIONAL=1 to skip)",
        dir.display()
    );
    #[allow(clippy::print_stderr, reason = "a skipped vector test says so")]
    {
        eprintln!("golden vectors not found at {}, skipped", dir.display());
    }
    None
}

/// Every record of a JSONL file (blank lines skipped); panics when the file cannot be read or a
/// line is not JSON.
pub fn read_records(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).expect("vector line is JSON"))
        .collect()
}
