//! Pluggable lead sources: where scans read job postings from.
//!
//! A source is named and reads from the embedded sample feed, a file or folder, or an http(s)
//! URL. Formats: JSON (an array of postings, or an object with a `jobs` or `items` array), NDJSON
//! (one posting per line) and RSS 2.0 (Atom entries are read too). Every posting goes through
//! [`Posting::normalise`]; one that cannot be read or fails it is counted as failed, with the
//! reason, while the source itself only fails when nothing can be read at all.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Utc};
use prospector_api::prospector::models::{Budget, BudgetKind, LeadClient};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::posting::Posting;

/// The embedded sample feed (JSON; `posted_hours_ago` instead of `posted_at`).
const SAMPLE_FEED: &str = include_str!("sample_feed.json");

/// Largest body or file a source reads.
pub const MAX_BODY: usize = 10 * 1024 * 1024;

/// The `Accept` header of URL sources.
const ACCEPT: &str = "application/json, application/x-ndjson, application/rss+xml, application/xml;q=0.9";

/// Where a source reads from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// The embedded sample feed.
    Sample,
    /// A feed file, or a folder of feed files.
    Path(PathBuf),
    /// An http(s) URL.
    Url(String),
}

impl fmt::Display for Location {
    /// The location as it may be shown or logged: URLs without userinfo, query or fragment.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sample => f.write_str("sample"),
            Location::Path(p) => write!(f, "{}", p.display()),
            Location::Url(u) => f.write_str(&safe_url(u)),
        }
    }
}

/// A named lead source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub name: String,
    pub location: Location,
}

impl Source {
    /// Parses `NAME=LOCATION` (LOCATION: `sample`, an http(s) URL, or a file/folder path).
    /// NAME: 1-64 chars [a-z0-9_-].
    pub fn parse(spec: &str) -> Result<Source, String> {
        let Some((name, location)) = spec.split_once('=') else {
            return Err("a source is written NAME=LOCATION, e.g. `upwork=https://example.com/jobs.rss`".into());
        };
        let (name, location) = (name.trim(), location.trim());
        if name.is_empty() || name.len() > 64 {
            return Err("a source name must be 1 to 64 characters".into());
        }
        if !name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-') {
            return Err(format!("the source name `{name}` may only contain a-z, 0-9, `_` and `-`"));
        }
        let location = if location.is_empty() {
            return Err(format!("the source `{name}` has no location after `=`"));
        } else if location == "sample" {
            Location::Sample
        } else if location.contains("://") {
            let url = reqwest::Url::parse(location)
                .map_err(|e| format!("the location of source `{name}` is not a valid URL ({e})"))?;
            if !matches!(url.scheme(), "http" | "https") {
                return Err(format!("the source `{name}` must use an http or https URL"));
            }
            if url.host_str().is_none_or(str::is_empty) {
                return Err(format!("the URL of source `{name}` has no host"));
            }
            Location::Url(url.to_string())
        } else {
            Location::Path(PathBuf::from(location))
        };
        Ok(Source { name: name.to_string(), location })
    }

    /// The embedded default: one source named `sample` reading the embedded sample feed.
    pub fn sample() -> Source {
        Source { name: "sample".into(), location: Location::Sample }
    }
}

/// What one fetch of a source yielded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fetched {
    /// Postings that were read and passed [`Posting::normalise`].
    pub postings: Vec<Posting>,
    /// One reason per posting that could not be parsed or failed [`Posting::normalise`].
    pub failed: Vec<String>,
}

impl Fetched {
    fn absorb(&mut self, other: Fetched, prefix: &str) {
        self.postings.extend(other.postings);
        self.failed.extend(other.failed.into_iter().map(|r| format!("{prefix}: {r}")));
    }
}

/// Fetches every posting of the source. Err(reason) when the source as a whole fails
/// (unreachable URL, HTTP error status, unreadable file, body not JSON/NDJSON/RSS, too large);
/// the reason is a short sentence without secrets (URLs lose their userinfo and query).
pub async fn fetch(source: &Source, client: &reqwest::Client, now: DateTime<Utc>) -> Result<Fetched, String> {
    let mut out = Fetched::default();
    match &source.location {
        Location::Sample => parse_json(SAMPLE_FEED, &source.name, now, &mut out)?,
        Location::Path(path) => fetch_path(&source.name, path, now, &mut out).await?,
        Location::Url(url) => fetch_url(&source.name, url, client, now, &mut out).await?,
    }
    Ok(out)
}

/// A reqwest client for sources: 10 s timeout, at most 5 redirects, `User-Agent: specwright/<version>`.
pub fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::limited(5))
        .user_agent(concat!("specwright/", env!("CARGO_PKG_VERSION")))
        .build()
        .expect("an HTTP client with built-in settings always builds")
}

/// How a body is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// JSON or NDJSON, decided by content.
    Json,
    /// RSS or Atom.
    Xml,
    /// XML when the first non-blank character is `<`, else JSON or NDJSON.
    Sniff,
}

fn parse_body(text: &str, format: Format, platform: &str, now: DateTime<Utc>, out: &mut Fetched) -> Result<(), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let format = match format {
        Format::Sniff if text.trim_start().starts_with('<') => Format::Xml,
        Format::Sniff => Format::Json,
        f => f,
    };
    match format {
        Format::Xml => parse_feed(text, platform, out),
        _ => parse_json(text, platform, now, out),
    }
}

// ---------------------------------------------------------------------------------------------
// Files and folders

fn format_of(path: &Path) -> Option<Format> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "json" | "ndjson" | "jsonl" => Some(Format::Json),
        "xml" | "rss" | "atom" => Some(Format::Xml),
        _ => None,
    }
}

