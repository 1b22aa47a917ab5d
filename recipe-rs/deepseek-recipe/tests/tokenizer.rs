//! Known ids of the bundled DeepSeek V4 tokenizer, checked through the public API.

use deepseek_recipe::{Error, Tokenizer};

#[test]
fn special_token_ids() {
    let tokenizer = Tokenizer::deepseek_v4();
    assert_eq!(tokenizer.token_to_id("<｜begin▁of▁sentence｜>"), Some(0));
    assert_eq!(tokenizer.token_to_id("<｜end▁of▁sentence｜>"), Some(1));
    assert_eq!(tokenizer.token_to_id("<｜User｜>"), Some(128_803));
    assert_eq!(tokenizer.token_to_id("<｜Assistant｜>"), Some(128_804));
    assert_eq!(tokenizer.token_to_id("<think>"), Some(128_821));
    assert_eq!(tokenizer.token_to_id("</think>"), Some(128_822));
    assert_eq!(tokenizer.token_to_id("｜DSML｜"), Some(128_825));
    assert_eq!(tokenizer.id_to_token(0), Some("<｜begin▁of▁sentence｜>"));
    assert_eq!(tokenizer.vocab_size(), 129_280);
}

#[test]
fn special_spellings_typed_as_text_are_plain_text() {
    let tokenizer = Tokenizer::deepseek_v4();
    assert_eq!(
        tokenizer.encode(" <｜User｜>", false),
        [818, 28_217, 6_756, 28_217, 32]
    );
    assert_eq!(
        tokenizer.encode("<｜User｜>", false),
        [30, 28_217, 6_756, 28_217, 32]
    );
    assert_eq!(tokenizer.encode(" <｜User｜>", true), [223, 128_803]);
    assert_eq!(
        tokenizer.encode("<｜begin▁of▁sentence｜>hi", true),
        [0, 6_366]
    );
}

#[test]
fn decoding_unknown_ids_fails() {
    let tokenizer = Tokenizer::deepseek_v4();
    assert!(matches!(
        tokenizer.decode(&[129_280]),
        Err(Error::Tokenizer(_))
    ));
    assert_eq!(
        tokenizer.decode(&[128_803, 6_366]).ok().as_deref(),
        Some("<｜User｜>hi")
    );
}
