//! Files an operation answers (`output = "file"`): a media type, an optional name for the
//! client to save it under, and a body streamed as the client reads it.

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, header};
use axum::response::Response;

/// A file an operation answers.
#[derive(Debug)]
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
}

impl File {
    /// A file held in memory.
    pub fn bytes(media_type: impl Into<String>, bytes: impl Into<Bytes>) -> Self {
        let bytes = bytes.into();
        File {
            media_type: media_type.into(),
            filename: None,
            length: Some(bytes.len() as u64),
            body: Body::from(bytes),
        }
    }

    /// A file read from `chunks` as the client takes them: memory holds a chunk, not the file.
    pub fn stream<S>(media_type: impl Into<String>, length: Option<u64>, chunks: S) -> Self
    where
        S: futures_util::TryStream + Send + 'static,
        S::Ok: Into<Bytes>,
        S::Error: Into<axum::BoxError>,
    {
        File { media_type: media_type.into(), filename: None, length, body: Body::from_stream(chunks) }
    }

    /// The same file, saved by the client as `name`.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.filename = Some(name.into());
        self
    }

    /// The response carrying it: `Content-Type`, `Content-Length` when known, and
    /// `Content-Disposition` (RFC 6266) when it has a name.
    pub(crate) fn into_response(self) -> Response {
        let mut resp = Response::new(self.body);
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
    fn a_file_answers_its_type_length_and_name() {
        let resp = File::bytes("text/csv", "a,b\n").named("x.csv").into_response();
        let h = resp.headers();
        assert_eq!((h["content-type"].to_str().unwrap(), h["content-length"].to_str().unwrap()), ("text/csv", "4"));
        assert!(h["content-disposition"].to_str().unwrap().starts_with("attachment; filename=\"x.csv\""));
        assert_eq!(h["x-content-type-options"], "nosniff");
    }
}