async fn fetch_path(platform: &str, path: &Path, now: DateTime<Utc>, out: &mut Fetched) -> Result<(), String> {
    let meta = tokio::fs::metadata(path).await.map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if meta.is_file() {
        let text = read_file(path, meta.len()).await?;
        return parse_body(&text, format_of(path).unwrap_or(Format::Sniff), platform, now, out);
    }
    if !meta.is_dir() {
        return Err(format!("{} is neither a file nor a folder", path.display()));
    }
    let mut entries = tokio::fs::read_dir(path).await.map_err(|e| format!("cannot list {}: {e}", path.display()))?;
    let mut files = Vec::new();
    while let Some(entry) = entries.next_entry().await.map_err(|e| format!("cannot list {}: {e}", path.display()))? {
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let file = entry.path();
        let Some(format) = format_of(&file) else { continue };
        // Follows symbolic links; sub-folders are not read.
        match tokio::fs::metadata(&file).await {
            Ok(m) if m.is_file() => files.push((name, file, format, Ok(m.len()))),
            Ok(_) => {}
            Err(e) => files.push((name, file, format, Err(e.to_string()))),
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, file, format, len) in files {
        let label = name.to_string_lossy().into_owned();
        let mut one = Fetched::default();
        let result = match len {
            Ok(len) => match read_file(&file, len).await {
                Ok(text) => parse_body(&text, format, platform, now, &mut one),
                Err(e) => Err(e),
            },
            Err(e) => Err(format!("cannot read {}: {e}", file.display())),
        };
        match result {
            Ok(()) => out.absorb(one, &label),
            Err(reason) => out.failed.push(format!("{label}: {reason}")),
        }
    }
    Ok(())
}

async fn read_file(path: &Path, len: u64) -> Result<String, String> {
    if len > MAX_BODY as u64 {
        return Err(format!("{} is larger than 10 MiB", path.display()));
    }
    let bytes = tokio::fs::read(path).await.map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if bytes.len() > MAX_BODY {
        return Err(format!("{} is larger than 10 MiB", path.display()));
    }
    String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8 text", path.display()))
}

// ---------------------------------------------------------------------------------------------
// URLs

/// The URL without userinfo, query and fragment, for messages.
fn safe_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.set_query(None);
            u.set_fragment(None);
            u.to_string()
        }
        Err(_) => "the source URL".into(),
    }
}

/// A transport failure as a short sentence; never includes the request URL.
fn request_error(safe: &str, e: &reqwest::Error) -> String {
    if e.is_timeout() {
        return format!("{safe} did not answer within 10 s");
    }
    if e.is_redirect() {
        return format!("{safe} redirected more than 5 times");
    }
    let cause = root_cause(e);
    if e.is_connect() {
        format!("could not connect to {safe} ({cause})")
    } else {
        format!("the request to {safe} failed ({cause})")
    }
}

/// The innermost cause of an error (the part that names the actual problem).
pub(crate) fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut inner: &(dyn std::error::Error + 'static) = e;
    while let Some(next) = inner.source() {
        inner = next;
    }
    // A bare reqwest error prints its URL; drop anything after " for url (".
    let text = inner.to_string();
    match text.find(" for url (") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

fn format_of_content_type(content_type: Option<&str>) -> Format {
    let Some(ct) = content_type else { return Format::Sniff };
    let essence = ct.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    if essence.ends_with("json")
        || essence.contains("ndjson")
        || essence.contains("jsonl")
        || essence.ends_with("+json")
    {
        Format::Json
    } else if essence.ends_with("/xml") || essence.ends_with("+xml") {
        Format::Xml
    } else {
        Format::Sniff
    }
}

async fn fetch_url(
    platform: &str,
    url: &str,
    client: &reqwest::Client,
    now: DateTime<Utc>,
    out: &mut Fetched,
) -> Result<(), String> {
    let safe = safe_url(url);
    let mut response =
        client.get(url).header(reqwest::header::ACCEPT, ACCEPT).send().await.map_err(|e| request_error(&safe, &e))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("{safe} answered HTTP {status}"));
    }
    if response.content_length().is_some_and(|n| n > MAX_BODY as u64) {
        return Err(format!("the response of {safe} is larger than 10 MiB"));
    }
    let content_type =
        response.headers().get(reqwest::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(str::to_string);
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| request_error(&safe, &e))? {
        if body.len() + chunk.len() > MAX_BODY {
            return Err(format!("the response of {safe} is larger than 10 MiB"));
        }
        body.extend_from_slice(&chunk);
    }
    let text = String::from_utf8_lossy(&body);
    parse_body(&text, format_of_content_type(content_type.as_deref()), platform, now, out)
        .map_err(|reason| format!("{safe}: {reason}"))
}

// ---------------------------------------------------------------------------------------------
// JSON and NDJSON

/// How every version of JSON Feed names itself in `version`.
const JSON_FEED: &str = "https://jsonfeed.org/version/";

const NOT_A_FEED: &str = "the content is neither JSON, NDJSON nor an RSS feed";

/// A list of postings (`[…]`, `{"jobs": […]}`, `{"items": […]}`), NDJSON, or a JSON Feed
/// (`{"version": "https://jsonfeed.org/version/1.1", "items": […]}`, read as a feed).
fn parse_json(text: &str, platform: &str, now: DateTime<Utc>, out: &mut Fetched) -> Result<(), String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Ok(());
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(Value::Array(items)) => {
            for (i, item) in items.into_iter().enumerate() {
                add_json(item, &format!("[{i}]"), now, out);
            }
            Ok(())
        }
        Ok(Value::Object(object))
            if object.get("version").and_then(Value::as_str).is_some_and(|v| v.starts_with(JSON_FEED)) =>
        {
            parse_feed(trimmed, platform, out)
        }
        Ok(Value::Object(mut object)) => {
            let list = ["jobs", "items"].into_iter().find_map(|key| object.remove(key).map(|v| (key, v)));
            match list {
                Some((key, Value::Array(items))) => {
                    for (i, item) in items.into_iter().enumerate() {
                        add_json(item, &format!("{key}[{i}]"), now, out);
                    }
                    Ok(())
                }
                Some((key, _)) => Err(format!("the `{key}` member of the JSON document is not a list")),
                // A single posting (an NDJSON feed of one line).
                None => {
                    add_json(Value::Object(object), "line 1", now, out);
                    Ok(())
                }
            }
        }
        Ok(_) => {
            Err("the JSON document is neither a list of postings nor an object with a `jobs` or `items` list".into())
        }
        Err(_) => parse_ndjson(text, now, out),
    }
}

fn parse_ndjson(text: &str, now: DateTime<Utc>, out: &mut Fetched) -> Result<(), String> {
    let mut any_json = false;
    let mut read = Fetched::default();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(value) => {
                any_json = true;
                add_json(value, &format!("line {}", n + 1), now, &mut read);
            }
            Err(e) => read.failed.push(format!("line {}: not JSON ({e})", n + 1)),
        }
    }
    // Not a single line of JSON: the body is something else (an HTML page, plain text).
    if !any_json {
        return Err(NOT_A_FEED.into());
    }
    out.postings.extend(read.postings);
    out.failed.extend(read.failed);
    Ok(())
}

