//! Tests of the tokenizer's public surface: known ids, round trips, parallel and batch calls.

use super::*;

fn v4() -> &'static Tokenizer {
    Tokenizer::deepseek_v4()
}

#[test]
fn known_ids() {
    let tokenizer = v4();
    assert_eq!(tokenizer.vocab_size(), 129_280);
    assert_eq!(tokenizer.token_to_id("<｜begin▁of▁sentence｜>"), Some(0));
    assert_eq!(tokenizer.token_to_id("<｜User｜>"), Some(128_803));
    assert_eq!(tokenizer.id_to_token(128_803), Some("<｜User｜>"));
    assert_eq!(
        tokenizer.encode("<｜User｜>", false),
        [30, 28217, 6756, 28217, 32]
    );
    assert_eq!(
        tokenizer.encode(" <｜User｜>", false),
        [818, 28217, 6756, 28217, 32]
    );
    assert_eq!(tokenizer.encode("<｜User｜>", true), [128_803]);
    assert_eq!(tokenizer.encode("", true), Vec::<u32>::new());
}

#[test]
fn decode_round_trips_and_marks_invalid_bytes() {
    let tokenizer = v4();
    let text = "Hello, 世界! 🎉\r\n  123456 <｜User｜>";
    for allow_special in [false, true] {
        let ids = tokenizer.encode(text, allow_special);
        assert_eq!(tokenizer.decode(&ids).ok().as_deref(), Some(text));
    }
    let euro = tokenizer.encode("€", false);
    assert_eq!(euro.len(), 1, "€ is one token");
    let first_byte = tokenizer.token_to_id("â").unwrap_or(u32::MAX);
    assert_eq!(
        tokenizer.decode(&[first_byte]).ok().as_deref(),
        Some("\u{FFFD}")
    );
    assert!(matches!(
        tokenizer.decode(&[200_000]),
        Err(Error::Tokenizer(_))
    ));
}

#[test]
fn incremental_decoder_matches_decode() {
    let tokenizer = v4();
    let text = "naïve 中文 🎉🎉 <think>";
    let ids = tokenizer.encode(text, true);
    let mut decoder = tokenizer.incremental_decoder();
    let mut streamed = String::new();
    for id in &ids {
        streamed += &decoder.push(&[*id]).unwrap_or_default();
    }
    streamed += &decoder.finish();
    assert_eq!(streamed, text);
    let e2 = tokenizer.token_to_id("â").unwrap_or(u32::MAX);
    assert_eq!(decoder.push(&[e2]).ok().as_deref(), Some(""));
    assert!(decoder.has_pending());
    assert!(decoder.push(&[u32::MAX]).is_err());
    assert_eq!(decoder.finish(), "\u{FFFD}");
    assert!(!decoder.has_pending());
}

