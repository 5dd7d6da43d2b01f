//! Files an operation answers (`output = "file"`): a media type, an optional name for the
//! client to save it under, and a body streamed as the client reads it.

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;

/// Reads bytes `start..=end` of a file, as the client takes them.
type RangeSource = Box<dyn FnOnce(u64, u64) -> Body + Send>;

/// A file an operation answers.
pub struct File {
    /// Its media type, one of those the operation declares (`text/csv`, `image/png`, …).
    pub media_type: String,
    /// The name a client saves it under (`Content-Disposition: attachment`); `None` answers it
    /// inline.
    pub filename: Option<String>,
    /// Its length in bytes, when known (`Content-Length`).
    pub length: Option<u64>,
    /// The content.
    pub body: Body,
    /// Its entity tag (`"…"`, strong): the `ETag` of the answer, and what `If-Range` must name
    /// for a part to be answered.
    pub etag: Option<String>,
    /// Reads a part of it, for an operation that answers ranges ([`File::ranges`]).
    range: Option<RangeSource>,
}

impl std::fmt::Debug for File {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("File")
            .field("media_type", &self.media_type)
            .field("filename", &self.filename)
            .field("length", &self.length)
            .field("etag", &self.etag)
            .field("ranges", &self.range.is_some())
            .finish_non_exhaustive()
    }
}

/// What a `Range` header asks of a file of a given length (RFC 9110 section 14.1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteRange {
    /// Bytes `start..=end` (inclusive, within the file).
    Part(u64, u64),
    /// No byte of the file is in the range: `416`.
    Unsatisfiable,
    /// The whole file: no range, one that is not `bytes=…`, several ranges, or a malformed one
    /// (a server may ignore a `Range` it does not serve, section 14.2).
    Whole,
}

impl ByteRange {
    /// Reads `Range: bytes=first-last`, `bytes=first-` or `bytes=-suffix` against a file of
    /// `length` bytes; a last position past the end is the end.
    pub fn parse(header: Option<&str>, length: u64) -> ByteRange {
        let Some(spec) = header.and_then(|h| h.trim().strip_prefix("bytes=")) else { return ByteRange::Whole };
        if spec.contains(',') {
            return ByteRange::Whole;
        }
        let Some((first, last)) = spec.trim().split_once('-') else { return ByteRange::Whole };
        let number = |s: &str| (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse::<u64>().ok());
        match (number(first), number(last)) {
            // A suffix: the last `n` bytes.
            (None, Some(Some(n))) if first.is_empty() => match (n, length) {
                (0, _) | (_, 0) => ByteRange::Unsatisfiable,
                (n, len) => ByteRange::Part(len.saturating_sub(n), len - 1),
            },
            (Some(Some(start)), None) if last.is_empty() => {
                if start >= length {
                    ByteRange::Unsatisfiable
                } else {
                    ByteRange::Part(start, length - 1)
                }
            }
            (Some(Some(start)), Some(Some(end))) if start <= end => {
                if start >= length {
                    ByteRange::Unsatisfiable
                } else {
                    ByteRange::Part(start, end.min(length - 1))
                }
            }
            // Past `u64`: no file is that long.
            (Some(None), _) => ByteRange::Unsatisfiable,
            _ => ByteRange::Whole,
        }
    }
}

impl File {
    /// A file held in memory.
    pub fn bytes(media_type: impl Into<String>, bytes: impl Into<Bytes>) -> Self {
        let bytes = bytes.into();
        File {
            media_type: media_type.into(),
            filename: None,
            length: Some(bytes.len() as u64),
            body: Body::from(bytes.clone()),
            etag: None,
            range: Some(Box::new(move |start, end| {
                let (start, end) = (usize::try_from(start).unwrap_or(0), usize::try_from(end).unwrap_or(0));
                Body::from(bytes.slice(start.min(bytes.len())..(end + 1).min(bytes.len())))
            })),
        }
    }

    /// A file read from `chunks` as the client takes them: memory holds a chunk, not the file.
    pub fn stream<S>(media_type: impl Into<String>, length: Option<u64>, chunks: S) -> Self
    where
        S: futures_util::TryStream + Send + 'static,
        S::Ok: Into<Bytes>,
        S::Error: Into<axum::BoxError>,
    {
        File {
            media_type: media_type.into(),
            filename: None,
            length,
            body: Body::from_stream(chunks),
            etag: None,
            range: None,
        }
    }