/// Reads one JSON posting; `posted_hours_ago` (the sample feed's relative date) becomes
/// `posted_at = now − hours` when `posted_at` is absent.
fn add_json(value: Value, at: &str, now: DateTime<Utc>, out: &mut Fetched) {
    let posting = match Posting::deserialize(&value) {
        Ok(p) => p,
        Err(e) => {
            out.failed.push(format!("{at}: {}", locate_error(&value, &e)));
            return;
        }
    };
    let mut posting = posting;
    if posting.posted_at.is_none()
        && let Some(hours) = value.get("posted_hours_ago")
    {
        match hours.as_f64().filter(|h| h.is_finite() && *h >= 0.0 && *h < 1.0e6) {
            Some(h) => posting.posted_at = Some(now - chrono::Duration::seconds((h * 3600.0).round() as i64)),
            None => {
                out.failed.push(format!("{at}: posted_hours_ago: must be a number of hours, 0 or more"));
                return;
            }
        }
    }
    match posting.normalise() {
        Ok(p) => out.postings.push(p),
        Err(e) => out.failed.push(format!("{at}: {e}")),
    }
}

/// The serde error with the path of the offending field (serde_json's value deserializer does
/// not report paths), e.g. `budget.min: invalid type: string "x", expected f64`.
fn locate_error(value: &Value, err: &serde_json::Error) -> String {
    let Value::Object(o) = value else {
        return format!("expected a posting object, found {}", kind_of(value));
    };
    let found = check::<String>(o, "id", "")
        .or_else(|| check::<String>(o, "platform", ""))
        .or_else(|| check::<String>(o, "title", ""))
        .or_else(|| check::<Option<String>>(o, "url", ""))
        .or_else(|| check::<Option<String>>(o, "description", ""))
        .or_else(|| check_list(o, "skills"))
        .or_else(|| check_nested(o, "budget", check_budget))
        .or_else(|| check_nested(o, "client", check_client))
        .or_else(|| check::<Option<i64>>(o, "proposals_count", ""))
        .or_else(|| check::<Option<DateTime<Utc>>>(o, "posted_at", ""));
    found.unwrap_or_else(|| err.to_string())
}

fn check<T: DeserializeOwned>(o: &Map<String, Value>, name: &str, prefix: &str) -> Option<String> {
    T::deserialize(o.get(name)?).err().map(|e| format!("{prefix}{name}: {e}"))
}

fn check_list(o: &Map<String, Value>, name: &str) -> Option<String> {
    match o.get(name)? {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| String::deserialize(v).err().map(|e| format!("{name}[{i}]: {e}"))),
        other => Vec::<String>::deserialize(other).err().map(|e| format!("{name}: {e}")),
    }
}

fn check_nested(
    o: &Map<String, Value>,
    name: &str,
    fields: fn(&Map<String, Value>, &str) -> Option<String>,
) -> Option<String> {
    match o.get(name)? {
        Value::Null => None,
        Value::Object(inner) => fields(inner, &format!("{name}.")),
        other => Some(format!("{name}: expected an object, found {}", kind_of(other))),
    }
}

fn check_budget(o: &Map<String, Value>, p: &str) -> Option<String> {
    check::<BudgetKind>(o, "kind", p)
        .or_else(|| check::<Option<f64>>(o, "min", p))
        .or_else(|| check::<Option<f64>>(o, "max", p))
        .or_else(|| check::<String>(o, "currency", p))
        .or_else(|| {
            Budget::deserialize(Value::Object(o.clone())).err().map(|e| format!("{}: {e}", p.trim_end_matches('.')))
        })
}

