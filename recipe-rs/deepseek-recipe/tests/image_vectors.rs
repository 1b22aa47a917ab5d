//! Golden image vectors (`images/*.jsonl`): preprocessing, token accounting, resolution with a
//! shared quota, and the resolution of converted requests' image sources.
//!
//! Input images are read from the fixture folder `make image-fixtures` writes
//! (`support/image_fixtures.rs`), each checked against its SHA-256.
//! Normative: sizes, formats, token adjustments, quotas and error kind/retryable/message; the
//! WebP bytes (`data_len`, `data_sha256`) depend on the reference's codec build and are not
//! compared. The request assertions on `image_requests.jsonl` themselves run in
//! `request_vectors.rs`; this runner checks its `image_resolution`.
//!
//! `RECIPE_VECTORS` selects the vectors folder (default `../shared/vectors` next to the repo);
//! `RECIPE_VECTORS_OPTIONAL=1` turns a missing folder into a skip. A failure names every failed
//! vector id; `RECIPE_VECTORS_VERBOSE=1` shows every mismatch.

#![allow(clippy::print_stdout, clippy::print_stderr)]

#[path = "support/image_fixtures.rs"]
mod fixtures;

mod common;
#[path = "support/failures.rs"]
mod failures;

use deepseek_recipe::conversation::ImageDetail;
use deepseek_recipe::image::{
    image_tokens, preprocess, DestinationPolicy, HttpFetcher, ImageData, ImageError, ImageInput,
    ImageQuota, ImageResolver, PreprocessOptions, ResolvedImages,
};
use deepseek_recipe::{
    convert_json, ConversionOptions, Encoding, ModelVersion, Protocol, SpecialTokens,
};
use failures::{assert_none_failed, Failure};
use fixtures::ImageFixtures;
use serde_json::{json, Value};

fn error_json(error: &ImageError) -> Value {
    json!({"kind": error.kind().as_str(), "retryable": error.is_retryable(), "message": error.to_string()})
}

fn detail(value: &Value) -> ImageDetail {
    serde_json::from_value(value.clone()).expect("detail is low/high/original/auto")
}

/// One file's outcome: how many records passed, which failed, how many had nothing to check.
#[derive(Default)]
struct Tally {
    passed: usize,
    failed: Vec<Failure>,
    without_resolution: usize,
}

fn check_preprocess(record: &Value, fixtures: &ImageFixtures) -> Vec<String> {
    let data = match fixtures.image(record["image"]["sha256"].as_str().unwrap_or_default()) {
        Ok(data) => data,
        Err(err) => return vec![err],
    };
    let options = &record["options"];
    let options = PreprocessOptions {
        detail: detail(&options["detail"]),
        max_dimension_px: options["max_dimension_px"].as_u64().unwrap_or(0) as u32,
        low_detail_max_dimension_px: options["low_detail_max_dimension_px"].as_u64().unwrap_or(0)
            as u32,
    };
    let expect = &record["expect"];
    let actual = match preprocess(&data, &options) {
        Ok(image) => json!({
            "width": image.width,
            "height": image.height,
            "format": image.format.as_str(),
            "token_adjustment": image.token_adjustment(),
        }),
        Err(error) => json!({"error": error_json(&error)}),
    };
    let mut expected = expect.clone();
    if let Some(object) = expected.as_object_mut() {
        object.remove("data_len");
        object.remove("data_sha256");
    }
    if actual == expected {
        Vec::new()
    } else {
        vec![format!("got {actual} want {expected}")]
    }
}

fn check_tokens(record: &Value) -> Vec<String> {
    let sizes = record["sizes"].as_array().cloned().unwrap_or_default();
    let adjustment = sizes.iter().try_fold(0u64, |sum, size| {
        let (w, h) = (size[0].as_u64().unwrap_or(0), size[1].as_u64().unwrap_or(0));
        image_tokens(w, h).map(|tokens| sum + tokens - 1)
    });
    let actual = match adjustment {
        Ok(value) => json!({"token_adjustment": value}),
        Err(error) => {
            json!({"error": {"exception": "CalcResizeError", "message": error.to_string()}})
        }
    };
    if actual == record["expect"] {
        Vec::new()
    } else {
        vec![format!("got {actual} want {}", record["expect"])]
    }
}