    /// The same file, able to answer a part: `read(start, end)` streams bytes `start..=end`
    /// (both within the file). Ranges need the file's length.
    pub fn ranges<F, S>(mut self, read: F) -> Self
    where
        F: FnOnce(u64, u64) -> S + Send + 'static,
        S: futures_util::TryStream + Send + 'static,
        S::Ok: Into<Bytes>,
        S::Error: Into<axum::BoxError>,
    {
        self.range = Some(Box::new(move |start, end| Body::from_stream(read(start, end))));
        self
    }

    /// The same file with the entity tag `tag` (any text: it is quoted here), which should change
    /// whenever its content does (a digest of it, a version).
    pub fn tagged(mut self, tag: &str) -> Self {
        let clean: String = tag.chars().filter(|c| c.is_ascii_graphic() && *c != '"').collect();
        self.etag = Some(format!("\"{clean}\""));
        self
    }

    /// The same file, saved by the client as `name`.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.filename = Some(name.into());
        self
    }

    /// The answer to a request with `headers` for an operation that answers ranges: the part a
    /// `Range` asks for (`206` with `Content-Range`), the whole file (`200`), or `Err` with the
    /// file's length when no byte is in the range (the caller answers `416`). A part is answered
    /// only when the file has a length and a [`ranges`](Self::ranges) reader, and, with
    /// `If-Range`, only when it names the file's current tag (RFC 9110 section 13.1.5).
    pub(crate) fn into_ranged_response(mut self, headers: &HeaderMap) -> Result<Response, u64> {
        let (Some(length), Some(read)) = (self.length, self.range.take()) else { return Ok(self.into_response()) };
        let same = match headers.get(header::IF_RANGE).and_then(|v| v.to_str().ok()) {
            None => true,
            // Only a strong tag matches; a date (or a weak tag) answers the whole file.
            Some(tag) => self.etag.as_deref().is_some_and(|mine| tag.trim() == mine),
        };
        let range = headers.get(header::RANGE).and_then(|v| v.to_str().ok());
        let answer = if same { ByteRange::parse(range, length) } else { ByteRange::Whole };
        let mut resp = match answer {
            ByteRange::Whole => self.into_response(),
            ByteRange::Unsatisfiable => return Err(length),
            ByteRange::Part(start, end) => {
                self.body = read(start, end);
                self.length = Some(end - start + 1);
                let mut resp = self.into_response();
                *resp.status_mut() = StatusCode::PARTIAL_CONTENT;
                if let Ok(v) = HeaderValue::from_str(&format!("bytes {start}-{end}/{length}")) {
                    resp.headers_mut().insert(header::CONTENT_RANGE, v);
                }
                resp
            }
        };
        resp.headers_mut().insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
        Ok(resp)
    }

    /// The response carrying it: `Content-Type`, `Content-Length` when known, `ETag` when
    /// tagged, and `Content-Disposition` (RFC 6266) when it has a name.
    pub(crate) fn into_response(self) -> Response {
        let mut resp = Response::new(self.body);
        if let Some(tag) = self.etag.as_deref().and_then(|t| HeaderValue::from_str(t).ok()) {
            resp.headers_mut().insert(header::ETAG, tag);
        }
        let headers = resp.headers_mut();
        let media_type = HeaderValue::from_str(&self.media_type)
            .unwrap_or_else(|_| HeaderValue::from_static("application/octet-stream"));
        headers.insert(header::CONTENT_TYPE, media_type);
        if let Some(length) = self.length {
            headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
        }
        let disposition = match &self.filename {
            Some(name) => content_disposition(name),
            None => "inline".to_string(),
        };
        if let Ok(v) = HeaderValue::from_str(&disposition) {
            headers.insert(header::CONTENT_DISPOSITION, v);
        }
        headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
        resp
    }
}