fn check_client(o: &Map<String, Value>, p: &str) -> Option<String> {
    check::<Option<String>>(o, "name", p)
        .or_else(|| check::<Option<String>>(o, "country", p))
        .or_else(|| check::<bool>(o, "payment_verified", p))
        .or_else(|| check::<i64>(o, "jobs_posted", p))
        .or_else(|| check::<i64>(o, "hires", p))
        .or_else(|| check::<Option<f64>>(o, "total_spent", p))
        .or_else(|| check::<Option<f64>>(o, "rating", p))
        .or_else(|| {
            LeadClient::deserialize(Value::Object(o.clone())).err().map(|e| format!("{}: {e}", p.trim_end_matches('.')))
        })
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

// ---------------------------------------------------------------------------------------------
// RSS, Atom and JSON Feed

/// Reads an RSS (0.9x, 1.0, 2.0), Atom or JSON Feed document with `feed-rs` and maps each item or
/// entry onto a posting.
fn parse_feed(text: &str, platform: &str, out: &mut Fetched) -> Result<(), String> {
    // An entry without an id (RSS `guid`, Atom `id`, JSON Feed `id`) is known by its link; one
    // without either is refused rather than given an id made up from its title.
    let parser = feed_rs::parser::Builder::new()
        .id_generator(|links, _, _| entry_link(links).unwrap_or_default().to_string())
        .build();
    let feed = parser.parse(text.as_bytes()).map_err(|e| match e {
        feed_rs::parser::ParseFeedError::ParseError(feed_rs::parser::ParseErrorKind::NoFeedRoot) => match root(text) {
            Some(name) => format!("the XML document is not an RSS or Atom feed (its root element is <{name}>)"),
            None => NOT_A_FEED.to_string(),
        },
        feed_rs::parser::ParseFeedError::XmlReader(e) => format!("the feed is not well-formed XML ({e})"),
        feed_rs::parser::ParseFeedError::JsonSerde(e) => format!("the JSON Feed is not valid ({e})"),
        other => format!("the feed cannot be read ({other})"),
    })?;
    for (n, entry) in feed.entries.into_iter().enumerate() {
        add_item(entry, n + 1, platform, out);
    }
    Ok(())
}

/// The name of an XML document's root element, for the message of a document that is no feed.
fn root(text: &str) -> Option<&str> {
    let mut rest = text;
    loop {
        let at = rest.find('<')?;
        rest = &rest[at + 1..];
        if !rest.starts_with(['?', '!']) {
            let end = rest.find(|c: char| c.is_whitespace() || c == '>' || c == '/')?;
            return Some(&rest[..end]).filter(|name| !name.is_empty());
        }
    }
}

/// The entry's own page: its first link without a `rel`, or `rel="alternate"`.
fn entry_link(links: &[feed_rs::model::Link]) -> Option<&str> {
    links
        .iter()
        .find(|l| l.rel.as_deref().is_none_or(|r| r == "alternate"))
        .map(|l| l.href.trim())
        .filter(|href| !href.is_empty())
}

/// Maps one RSS item, Atom entry or JSON Feed item onto a posting.
fn add_item(entry: feed_rs::model::Entry, n: usize, platform: &str, out: &mut Fetched) {
    let at = format!("item {n}");
    let Some(title) = entry.title.as_ref().map(|t| html_to_text(&t.content)).filter(|t| !t.is_empty()) else {
        out.failed.push(format!("{at}: the item has no title"));
        return;
    };
    let id = entry.id.trim();
    if id.is_empty() {
        out.failed.push(format!("{at}: the item has no guid or link"));
        return;
    }
    let summary = entry.summary.as_ref().map(|t| t.content.as_str());
    let raw = summary.filter(|s| !s.trim().is_empty()).or(entry.content.as_ref().and_then(|c| c.body.as_deref()));
    let description = raw.map(html_to_text).filter(|d| !d.is_empty());
    let (budget, listed) = description.as_deref().map(listed_fields).unwrap_or_default();
    let mut skills: Vec<String> =
        entry.categories.iter().map(|c| c.term.trim().to_string()).filter(|t| !t.is_empty()).collect();
    skills.extend(listed);
    let posting = Posting {
        id: id.to_string(),
        platform: platform.to_string(),
        title,
        url: entry_link(&entry.links).map(str::to_string),
        description,
        skills,
        budget,
        client: None,
        proposals_count: None,
        posted_at: entry.published.or(entry.updated),
    };
    match posting.normalise() {
        Ok(p) => out.postings.push(p),
        Err(e) => out.failed.push(format!("{at}: {e}")),
    }
}

/// Reads the Upwork-style lines of a description: `Budget: $1,500` (fixed),
/// `Hourly Range: $25.00-$50.00` (hourly) and `Skills: Rust, PostgreSQL` (comma-separated).
fn listed_fields(text: &str) -> (Option<Budget>, Vec<String>) {
    let mut budget = None;
    let mut skills = Vec::new();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else { continue };
        let (key, value) = (key.trim().to_ascii_lowercase(), value.trim());
        match key.as_str() {
            "budget" if budget.is_none() => {
                budget = money(value).map(|(amount, currency)| Budget {
                    kind: BudgetKind::Fixed,
                    min: Some(amount),
                    max: None,
                    currency: currency.into(),
                });
            }
            "hourly range" | "hourly rate" | "hourly" if budget.is_none() => {
                let mut parts = value.splitn(2, ['-', '–']).map(money);
                let low = parts.next().flatten();
                let high = parts.next().flatten();
                if let Some((min, currency)) = low {
                    budget = Some(Budget {
                        kind: BudgetKind::Hourly,
                        min: Some(min),
                        max: high.map(|(m, _)| m),
                        currency: currency.into(),
                    });
                }
            }
            "skills" => {
                skills.extend(value.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string));
            }
            _ => {}
        }
    }
    (budget, skills)
}

/// `$1,500`, `€40.00`, `£300`, `1500 EUR` → amount and ISO currency (USD unless stated).
fn money(text: &str) -> Option<(f64, &'static str)> {
    let text = text.trim();
    let upper = text.to_ascii_uppercase();
    let currency = if text.contains('€') || upper.contains("EUR") {
        "EUR"
    } else if text.contains('£') || upper.contains("GBP") {
        "GBP"
    } else {
        "USD"
    };
    let start = text.find(|c: char| c.is_ascii_digit())?;
    let number: String = text[start..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '.')
        .filter(|c| *c != ',')
        .collect();
    let amount: f64 = number.trim_end_matches('.').parse().ok()?;
    amount.is_finite().then_some((amount, currency))
}

/// HTML (or plain text) as plain text: tags stripped (block tags become line breaks), HTML
/// entities decoded, runs of blanks collapsed, at most one empty line in a row.
fn html_to_text(html: &str) -> String {
    let mut text = String::with_capacity(html.len());
    let mut rest = html;
    let mut skip_until: Option<&str> = None;
    while let Some(lt) = rest.find('<') {
        if skip_until.is_none() {
            text.push_str(&rest[..lt]);
        }
        // `<` not followed by a tag name, `/` or `!` (e.g. `1 < 2`) is text.
        let starts_tag = rest[lt + 1..].starts_with(|c: char| c.is_ascii_alphabetic() || c == '/' || c == '!');
        let Some(gt) = rest[lt..].find('>').filter(|_| starts_tag) else {
            if skip_until.is_none() {
                text.push('<');
            }
            rest = &rest[lt + 1..];
            continue;
        };
        let tag = &rest[lt + 1..lt + gt];
        rest = &rest[lt + gt + 1..];
        let closing = tag.starts_with('/');
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        if let Some(until) = skip_until {
            if closing && name == until {
                skip_until = None;
            }
            continue;
        }
        match name.as_str() {
            "script" if !closing => skip_until = Some("script"),
            "style" if !closing => skip_until = Some("style"),
            "br" | "p" | "div" | "li" | "ul" | "ol" | "tr" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "hr"
            | "blockquote" | "pre" | "table" => text.push('\n'),
            "td" | "th" => text.push(' '),
            _ => {}
        }
    }
    if skip_until.is_none() {
        text.push_str(rest);
    }
    let decoded = decode_entities(&text);
    let mut lines = Vec::new();
    let mut blank = false;
    for line in decoded.lines() {
        let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
        if line.is_empty() {
            if !blank && !lines.is_empty() {
                lines.push(line);
            }
            blank = true;
        } else {
            lines.push(line);
            blank = false;
        }
    }
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines.join("\n")
}

