//! Adding special tokens to a `tokenizer.json`: how a V4 file becomes one that can encode V4.1
//! prompts while no official V4.1 `tokenizer.json` is public.

use serde_json::{json, Value};

use crate::error::{Error, Result};

/// The `tokenizer.json` text `json` with every spelling of `spellings` that is not yet an added
/// token appended to `added_tokens` as a special, non-normalized token.
///
/// A spelling already in the model's vocabulary keeps its id; any other gets the next id after
/// the largest one in the file, in the order given. The BPE tables are unchanged, so text encodes
/// to the same ids as before.
///
/// # Errors
/// [`Error::Tokenizer`] when `json` is not a JSON object with a `model.vocab` object and (if
/// present) an `added_tokens` array, or a spelling is empty.
pub(super) fn with_special_tokens(json: &str, spellings: &[&str]) -> Result<String> {
    let mut file: Value = serde_json::from_str(json)
        .map_err(|err| Error::Tokenizer(format!("invalid tokenizer.json: {err}")))?;
    let vocab = file["model"]["vocab"]
        .as_object()
        .ok_or_else(|| invalid("model.vocab is not an object"))?
        .clone();
    let added = match file.get_mut("added_tokens") {
        Some(Value::Array(tokens)) => tokens,
        Some(Value::Null) | None => {
            file["added_tokens"] = Value::Array(Vec::new());
            file["added_tokens"]
                .as_array_mut()
                .expect("just made an array")
        }
        Some(_) => return Err(invalid("added_tokens is not an array")),
    };
    let ids = vocab
        .values()
        .chain(added.iter().map(|token| &token["id"]))
        .map(|id| {
            id.as_u64()
                .ok_or_else(|| invalid("a token id is not an integer"))
        })
        .collect::<Result<Vec<u64>>>()?;
    let mut next_id = ids.iter().max().map_or(0, |max| max + 1);
    for &spelling in spellings {
        if spelling.is_empty() {
            return Err(Error::Tokenizer("an added token cannot be empty".into()));
        }
        if added.iter().any(|token| token["content"] == spelling) {
            continue;
        }
        let id = match vocab.get(spelling).and_then(Value::as_u64) {
            Some(id) => id,
            None => {
                next_id += 1;
                next_id - 1
            }
        };
        added.push(json!({
            "id": id,
            "content": spelling,
            "single_word": false,
            "lstrip": false,
            "rstrip": false,
            "normalized": false,
            "special": true,
        }));
    }
    Ok(file.to_string())
}

fn invalid(what: &str) -> Error {
    Error::Tokenizer(format!("invalid tokenizer.json: {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::Tokenizer;

    #[test]
    fn missing_spellings_get_the_next_ids_in_order() {
        let base = Tokenizer::deepseek_v4_json();
        let extended = with_special_tokens(base, &["<｜User｜>", "<｜A｜>", "<｜B｜>", "<｜A｜>"])
            .expect("the bundled file extends");
        let old = Tokenizer::deepseek_v4();
        let new = Tokenizer::from_json(&extended).expect("the result loads");
        let size = old.vocab_size() as u32;
        assert_eq!(new.vocab_size(), old.vocab_size() + 2);
        assert_eq!(new.token_to_id("<｜A｜>"), Some(size));
        assert_eq!(new.token_to_id("<｜B｜>"), Some(size + 1));
        assert_eq!(new.token_to_id("<｜User｜>"), old.token_to_id("<｜User｜>"));
        assert_eq!(new.prompt_special_id("<｜A｜>"), Some(size));
        let text = "Hello <｜A｜> wörld, 12345 ｜B｜";
        assert_eq!(new.encode(text, false), old.encode(text, false));
        assert_eq!(
            new.encode("x<｜A｜>", true),
            [old.encode("x", false), vec![size]].concat()
        );
    }

    #[test]
    fn a_vocabulary_spelling_keeps_its_id() {
        let json = r#"{"model": {"vocab": {"a": 0, "b": 1, "<s>": 2}}, "added_tokens": null}"#;
        let extended: Value =
            serde_json::from_str(&with_special_tokens(json, &["<s>", "<t>"]).expect("extends"))
                .expect("JSON");
        let added = extended["added_tokens"].as_array().expect("an array");
        assert_eq!(added[0]["id"], 2);
        assert_eq!(added[1]["id"], 3);
    }

    #[test]
    fn malformed_files_and_empty_spellings_are_errors() {
        for (json, spellings) in [
            ("[]", &["<a>"][..]),
            (r#"{"model": {"vocab": []}}"#, &["<a>"]),
            (
                r#"{"model": {"vocab": {"a": 0}}, "added_tokens": 1}"#,
                &["<a>"],
            ),
            (r#"{"model": {"vocab": {"a": "x"}}}"#, &["<a>"]),
            (r#"{"model": {"vocab": {"a": 0}}}"#, &[""]),
            ("{", &["<a>"]),
        ] {
            let err = with_special_tokens(json, spellings).expect_err(json);
            assert!(matches!(err, Error::Tokenizer(_)), "{err}");
        }
    }
}