/// The next number of the xorshift sequence in `seed` (which it advances).
fn next_random(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

/// Deterministic pseudo-random text over all planes, with special spellings and runs mixed in.
fn random_text(seed: &mut u64, len: usize) -> String {
    const PIECES: &[&str] = &[
        "<｜User｜>",
        "<think>",
        "｜DSML｜",
        " ",
        "\r\n",
        "123456",
        "中文",
    ];
    let mut text = String::new();
    for _ in 0..len {
        let roll = next_random(seed);
        match roll % 8 {
            0 => text.push_str(PIECES[(roll >> 8) as usize % PIECES.len()]),
            1 => text.push(char::from(b' ' + (roll >> 8) as u8 % 95)),
            2 => text.extend(std::iter::repeat_n('a', (roll >> 8) as usize % 300)),
            _ => text.push(char::from_u32((roll >> 8) as u32 % 0x11_0000).unwrap_or('\u{FFFD}')),
        }
    }
    text
}

#[test]
fn random_text_round_trips_and_streams() {
    let tokenizer = v4();
    let mut seed = 0x1234_5678_9ABC_DEF1;
    for round in 0..200 {
        let text = random_text(&mut seed, round % 40);
        for allow_special in [false, true] {
            let ids = tokenizer.encode(&text, allow_special);
            assert_eq!(tokenizer.decode(&ids).ok().as_deref(), Some(text.as_str()));
            let mut decoder = tokenizer.incremental_decoder();
            let mut streamed = String::new();
            for chunk in ids.chunks(1 + round % 3) {
                streamed += &decoder.push(chunk).unwrap_or_default();
            }
            streamed += &decoder.finish();
            assert_eq!(streamed, text);
        }
    }
}

/// Text made of added-token spellings, their prefixes and suffixes and a few letters, so that
/// nearly every cut position has a token, or part of one, next to it.
fn dense_token_spellings(seed: &mut u64, pieces: usize) -> String {
    const SPELLINGS: &[&str] = &[
        "<｜User｜>",
        "<｜Assistant｜>",
        "<think>",
        "</think>",
        "｜DSML｜",
    ];
    let mut text = String::new();
    for _ in 0..pieces {
        let roll = next_random(seed);
        let spelling = SPELLINGS[(roll % 5) as usize];
        let cut = spelling
            .char_indices()
            .map(|(at, _)| at)
            .nth((roll >> 8) as usize % spelling.chars().count())
            .unwrap_or(0);
        match (roll >> 16) % 4 {
            0 => text.push_str(&spelling[..cut]),
            1 => text.push_str(&spelling[cut..]),
            2 => text.push(char::from(b'a' + (roll >> 24) as u8 % 3)),
            _ => text.push_str(spelling),
        }
    }
    text
}

#[test]
fn parallel_encode_gives_the_single_threaded_ids() {
    let single = v4();
    let mut seed = 0x5EED_0F7A_11E1;
    let mut texts: Vec<String> = (0..3).map(|_| random_text(&mut seed, 6000)).collect();
    texts.push(
        "Hello world, the model returns 123456 tokens.\n中文テキスト ".repeat(2000)
            + &"a".repeat(70_000),
    );
    texts.push(dense_token_spellings(&mut seed, 12_000));
    for text in &texts {
        assert!(text.len() >= PARALLEL_MIN_BYTES, "{}", text.len());
        for allow_special in [false, true] {
            let expected = single.encode(text, allow_special);
            for threads in [2, 3, 8] {
                let parallel = single.with_threads(threads);
                assert_eq!(parallel.threads(), threads);
                assert!(
                    parallel.encode(text, allow_special) == expected,
                    "threads {threads}, allow_special {allow_special}"
                );
                let parts = parallel.encode_parts(text, allow_special);
                assert!(parts.len() > 1 && parts.concat() == expected);
                assert_eq!(parallel.count(text, allow_special), expected.len());
            }
        }
    }
    assert_eq!(single.with_threads(0).threads(), 1);
}

#[test]
fn special_ranges_are_single_tokens() {
    let tokenizer = v4();
    let text = "<｜User｜>hi<｜User｜>";
    let ids = tokenizer.encode_with_special_ranges(text, &[0..12, 14..26]);
    assert_eq!(ids.ok(), Some(vec![128_803, 6_366, 128_803]));
    let misaligned = [1..12, 14..26];
    assert!(tokenizer
        .encode_with_special_ranges(text, &misaligned)
        .is_err());
    assert!(tokenizer
        .encode_with_special_ranges(text, &[14..26, 0..12])
        .is_err());
}

#[test]
fn unsupported_features_are_refused() {
    let json = std::str::from_utf8(DEEPSEEK_V4_JSON).unwrap_or_default();
    let broken = json.replacen("\"type\": \"ByteLevel\"", "\"type\": \"Metaspace\"", 1);
    let err = Tokenizer::from_json(&broken).map(|_| ()).unwrap_err();
    assert!(
        err.to_string().contains("unsupported tokenizer.json"),
        "{err}"
    );
    assert!(Tokenizer::from_json("{").is_err());
    let stripped = json.replacen("\"lstrip\": false", "\"lstrip\": true", 1);
    assert!(Tokenizer::from_json(&stripped).is_err());
}

#[test]
fn word_caches_kept_across_calls_never_mix_tokenizers() {
    // A tokenizer without the first 2,000 merges encodes the same words to other ids.
    let mut json: serde_json::Value = serde_json::from_slice(DEEPSEEK_V4_JSON).unwrap_or_default();
    if let Some(merges) = json
        .pointer_mut("/model/merges")
        .and_then(serde_json::Value::as_array_mut)
    {
        merges.drain(..2000);
    }
    let Ok(other) = Tokenizer::from_json(json.to_string()) else {
        panic!("the trimmed tokenizer.json loads");
    };
    let text = "Tokenizers merge the same words again and again: merging, merged, merges.";
    let fresh = |tokenizer: &Tokenizer| {
        let tokenizer = tokenizer.clone();
        std::thread::spawn(move || tokenizer.encode(text, false))
            .join()
            .unwrap_or_default()
    };
    let (v4_ids, other_ids) = (fresh(v4()), fresh(&other));
    assert_ne!(v4_ids, other_ids);
    for _ in 0..3 {
        assert_eq!(v4().encode(text, false), v4_ids);
        assert_eq!(other.encode(text, false), other_ids);
    }
}

#[test]
fn batch_calls_give_what_single_calls_give() {
    let single = v4().with_threads(1);
    let line = "Batch text 42, 中文 <｜User｜> and  spaces\n";
    let texts: Vec<String> = (0..300)
        .map(|n| line.repeat(n % 37 + 1))
        .chain([String::new(), line.repeat(3000)])
        .collect();
    for allow_special in [false, true] {
        let expected: Vec<Vec<u32>> = texts
            .iter()
            .map(|text| single.encode(text, allow_special))
            .collect();
        for threads in [1, 3, 8] {
            let tokenizer = single.with_threads(threads);
            assert_eq!(tokenizer.encode_batch(&texts, allow_special), expected);
            let counts: Vec<usize> = expected.iter().map(Vec::len).collect();
            assert_eq!(tokenizer.count_batch(&texts, allow_special), counts);
            let decoded = tokenizer.decode_batch(&expected).unwrap_or_default();
            assert_eq!(decoded, texts);
        }
    }
    assert!(v4().decode_batch(&[vec![1], vec![u32::MAX]]).is_err());
}

#[test]
fn fixed_starts_give_the_ids_of_the_whole_text() {
    let tokenizer = v4();
    let mut seed = 0xF1CE_D5EA_2700_0001;
    let mut remembered = 0;
    for round in 0..120 {
        let fixed: &'static str =
            Box::leak(random_text(&mut seed, 1 + round % 50).into_boxed_str());
        for tail_len in [0, 1, 3, 12] {
            let text = format!("{fixed}{}", random_text(&mut seed, tail_len));
            let expected = tokenizer.encode(&text, false);
            // First use works the constant's ids out, the second takes them from the memo.
            for _ in 0..2 {
                let segments = [
                    Segment::Token(0),
                    Segment::FixedStart { fixed, text: &text },
                ];
                let ids = tokenizer.encode_segments(&segments);
                assert_eq!(ids[0], 0);
                assert_eq!(ids[1..], expected, "{text:?} after {fixed:?}");
            }
        }
        let memo = tokenizer.with_state(|state| state.fixed_starts.get(fixed).map(|(cut, _)| cut));
        remembered += usize::from(memo.is_some_and(|cut| cut > 0));
    }
    assert!(remembered > 60, "{remembered}");
    let not_the_start = "other text";
    let segments = [Segment::FixedStart {
        fixed: "abc.",
        text: not_the_start,
    }];
    assert_eq!(
        tokenizer.encode_segments(&segments),
        tokenizer.encode(not_the_start, false)
    );
}