/// Decodes HTML character and common named entities; anything unknown stays as written.
fn decode_entities(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let end = rest[1..].find(';').map(|i| i + 1).filter(|&i| i <= 12);
        let decoded = end.and_then(|i| {
            let name = &rest[1..i];
            let c = if let Some(num) = name.strip_prefix("#x").or_else(|| name.strip_prefix("#X")) {
                u32::from_str_radix(num, 16).ok().and_then(char::from_u32).map(String::from)
            } else if let Some(num) = name.strip_prefix('#') {
                num.parse::<u32>().ok().and_then(char::from_u32).map(String::from)
            } else {
                named_entity(name).map(str::to_string)
            };
            c.map(|c| (c, i + 1))
        });
        match decoded {
            Some((c, len)) => {
                out.push_str(&c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn named_entity(name: &str) -> Option<&'static str> {
    Some(match name {
        "amp" => "&",
        "lt" => "<",
        "gt" => ">",
        "quot" => "\"",
        "apos" => "'",
        "nbsp" => " ",
        "ndash" => "–",
        "mdash" => "—",
        "hellip" => "…",
        "lsquo" => "‘",
        "rsquo" => "’",
        "ldquo" => "“",
        "rdquo" => "”",
        "bull" => "•",
        "middot" => "·",
        "euro" => "€",
        "pound" => "£",
        "copy" => "©",
        "reg" => "®",
        "trade" => "™",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2025, 3, 10, 12, 0, 0).unwrap()
    }

    fn source(location: Location) -> Source {
        Source { name: "test".into(), location }
    }

    async fn fetch_text(name: &str, text: &str) -> Result<Fetched, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        fetch(&source(Location::Path(path)), &http_client(), now()).await
    }

    const TWO_JSON: &str = r#"[
        {"id": "a-1", "platform": "upwork", "title": "Rust API", "skills": ["Rust", "rust", " Axum "],
         "budget": {"kind": "fixed", "min": 1500, "currency": "USD"}},
        {"id": "a-2", "platform": "Freelancer", "title": "  Go worker  ", "posted_at": "2025-03-01T10:00:00Z"}
    ]"#;

    #[test]
    fn parse_accepts_each_location_kind() {
        assert_eq!(Source::parse("sample=sample").unwrap(), Source::sample());
        let s = Source::parse(" upwork-rss_2 = https://www.upwork.com/ab/feed/jobs/rss?q=rust ").unwrap();
        assert_eq!(s.name, "upwork-rss_2");
        assert!(matches!(&s.location, Location::Url(u) if u.starts_with("https://www.upwork.com/ab/feed/jobs/rss")));
        let s = Source::parse("local=./feeds/jobs.json").unwrap();
        assert_eq!(s.location, Location::Path(PathBuf::from("./feeds/jobs.json")));
        let s = Source::parse("odd=C:=x").unwrap();
        assert_eq!(s.location, Location::Path(PathBuf::from("C:=x")));
    }

    #[test]
    fn parse_refuses_bad_names_and_locations() {
        for bad in [
            "no-equals-sign",
            "=sample",
            "Upwork=sample",
            "up work=sample",
            "upwork.com=sample",
            "ünï=sample",
            "name=",
            "ftp=ftp://example.com/feed.json",
            "bad=http://",
        ] {
            assert!(Source::parse(bad).is_err(), "{bad} should be refused");
        }
        assert!(Source::parse(&format!("{}=sample", "a".repeat(65))).is_err());
        assert!(Source::parse(&format!("{}=sample", "a".repeat(64))).is_ok());
        // The message of a spec without `=` does not echo it (it may hold a secret URL).
        let e = Source::parse("https://user:secret@example.com").unwrap_err();
        assert!(!e.contains("secret"), "{e}");
    }

    #[test]
    fn location_display_hides_secrets() {
        let s = Source::parse("x=https://user:pw@example.com/feed?token=abc#f").unwrap();
        assert_eq!(s.location.to_string(), "https://example.com/feed");
    }

    #[tokio::test]
    async fn json_array() {
        let f = fetch_text("jobs.json", TWO_JSON).await.unwrap();
        assert!(f.failed.is_empty(), "{:?}", f.failed);
        assert_eq!(f.postings.len(), 2);
        assert_eq!(f.postings[0].skills, vec!["rust", "axum"]);
        assert_eq!(f.postings[1].platform, "freelancer");
        assert_eq!(f.postings[1].title, "Go worker");
        assert_eq!(f.postings[1].posted_at, Some(Utc.with_ymd_and_hms(2025, 3, 1, 10, 0, 0).unwrap()));
    }

    #[tokio::test]
    async fn json_object_with_jobs_or_items() {
        let doc = format!(r#"{{"count": 2, "jobs": {TWO_JSON}}}"#);
        let f = fetch_text("jobs.json", &doc).await.unwrap();
        assert_eq!(f.postings.len(), 2);
        let doc = format!(r#"{{"items": {TWO_JSON}}}"#);
        let f = fetch_text("jobs.json", &doc).await.unwrap();
        assert_eq!(f.postings.len(), 2);
        assert!(fetch_text("jobs.json", r#"{"jobs": 3}"#).await.is_err());
        assert!(fetch_text("jobs.json", "42").await.is_err());
    }

    #[tokio::test]
    async fn json_element_errors_name_the_field() {
        let doc = r#"[
            {"id": "ok", "platform": "upwork", "title": "Fine"},
            {"id": "b", "platform": "upwork", "title": "x", "budget": {"kind": "fixed", "min": "lots", "currency": "USD"}},
            {"id": "c", "platform": "upwork"},
            {"id": "d", "platform": "upwork", "title": "x", "skills": ["rust", 7]},
            {"id": "e", "platform": "upwork", "title": "x", "client": {"payment_verified": true, "jobs_posted": 1}},
            {"id": "f", "platform": "upwork", "title": "x", "budget": {"kind": "fixed", "min": 5, "currency": "usd"}},
            "not an object"
        ]"#;
        let f = fetch_text("jobs.json", doc).await.unwrap();
        assert_eq!(f.postings.len(), 1);
        assert_eq!(f.failed.len(), 6, "{:?}", f.failed);
        assert!(f.failed[0].starts_with("[1]: budget.min: invalid type"), "{}", f.failed[0]);
        assert!(f.failed[1].contains("missing field `title`"), "{}", f.failed[1]);
        assert!(f.failed[2].starts_with("[3]: skills[1]:"), "{}", f.failed[2]);
        assert!(f.failed[3].contains("client: missing field `hires`"), "{}", f.failed[3]);
        assert!(f.failed[4].contains("ISO 4217"), "{}", f.failed[4]);
        assert!(f.failed[5].contains("expected a posting object"), "{}", f.failed[5]);
    }

    #[tokio::test]
    async fn ndjson_with_one_bad_line() {
        let doc = concat!(
            r#"{"id": "n-1", "platform": "upwork", "title": "One"}"#,
            "\n\n",
            "{this is not json\n",
            r#"{"id": "n-2", "platform": "upwork", "title": "Two"}"#,
            "\n"
        );
        let f = fetch_text("jobs.ndjson", doc).await.unwrap();
        assert_eq!(f.postings.len(), 2);
        assert_eq!(f.failed.len(), 1);
        assert!(f.failed[0].starts_with("line 3:"), "{}", f.failed[0]);
        // A body where no line is JSON is not a feed.
        assert!(fetch_text("jobs.jsonl", "hello\nworld\n").await.is_err());
    }

    #[tokio::test]
    async fn folder_reads_feed_files_in_name_order() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b.ndjson"), r#"{"id": "b-1", "platform": "upwork", "title": "B"}"#).unwrap();
        std::fs::write(
            dir.path().join("a.json"),
            r#"[{"id": "a-1", "platform": "upwork", "title": "A1"}, {"id": "a-2", "platform": "upwork", "title": "A2"}]"#,
        )
        .unwrap();
        std::fs::write(dir.path().join(".hidden.json"), r#"[{"id": "h", "platform": "upwork", "title": "H"}]"#)
            .unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not a feed").unwrap();
        std::fs::write(dir.path().join("c.json"), "{ broken").unwrap();
        std::fs::create_dir(dir.path().join("sub.json")).unwrap();
        let src = source(Location::Path(dir.path().to_path_buf()));
        let f = fetch(&src, &http_client(), now()).await.unwrap();
        let ids: Vec<_> = f.postings.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, ["a-1", "a-2", "b-1"]);
        assert_eq!(f.failed.len(), 1, "{:?}", f.failed);
        assert!(f.failed[0].starts_with("c.json: "), "{}", f.failed[0]);
        let again = fetch(&src, &http_client(), now()).await.unwrap();
        assert_eq!(again, f);
    }

    #[tokio::test]
    async fn missing_file_fails_the_source() {
        let dir = tempfile::tempdir().unwrap();
        let src = source(Location::Path(dir.path().join("nope.json")));
        let e = fetch(&src, &http_client(), now()).await.unwrap_err();
        assert!(e.contains("cannot read"), "{e}");
    }

    #[tokio::test]
    async fn sample_feed_is_valid_and_relative_to_now() {
        let f = fetch(&Source::sample(), &http_client(), now()).await.unwrap();
        assert!(f.failed.is_empty(), "{:?}", f.failed);
        assert_eq!(f.postings.len(), 40);
        let mut ids: Vec<_> = f.postings.iter().map(|p| (p.platform.clone(), p.id.clone())).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 40, "ids are unique");
        for p in &f.postings {
            let at = p.posted_at.expect("every sample posting has a date");
            assert!(at <= now() && at > now() - chrono::Duration::days(60), "{}: {at}", p.id);
            assert!(["upwork", "freelancer", "toptal", "peopleperhour"].contains(&p.platform.as_str()));
        }
        assert!(f.postings.iter().any(|p| p.budget.is_none()));
        assert!(f.postings.iter().any(|p| p.client.is_none()));
        assert!(f.postings.iter().any(|p| p.skills.is_empty()));
        assert!(f.postings.iter().any(|p| p.budget.as_ref().is_some_and(|b| b.kind == BudgetKind::Hourly)));
        assert!(f.postings.iter().any(|p| p.budget.as_ref().is_some_and(|b| b.currency != "USD")));
        // Stable: a second fetch at another time sees the same postings, shifted.
        let later = now() + chrono::Duration::hours(3);
        let g = fetch(&Source::sample(), &http_client(), later).await.unwrap();
        assert_eq!(g.postings[0].id, f.postings[0].id);
        assert_eq!(g.postings[0].posted_at.unwrap() - f.postings[0].posted_at.unwrap(), chrono::Duration::hours(3));
    }

    const RSS: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">
  <channel>
    <title>All jobs | upwork.com</title>
    <link>https://www.upwork.com</link>
    <item>
      <title><![CDATA[Rust backend for a logistics API - Upwork]]></title>
      <link>https://www.upwork.com/jobs/Rust-backend_~01abc?source=rss</link>
      <description><![CDATA[We need a <b>senior</b> Rust engineer &amp; mentor.<br /><br /><b>Budget</b>: $1,500
<br /><b>Posted On</b>: March 09, 2025 10:00 UTC<br /><b>Skills</b>:Rust,     PostgreSQL,     Docker    
<br /><b>Country</b>: Germany
<br /><a href="https://www.upwork.com/jobs/~01abc">click to apply</a>
]]></description>
      <pubDate>Sun, 09 Mar 2025 10:00:00 +0000</pubDate>
      <guid>https://www.upwork.com/jobs/~01abc</guid>
      <category>Web Development</category>
    </item>
    <item>
      <title>Data pipeline in Python &amp; Airflow</title>
      <link>https://www.upwork.com/jobs/~02def</link>
      <description>&lt;p&gt;Hourly work on ETL&amp;nbsp;jobs &amp;mdash; long term.&lt;/p&gt;&lt;br /&gt;&lt;b&gt;Hourly Range&lt;/b&gt;: $25.00-$50.00
&lt;br /&gt;&lt;b&gt;Skills&lt;/b&gt;: Python, Apache Airflow</description>
      <pubDate>Mon, 10 Mar 2025 08:30:00 GMT</pubDate>
    </item>
    <item>
      <description>An item without a title</description>
      <guid>x-3</guid>
    </item>
  </channel>
</rss>"#;

    #[tokio::test]
    async fn rss_with_upwork_descriptions() {
        let f = fetch_text("jobs.rss", RSS).await.unwrap();
        assert_eq!(f.postings.len(), 2, "{:?}", f.failed);
        assert_eq!(f.failed.len(), 1);
        assert!(f.failed[0].contains("no title"), "{}", f.failed[0]);

        let a = &f.postings[0];
        assert_eq!(a.id, "https://www.upwork.com/jobs/~01abc");
        assert_eq!(a.platform, "test");
        assert_eq!(a.title, "Rust backend for a logistics API - Upwork");
        assert_eq!(a.url.as_deref(), Some("https://www.upwork.com/jobs/Rust-backend_~01abc?source=rss"));
        let d = a.description.as_deref().unwrap();
        assert!(d.starts_with("We need a senior Rust engineer & mentor."), "{d}");
        assert!(d.contains("Budget: $1,500") && !d.contains('<'), "{d}");
        let b = a.budget.as_ref().unwrap();
        assert_eq!((b.kind, b.min, b.max, b.currency.as_str()), (BudgetKind::Fixed, Some(1500.0), None, "USD"));
        assert_eq!(a.skills, vec!["web development", "rust", "postgresql", "docker"]);
        assert_eq!(a.posted_at, Some(Utc.with_ymd_and_hms(2025, 3, 9, 10, 0, 0).unwrap()));

        let c = &f.postings[1];
        assert_eq!(c.id, "https://www.upwork.com/jobs/~02def", "link when there is no guid");
        assert_eq!(c.title, "Data pipeline in Python & Airflow");
        let d = c.description.as_deref().unwrap();
        assert!(d.starts_with("Hourly work on ETL jobs — long term."), "{d}");
        let b = c.budget.as_ref().unwrap();
        assert_eq!((b.kind, b.min, b.max, b.currency.as_str()), (BudgetKind::Hourly, Some(25.0), Some(50.0), "USD"));
        assert_eq!(c.skills, vec!["python", "apache airflow"]);
        assert_eq!(c.posted_at, Some(Utc.with_ymd_and_hms(2025, 3, 10, 8, 30, 0).unwrap()));
    }

    #[tokio::test]
    async fn atom_entries_and_bad_xml() {
        let atom = r#"<?xml version="1.0"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Jobs</title>
  <entry>
    <id>urn:job:77</id>
    <title>Go microservice</title>
    <link rel="alternate" href="https://jobs.example.com/77"/>
    <category term="Go"/>
    <summary type="html">&lt;p&gt;Budget: €2,000&lt;/p&gt;</summary>
    <updated>2025-03-08T09:00:00Z</updated>
  </entry>
</feed>"#;
        let f = fetch_text("jobs.xml", atom).await.unwrap();
        assert_eq!(f.postings.len(), 1, "{:?}", f.failed);
        let p = &f.postings[0];
        assert_eq!(p.id, "urn:job:77");
        assert_eq!(p.url.as_deref(), Some("https://jobs.example.com/77"));
        assert_eq!(p.skills, vec!["go"]);
        let b = p.budget.as_ref().unwrap();
        assert_eq!((b.min, b.currency.as_str()), (Some(2000.0), "EUR"));
        assert_eq!(p.posted_at, Some(Utc.with_ymd_and_hms(2025, 3, 8, 9, 0, 0).unwrap()));

        assert!(fetch_text("jobs.xml", "<rss><channel><item></channel></rss>").await.is_err());
        let e = fetch_text("jobs.xml", "<html><body>hi</body></html>").await.unwrap_err();
        assert!(e.contains("not an RSS or Atom feed"), "{e}");
    }

    /// RSS 1.0 (RDF) with its Dublin Core date, RSS 0.91, and a JSON Feed: every flavour a job
    /// board publishes is read into postings, dates included.
    #[tokio::test]
    async fn rss_1_0_rss_0_91_and_json_feed() {
        let rdf = r#"<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
         xmlns:dc="http://purl.org/dc/elements/1.1/">
  <channel rdf:about="https://jobs.example.com/"><title>Jobs</title><link>https://jobs.example.com/</link>
    <description>Jobs</description></channel>
  <item rdf:about="https://jobs.example.com/1">
    <title>Rust CLI tool</title>
    <link>https://jobs.example.com/1</link>
    <description>Budget: $900&lt;br/&gt;Skills: Rust, Clap</description>
    <dc:date>2025-03-07T12:00:00Z</dc:date>
  </item>
</rdf:RDF>"#;
        let f = fetch_text("jobs.rss", rdf).await.unwrap();
        assert_eq!(f.postings.len(), 1, "{:?}", f.failed);
        let p = &f.postings[0];
        assert_eq!((p.id.as_str(), p.title.as_str()), ("https://jobs.example.com/1", "Rust CLI tool"));
        assert_eq!(p.posted_at, Some(Utc.with_ymd_and_hms(2025, 3, 7, 12, 0, 0).unwrap()), "dc:date is read");
        assert_eq!(p.skills, vec!["rust", "clap"]);
        assert_eq!(p.budget.as_ref().and_then(|b| b.min), Some(900.0));

        let rss091 = r#"<rss version="0.91"><channel><title>Jobs</title><link>https://jobs.example.com/</link>
  <description>Jobs</description>
  <item><title>Legacy PHP port</title><link>https://jobs.example.com/2</link><description>Port it.</description></item>
</channel></rss>"#;
        let f = fetch_text("old.xml", rss091).await.unwrap();
        assert_eq!(f.postings.len(), 1, "{:?}", f.failed);
        assert_eq!(f.postings[0].id, "https://jobs.example.com/2");

        let json_feed = r#"{
  "version": "https://jsonfeed.org/version/1.1",
  "title": "Jobs",
  "items": [
    {"id": "jf-1", "url": "https://jobs.example.com/jf-1", "title": "Axum API",
     "content_html": "<p>Hourly Range: $40-$60</p>", "tags": ["Rust", "Axum"],
     "date_published": "2025-03-06T08:00:00Z"},
    {"id": "jf-2", "content_text": "No title here"}
  ]
}"#;
        let f = fetch_text("feed.json", json_feed).await.unwrap();
        assert_eq!(f.postings.len(), 1, "{:?}", f.failed);
        assert_eq!(f.failed, vec!["item 2: the item has no title"]);
        let p = &f.postings[0];
        assert_eq!((p.id.as_str(), p.platform.as_str()), ("jf-1", "test"));
        assert_eq!(p.url.as_deref(), Some("https://jobs.example.com/jf-1"));
        assert_eq!(p.skills, vec!["rust", "axum"]);
        assert_eq!(p.posted_at, Some(Utc.with_ymd_and_hms(2025, 3, 6, 8, 0, 0).unwrap()));
        let b = p.budget.as_ref().unwrap();
        assert_eq!((b.kind, b.min, b.max), (BudgetKind::Hourly, Some(40.0), Some(60.0)));

        // An item with neither an id nor a link is refused, not given a made-up id.
        let anonymous =
            r#"<rss version="2.0"><channel><title>J</title><item><title>Who?</title></item></channel></rss>"#;
        let f = fetch_text("jobs.rss", anonymous).await.unwrap();
        assert_eq!(f.failed, vec!["item 1: the item has no guid or link"]);
    }

    #[test]
    fn html_to_text_strips_and_decodes() {
        assert_eq!(
            html_to_text("a<b>b</b>&amp;c<br>d&nbsp;&nbsp;e &#8364;5 &#x41; R&D &bogus;"),
            "ab&c\nd e €5 A R&D &bogus;"
        );
        assert_eq!(html_to_text("<script>alert(1)</script><p>x</p><p></p><p>y</p>"), "x\n\ny");
        assert_eq!(html_to_text("1 < 2 but no tag"), "1 < 2 but no tag");
        assert_eq!(html_to_text("a < b and c > d <i>e</i>"), "a < b and c > d e");
        assert_eq!(html_to_text("x <unclosed"), "x <unclosed");
    }

    #[test]
    fn money_formats() {
        assert_eq!(money("$1,500"), Some((1500.0, "USD")));
        assert_eq!(money("$25.00"), Some((25.0, "USD")));
        assert_eq!(money("£300"), Some((300.0, "GBP")));
        assert_eq!(money("1200 EUR"), Some((1200.0, "EUR")));
        assert_eq!(money("negotiable"), None);
    }

    // --- URL sources against a local server --------------------------------------------------

    use axum::Router;
    use axum::http::{StatusCode, header};
    use axum::response::{IntoResponse, Response};
    use axum::routing::get;

    async fn serve(router: Router) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        format!("http://{addr}")
    }

    fn typed(content_type: &'static str, body: impl Into<String>) -> Response {
        ([(header::CONTENT_TYPE, content_type)], body.into()).into_response()
    }

    fn untyped(body: &'static str) -> Response {
        let mut r = Response::new(axum::body::Body::from(body));
        r.headers_mut().remove(header::CONTENT_TYPE);
        r
    }

    fn url_source(url: String) -> Source {
        Source { name: "remote".into(), location: Location::Url(url) }
    }

    #[tokio::test]
    async fn url_sources() {
        let ndjson = concat!(
            r#"{"id": "n-1", "platform": "upwork", "title": "One"}"#,
            "\nnope\n",
            r#"{"id": "n-2", "platform": "upwork", "title": "Two"}"#
        );
        let router = Router::new()
            .route("/jobs.json", get(|| async { typed("application/json; charset=utf-8", TWO_JSON) }))
            .route("/jobs.ndjson", get(move || async move { typed("application/x-ndjson", ndjson) }))
            .route("/jobs.rss", get(|| async { typed("application/rss+xml", RSS) }))
            .route("/plain", get(|| async { typed("text/plain", RSS) }))
            .route("/bare", get(|| async { untyped(RSS) }))
            .route("/bare-json", get(|| async { untyped(TWO_JSON) }))
            .route("/fail", get(|| async { (StatusCode::INTERNAL_SERVER_ERROR, "boom").into_response() }))
            .route("/huge", get(|| async { typed("application/json", "[".repeat(MAX_BODY + 1)) }))
            .route("/html", get(|| async { typed("text/html", "<html><body>Sign in</body></html>") }))
            .route(
                "/ua",
                get(|headers: axum::http::HeaderMap| async move {
                    let ua = headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()).unwrap_or("");
                    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or("");
                    assert!(ua.starts_with("specwright/"), "{ua}");
                    assert!(accept.contains("application/rss+xml"), "{accept}");
                    typed("application/json", "[]")
                }),
            );
        let base = serve(router).await;
        let client = http_client();
        let go = |path: &str| {
            let src = url_source(format!("{base}{path}"));
            let client = client.clone();
            async move { fetch(&src, &client, now()).await }
        };

        assert_eq!(go("/jobs.json").await.unwrap().postings.len(), 2);
        let f = go("/jobs.ndjson").await.unwrap();
        assert_eq!((f.postings.len(), f.failed.len()), (2, 1));
        for path in ["/jobs.rss", "/plain", "/bare"] {
            let f = go(path).await.unwrap();
            assert_eq!((f.postings.len(), f.failed.len()), (2, 1), "{path}");
            assert_eq!(f.postings[0].platform, "remote");
        }
        assert_eq!(go("/bare-json").await.unwrap().postings.len(), 2);
        assert_eq!(go("/ua").await.unwrap(), Fetched::default());

        let e = go("/fail").await.unwrap_err();
        assert!(e.contains("500"), "{e}");
        let e = go("/huge").await.unwrap_err();
        assert!(e.contains("larger than 10 MiB"), "{e}");
        let e = go("/html").await.unwrap_err();
        assert!(e.contains("not an RSS or Atom feed"), "{e}");

        // Userinfo and query never reach the message.
        let secret = base.replace("http://", "http://user:hunter2@") + "/fail?token=hunter2";
        let e = fetch(&url_source(secret), &client, now()).await.unwrap_err();
        assert!(e.contains("500") && !e.contains("hunter2"), "{e}");
    }

    #[tokio::test]
    async fn url_body_cap_applies_while_streaming() {
        // No Content-Length: the body ends when the connection closes.
        use tokio::io::AsyncWriteExt;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 4096];
            let _ = tokio::io::AsyncReadExt::read(&mut socket, &mut buf).await;
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nConnection: close\r\n\r\n";
            socket.write_all(head.as_bytes()).await.unwrap();
            let chunk = vec![b' '; 64 * 1024];
            for _ in 0..(MAX_BODY / chunk.len() + 2) {
                if socket.write_all(&chunk).await.is_err() {
                    return;
                }
            }
        });
        let e = fetch(&url_source(format!("http://{addr}/stream")), &http_client(), now()).await.unwrap_err();
        assert!(e.contains("larger than 10 MiB"), "{e}");
    }

    #[tokio::test]
    async fn unreachable_url_fails_the_source() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let e = fetch(&url_source(format!("http://{addr}/jobs.json")), &http_client(), now()).await.unwrap_err();
        assert!(e.contains("could not connect"), "{e}");
    }
}
