//! Every file under `src/` does one job, so none is over [`MAX_LINES`] lines unless
//! `docs/architecture.md` lists it, with its reason, in the table under [`TABLE_HEADING`]; and
//! every file listed there exists and is that long, so the table stays true.

use std::collections::BTreeMap;
use std::path::PathBuf;

#[path = "support/source_files.rs"]
mod source_files;

use source_files::{rust_files, source_root};

/// Lines a source file may have without a stated reason.
const MAX_LINES: usize = 600;

/// The heading of the table of longer files in `docs/architecture.md`.
const TABLE_HEADING: &str = "## Files over ~600 lines";

/// The line count of every source file, by its path relative to `src/` (with `/`).
fn line_counts() -> BTreeMap<String, usize> {
    let root = source_root();
    rust_files(&root)
        .into_iter()
        .map(|path| {
            let relative = path.strip_prefix(&root).expect("under src/");
            let name = relative
                .components()
                .map(|part| part.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            let text = std::fs::read_to_string(&path).expect("a readable source file");
            (name, text.lines().count())
        })
        .collect()
}

/// The rows of the first table of the section under `heading` in `markdown`: the file (its first
/// cell, without backticks) and the reason (its last cell). `None` when there is no such heading.
fn listed_files(markdown: &str, heading: &str) -> Option<BTreeMap<String, String>> {
    let mut lines = markdown.lines().skip_while(|line| line.trim() != heading);
    lines.next()?;
    let rows = lines
        .skip_while(|line| !line.trim_start().starts_with(['|', '#']))
        .take_while(|line| line.trim_start().starts_with('|'))
        // The header row and the separator row.
        .skip(2)
        .map(|row| {
            let cells: Vec<&str> = row.trim().trim_matches('|').split('|').collect();
            let file = cells
                .first()
                .map_or("", |cell| cell.trim().trim_matches('`'));
            let reason = if cells.len() > 1 {
                cells[cells.len() - 1].trim()
            } else {
                ""
            };
            (file.to_owned(), reason.to_owned())
        })
        .collect();
    Some(rows)
}

fn architecture_table() -> BTreeMap<String, String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/architecture.md");
    let markdown = std::fs::read_to_string(&path).expect("docs/architecture.md is readable");
    listed_files(&markdown, TABLE_HEADING)
        .unwrap_or_else(|| panic!("docs/architecture.md has no section {TABLE_HEADING:?}"))
}

#[test]
fn long_source_files_are_listed_with_their_reason() {
    let listed = architecture_table();
    let unlisted: Vec<String> = line_counts()
        .into_iter()
        .filter(|(name, lines)| {
            *lines > MAX_LINES && listed.get(name).is_none_or(|reason| reason.is_empty())
        })
        .map(|(name, lines)| format!("{name} ({lines} lines)"))
        .collect();
    assert!(
        unlisted.is_empty(),
        "files over {MAX_LINES} lines without a reason in docs/architecture.md \
         ({TABLE_HEADING:?}): split them by responsibility, or list them with why: {unlisted:?}"
    );
}

#[test]
fn the_listed_files_exist_and_are_long() {
    let counts = line_counts();
    let stale: Vec<String> = architecture_table()
        .into_keys()
        .filter(|name| counts.get(name).is_none_or(|lines| *lines <= MAX_LINES))
        .collect();
    assert!(
        stale.is_empty(),
        "docs/architecture.md ({TABLE_HEADING:?}) lists files that are gone or no longer over \
         {MAX_LINES} lines: {stale:?}"
    );
}

#[test]
fn the_table_is_read_from_its_section() {
    let markdown = "# Doc\n\n## Other\n\n| file | lines | why |\n|---|---|---|\n| `a.rs` | ~900 | no |\n\n\
                    ## Long\n\nWhy they are long:\n\n| file | lines | why |\n|---|---|---|\n| `x/y.rs` | ~700 | generated |\n\
                    | `z.rs` | ~650 |  |\n\nAfter the table.\n| `w.rs` | 1 | not a row |\n";
    let rows = listed_files(markdown, "## Long").expect("the section exists");
    assert_eq!(
        rows,
        BTreeMap::from([
            ("x/y.rs".to_owned(), "generated".to_owned()),
            ("z.rs".to_owned(), String::new()),
        ])
    );
    assert_eq!(listed_files(markdown, "## Missing"), None);
    let without_table = "## Long\n\nNo table here.\n\n## Next\n\n| `a.rs` | ~900 | other |\n";
    assert_eq!(
        listed_files(without_table, "## Long"),
        Some(BTreeMap::new())
    );
}