/// The resolver a record's `fetcher` describes (no address is ever connected to).
fn resolver_for(fetcher: &Value) -> ImageResolver {
    let mut http = HttpFetcher::default();
    if let Some(max_bytes) = fetcher["max_bytes"].as_u64() {
        http = http.with_max_bytes(max_bytes);
    }
    if fetcher["destination_filter"] == "reject_all" {
        http = http.with_policy(DestinationPolicy::new().with_filter(|_, _| false));
    }
    ImageResolver::new(http)
}

/// A resolve outcome in the vectors' shape (`images` with sizes only, `repeat` expanded).
fn outcome_json(outcome: &Result<ResolvedImages, ImageError>, quota: &ImageQuota) -> Value {
    let usage = quota.usage();
    let quota = json!({"image_count": usage.image_count, "byte_size": usage.byte_size});
    match outcome {
        Ok(resolved) => {
            let images: Vec<Value> = resolved
                .images
                .iter()
                .map(|image| json!({"width": image.width, "height": image.height, "format": image.format.as_str()}))
                .collect();
            json!({"images": images, "token_adjustment": resolved.token_adjustment, "quota": quota})
        }
        Err(error) => json!({"error": error_json(error), "quota": quota}),
    }
}

/// The expected outcome with images reduced to sizes and `repeat` expanded.
fn expected_outcome(expect: &Value) -> Value {
    let mut expected = expect.clone();
    if let Some(images) = expect["images"].as_array() {
        let expanded: Vec<Value> = images
            .iter()
            .flat_map(|image| {
                let entry = json!({"width": image["width"], "height": image["height"], "format": image["format"]});
                std::iter::repeat_n(entry, image["repeat"].as_u64().unwrap_or(1) as usize)
            })
            .collect();
        expected["images"] = Value::Array(expanded);
    }
    if let Some(object) = expected.as_object_mut() {
        object.remove("sources");
    }
    expected
}

/// The input a resolve source describes; `bytes` reads the bytes of a `bytes` source.
fn resolve_source(
    source: &Value,
    bytes: impl FnOnce() -> Result<Vec<u8>, String>,
) -> Result<ImageInput, String> {
    let data = match source["kind"].as_str() {
        Some("data_url") => match &source["data_url_repeat"] {
            Value::Object(repeat) => {
                let unit = repeat["unit"].as_str().unwrap_or_default();
                let count = repeat["count"].as_u64().unwrap_or(0) as usize;
                let mut url = repeat["prefix"].as_str().unwrap_or_default().to_owned();
                url.push_str(&unit.repeat(count));
                ImageData::DataUrl(url)
            }
            _ => ImageData::DataUrl(source["data_url"].as_str().unwrap_or_default().to_owned()),
        },
        Some("url") => ImageData::Url(source["url"].as_str().unwrap_or_default().to_owned()),
        Some("bytes") => ImageData::Bytes(bytes()?),
        other => return Err(format!("unknown source kind {other:?}")),
    };
    Ok(ImageInput::new(data)
        .with_detail(detail(&source["detail"]))
        .with_path(source["path"].as_str().unwrap_or_default()))
}

