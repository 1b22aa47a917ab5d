//! The image vectors' inputs, read from the fixture folder `make image-fixtures` writes
//! (`scripts/gen_image_fixtures.py`, the project's one generator): one file per input named by
//! its SHA-256, and `manifest.json` with the digest of the vector files they were made from and
//! the files of the resolve records' byte sources (`"<id> calls[i] sources[j]"`). Every read
//! checks the file's SHA-256, so a wrong fixture fails the test that reads it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The vector files the fixtures are made from, in the order of their digest.
const VECTOR_FILES: [&str; 2] = ["image_preprocess.jsonl", "image_resolve.jsonl"];

/// What to run when the fixtures are missing or stale.
const REGENERATE: &str = "run `make image-fixtures` (scripts/gen_image_fixtures.py)";

/// Lower-case hex of `bytes`.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// An opened fixture folder.
pub struct ImageFixtures {
    dir: PathBuf,
    sources: HashMap<String, String>,
}

impl ImageFixtures {
    /// The fixtures of the vectors' `images/` folder: `RECIPE_IMAGE_FIXTURES`, else
    /// `~/.cache/deepseek-recipe/image-fixtures`. Panics, saying what to run, when the folder
    /// has no manifest or was made from other vectors.
    pub fn open(images_dir: &Path) -> Self {
        let dir = match std::env::var_os("RECIPE_IMAGE_FIXTURES") {
            Some(dir) => PathBuf::from(dir),
            None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/deepseek-recipe/image-fixtures"),
        };
        let manifest = std::fs::read_to_string(dir.join("manifest.json")).unwrap_or_else(|err| {
            panic!(
                "no image fixtures at {} ({err}): {REGENERATE}",
                dir.display()
            )
        });
        let manifest: Value = serde_json::from_str(&manifest).expect("fixture manifest is JSON");
        let mut digest = Sha256::new();
        for name in VECTOR_FILES {
            let path = images_dir.join(name);
            let bytes = std::fs::read(&path)
                .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
            digest.update(bytes);
        }
        assert!(
            manifest["vectors_digest"] == hex(&digest.finalize()).as_str(),
            "the image fixtures at {} were made from other vectors than {}: {REGENERATE}",
            dir.display(),
            images_dir.display()
        );
        let sources = serde_json::from_value(manifest["sources"].clone())
            .expect("fixture manifest sources map keys to SHA-256s");
        Self { dir, sources }
    }

    /// The input whose SHA-256 is `sha256`; an error when it is missing or altered.
    pub fn image(&self, sha256: &str) -> Result<Vec<u8>, String> {
        let data = std::fs::read(self.dir.join(sha256))
            .map_err(|err| format!("image fixture {sha256}: {err}: {REGENERATE}"))?;
        if hex(&Sha256::digest(&data)) != sha256 {
            return Err(format!("image fixture {sha256} does not match its SHA-256"));
        }
        Ok(data)
    }

    /// The bytes of byte source `source` of call `call` of resolve record `id`.
    pub fn source(&self, id: &str, call: usize, source: usize) -> Result<Vec<u8>, String> {
        let key = format!("{id} calls[{call}] sources[{source}]");
        let sha256 = self
            .sources
            .get(&key)
            .ok_or_else(|| format!("no image fixture for {key}: {REGENERATE}"))?;
        self.image(sha256)
    }
}