/// `attachment` with the name twice, as RFC 6266 section 4.3 advises: `filename` in plain ASCII
/// (anything else, and the characters that would end or escape it, replaced by `_`) for old
/// clients, and `filename*` (RFC 8187: UTF-8, percent-encoded) for the rest.
pub fn content_disposition(name: &str) -> String {
    let ascii: String = name
        .chars()
        .map(|c| if c.is_ascii_graphic() && !matches!(c, '"' | '\\' | '%' | ';') || c == ' ' { c } else { '_' })
        .collect();
    let mut encoded = String::new();
    for b in name.bytes() {
        // attr-char (RFC 8187 section 3.2.1) travels as it is; every other byte percent-encoded.
        if b.is_ascii_alphanumeric() || b"!#$&+-.^_`|~".contains(&b) {
            encoded.push(char::from(b));
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    format!("attachment; filename=\"{ascii}\"; filename*=UTF-8''{encoded}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_travels_plain_for_old_clients_and_exact_for_the_rest() {
        assert_eq!(content_disposition("notes.csv"), "attachment; filename=\"notes.csv\"; filename*=UTF-8''notes.csv");
        assert_eq!(
            content_disposition("Café \"A\";.csv"),
            "attachment; filename=\"Caf_ _A__.csv\"; filename*=UTF-8''Caf%C3%A9%20%22A%22%3B.csv"
        );
    }

    #[test]
    fn a_range_is_read_as_rfc_9110_says() {
        use ByteRange::*;
        let r = |h: &str, len| ByteRange::parse(Some(h), len);
        assert_eq!(r("bytes=0-9", 100), Part(0, 9));
        assert_eq!(r("bytes=90-", 100), Part(90, 99));
        assert_eq!(r("bytes=-10", 100), Part(90, 99));
        assert_eq!(r("bytes=-1000", 100), Part(0, 99), "a suffix longer than the file is all of it");
        assert_eq!(r("bytes=50-1000", 100), Part(50, 99), "a last position past the end is the end");
        assert_eq!(r("bytes=100-", 100), Unsatisfiable);
        assert_eq!(r("bytes=100-200", 100), Unsatisfiable);
        assert_eq!(r("bytes=-0", 100), Unsatisfiable);
        assert_eq!(r("bytes=0-", 0), Unsatisfiable, "no byte of an empty file");
        assert_eq!(r("bytes=99999999999999999999-", 100), Unsatisfiable);
        for whole in ["bytes=5-1", "bytes=0-1,5-6", "items=0-1", "bytes=a-b", "bytes=", "bytes=--1", "bytes=1"] {
            assert_eq!(r(whole, 100), Whole, "{whole}");
        }
        assert_eq!(ByteRange::parse(None, 100), Whole);
    }

    #[tokio::test]
    async fn a_part_is_answered_206_and_if_range_guards_it() {
        let file = || File::bytes("text/plain", "0123456789").tagged("v1");
        let ask = |range: &str, if_range: Option<&str>| {
            let mut h = HeaderMap::new();
            h.insert(header::RANGE, HeaderValue::from_str(range).unwrap());
            if let Some(t) = if_range {
                h.insert(header::IF_RANGE, HeaderValue::from_str(t).unwrap());
            }
            h
        };
        let body = |resp: Response| async move { axum::body::to_bytes(resp.into_body(), 100).await.unwrap() };
        let resp = file().into_ranged_response(&ask("bytes=2-4", None)).unwrap();
        assert_eq!(resp.status(), StatusCode::PARTIAL_CONTENT);
        let h = resp.headers();
        assert_eq!(
            (h["content-range"].to_str().unwrap(), h["content-length"].to_str().unwrap()),
            ("bytes 2-4/10", "3")
        );
        assert_eq!((h["accept-ranges"].to_str().unwrap(), h["etag"].to_str().unwrap()), ("bytes", "\"v1\""));
        assert_eq!(body(resp).await, "234");
        let resp = file().into_ranged_response(&ask("bytes=-3", Some("\"v1\""))).unwrap();
        assert_eq!((resp.status(), body(resp).await), (StatusCode::PARTIAL_CONTENT, Bytes::from("789")));
        // The file changed since the client's part: the whole of it.
        let resp = file().into_ranged_response(&ask("bytes=-3", Some("\"v0\""))).unwrap();
        assert_eq!((resp.status(), body(resp).await), (StatusCode::OK, Bytes::from("0123456789")));
        assert_eq!(file().into_ranged_response(&ask("bytes=10-", None)).unwrap_err(), 10);
    }

    #[test]
    fn a_file_answers_its_type_length_and_name() {
        let resp = File::bytes("text/csv", "a,b\n").named("x.csv").into_response();
        let h = resp.headers();
        assert_eq!((h["content-type"].to_str().unwrap(), h["content-length"].to_str().unwrap()), ("text/csv", "4"));
        assert!(h["content-disposition"].to_str().unwrap().starts_with("attachment; filename=\"x.csv\""));
        assert_eq!(h["x-content-type-options"], "nosniff");
    }
}