fn check_resolve(record: &Value, fixtures: &ImageFixtures) -> Vec<String> {
    let id = record["id"].as_str().unwrap_or_default();
    let resolver = resolver_for(&record["fetcher"]);
    let quota = ImageQuota::new();
    let mut mismatches = Vec::new();
    let expected_calls = record["expect"]["calls"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let calls = record["calls"].as_array().cloned().unwrap_or_default();
    for (index, (call, expect)) in calls.iter().zip(&expected_calls).enumerate() {
        let mut inputs = Vec::new();
        for (at, source) in call["sources"].as_array().into_iter().flatten().enumerate() {
            let input = match resolve_source(source, || fixtures.source(id, index, at)) {
                Ok(input) => input,
                Err(err) => return vec![err],
            };
            let repeat = source["repeat"].as_u64().unwrap_or(1) as usize;
            inputs.extend(std::iter::repeat_n(input, repeat));
        }
        let actual = outcome_json(&resolver.resolve(&inputs, &quota), &quota);
        let expected = expected_outcome(expect);
        if actual != expected {
            mismatches.push(format!("call {index}: got {actual} want {expected}"));
        }
    }
    if calls.len() != expected_calls.len() {
        mismatches.push("call count differs".to_owned());
    }
    mismatches
}

fn url_host_is_ip_literal(url: &str) -> bool {
    let Some((_, rest)) = url.split_once("://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    if let Some(v6) = host.strip_prefix('[') {
        return v6
            .split(']')
            .next()
            .is_some_and(|ip| ip.parse::<std::net::Ipv6Addr>().is_ok());
    }
    let host = host.split(':').next().unwrap_or_default();
    host.parse::<std::net::Ipv4Addr>().is_ok()
}

fn check_request(record: &Value) -> Option<Vec<String>> {
    let expected = record["expect"].get("image_resolution")?;
    let protocol: Protocol = serde_json::from_value(record["protocol"].clone()).expect("protocol");
    let options = ConversionOptions::from_json(&record["options"].to_string()).expect("options");
    let body = match record.get("request_raw").and_then(Value::as_str) {
        Some(raw) => raw.to_owned(),
        None => record["request"].to_string(),
    };
    let converted = match convert_json(protocol, &body, &options) {
        Ok(converted) => converted,
        Err(err) => return Some(vec![format!("conversion failed: {err}")]),
    };
    if converted.model_version != ModelVersion::DeepseekV41Flash {
        return Some(vec![
            "image_resolution recorded for a non-V4.1 model".to_owned()
        ]);
    }
    let encoding = Encoding::v41()
        .with_special_tokens(SpecialTokens::default().with_overrides(&options.special_tokens));
    let rendered = encoding.render(&converted.conversation);
    let sources = &rendered.image_sources;
    let mut mismatches = Vec::new();
    if json!(sources.len()) != expected["sources"] {
        mismatches.push(format!("sources: got {}", sources.len()));
    }
    let has_named_host = sources.iter().any(|source| {
        source.kind == deepseek_recipe::conversation::ImageSourceKind::Url
            && !url_host_is_ip_literal(&source.location)
    });
    if expected.get("skipped").is_some() {
        if !has_named_host {
            mismatches.push("expected a URL with a host name (skipped), found none".to_owned());
        }
        return Some(mismatches);
    }
    let resolver = resolver_for(&json!({"max_bytes": null, "destination_filter": "reject_all"}));
    let quota = ImageQuota::new();
    let actual = outcome_json(&resolver.resolve_sources(sources, &quota), &quota);
    let expected = expected_outcome(expected);
    if actual != expected {
        mismatches.push(format!("got {actual} want {expected}"));
    }
    Some(mismatches)
}

/// Checks one record: `None` when the record has nothing to check (requests without images).
type RecordCheck<'a> = &'a (dyn Fn(&Value) -> Option<Vec<String>> + Sync);

/// Runs one file's records.
fn run_file(records: &[Value], check: RecordCheck<'_>) -> Tally {
    let mut tally = Tally::default();
    for record in records {
        let id = record["id"].as_str().unwrap_or("?");
        match check(record) {
            Some(mismatches) if mismatches.is_empty() => tally.passed += 1,
            Some(mismatches) => tally.failed.push(Failure {
                id: id.to_owned(),
                mismatches,
            }),
            None => tally.without_resolution += 1,
        }
    }
    tally
}

#[test]
fn image_vectors() {
    let Some(dir) = common::vectors_dir() else {
        return;
    };
    let fixtures = ImageFixtures::open(&dir.join("images"));
    let preprocess_check = |r: &Value| Some(check_preprocess(r, &fixtures));
    let tokens_check = |r: &Value| Some(check_tokens(r));
    let resolve_check = |r: &Value| Some(check_resolve(r, &fixtures));
    let files: [(&str, RecordCheck<'_>); 4] = [
        ("image_preprocess.jsonl", &preprocess_check),
        ("image_tokens.jsonl", &tokens_check),
        ("image_resolve.jsonl", &resolve_check),
        ("image_requests.jsonl", &check_request),
    ];
    // One thread per file: preprocessing and resolution dominate and run side by side.
    let results: Vec<Tally> = std::thread::scope(|scope| {
        let handles: Vec<_> = files
            .iter()
            .map(|&(file, check)| {
                let records = common::read_records(&dir.join("images").join(file));
                scope.spawn(move || run_file(&records, check))
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("vector thread"))
            .collect()
    });
    let mut failed = Vec::new();
    for ((file, _), tally) in files.iter().zip(results) {
        let note = if tally.without_resolution > 0 {
            format!(
                " ({} records without image_resolution)",
                tally.without_resolution
            )
        } else {
            String::new()
        };
        println!(
            "images {file}: {} passed, {} failed{note}",
            tally.passed,
            tally.failed.len()
        );
        failed.extend(tally.failed);
    }
    assert_none_failed("image vectors", &failed);
}
