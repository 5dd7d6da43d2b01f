//! Streams of events an operation answers (`stream = "sse"` or `"ndjson"`): each event one
//! value of the operation's output model, sent as the client takes it.
//!
//! - **Backpressure**: [`Events::channel`] is bounded, so a producer that outpaces its client
//!   waits in [`EventSender::send`] instead of queueing without end.
//! - **Disconnects**: when the client goes, the response body is dropped, and with it the
//!   receiving end: `send` fails and [`EventSender::closed`] resolves, so the producer stops.
//! - **Heartbeats**: after [`HEARTBEAT`] without an event, an SSE comment (`: keep-alive`) or an
//!   empty NDJSON line keeps proxies from closing an idle stream and lets a client tell a quiet
//!   stream from a dead one.
//! - **No deadline**: the request timeout ends when the handler answers; the stream then runs
//!   until the client or the producer ends it (or the server's shutdown deadline).

use std::pin::Pin;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use futures_util::{Stream, StreamExt};
use serde::Serialize;

/// How long a stream may stay silent before a heartbeat.
pub const HEARTBEAT: Duration = Duration::from_secs(15);

/// How an operation's events travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "spec", derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema))]
#[cfg_attr(feature = "spec", serde(rename_all = "snake_case"))]
pub enum StreamFormat {
    /// Server-Sent Events (`text/event-stream`): each event's `data` is one JSON value, its `id`
    /// the event's, which a client sends back as `Last-Event-ID` when it reconnects.
    Sse,
    /// Newline-delimited JSON (`application/x-ndjson`): one JSON value per line.
    Ndjson,
}

/// One event: its output value and, for a stream a client can resume, its id.
#[derive(Debug, Clone, PartialEq)]
pub struct Event<T> {
    /// The id a client resumes after (`Last-Event-ID`); SSE only.
    pub id: Option<String>,
    /// The value.
    pub data: T,
}

impl<T> Event<T> {
    /// An event with an id.
    pub fn new(id: impl Into<String>, data: T) -> Self {
        Event { id: Some(id.into()), data }
    }
}

/// The events an operation answers.
pub struct Events<T> {
    stream: Pin<Box<dyn Stream<Item = Event<T>> + Send>>,
}

impl<T> std::fmt::Debug for Events<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Events")
    }
}

/// The producing end of [`Events::channel`].
#[derive(Debug)]
pub struct EventSender<T>(tokio::sync::mpsc::Sender<Event<T>>);

impl<T> Clone for EventSender<T> {
    fn clone(&self) -> Self {
        EventSender(self.0.clone())
    }
}

/// The client went away: nothing more can be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gone;

impl<T: Send> EventSender<T> {
    /// Sends one event, waiting while the client is `buffer` events behind; `Err(Gone)` once the
    /// client has gone.
    pub async fn send(&self, event: Event<T>) -> Result<(), Gone> {
        self.0.send(event).await.map_err(|_| Gone)
    }

    /// Resolves when the client has gone.
    pub async fn closed(&self) {
        self.0.closed().await;
    }

    /// Whether the client has gone.
    pub fn is_closed(&self) -> bool {
        self.0.is_closed()
    }
}

impl<T: Serialize + Send + 'static> Events<T> {
    /// The events of `stream`, sent as they come.
    pub fn new(stream: impl Stream<Item = Event<T>> + Send + 'static) -> Self {
        Events { stream: Box::pin(stream) }
    }

    /// A stream fed through the returned sender, at most `buffer` events ahead of the client.
    pub fn channel(buffer: usize) -> (EventSender<T>, Self) {
        let (send, mut receive) = tokio::sync::mpsc::channel(buffer.max(1));
        let stream = futures_util::stream::poll_fn(move |cx| receive.poll_recv(cx));
        (EventSender(send), Events::new(stream))
    }

    /// The streaming response: each event written as it comes, a heartbeat after [`HEARTBEAT`]
    /// of silence.
    pub fn into_response(self, format: StreamFormat) -> Response {
        self.into_response_every(format, HEARTBEAT)
    }

    fn into_response_every(self, format: StreamFormat, heartbeat: Duration) -> Response {
        let chunks = futures_util::stream::unfold(self.stream, move |mut events| async move {
            let chunk = match tokio::time::timeout(heartbeat, events.next()).await {
                Err(_silent) => Bytes::from_static(match format {
                    StreamFormat::Sse => b": keep-alive\n\n",
                    StreamFormat::Ndjson => b"\n",
                }),
                Ok(None) => return None,
                Ok(Some(event)) => encode(format, &event),
            };
            Some((chunk, events))
        })
        .map(Ok::<_, std::convert::Infallible>);
        let mut resp = Body::from_stream(chunks).into_response();
        let media_type = match format {
            StreamFormat::Sse => "text/event-stream",
            StreamFormat::Ndjson => "application/x-ndjson",
        };
        let headers = resp.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(media_type));
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        // Proxies that buffer responses (nginx) would hold events back.
        headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
        resp
    }
}

/// One event as its format writes it.
fn encode<T: Serialize>(format: StreamFormat, event: &Event<T>) -> Bytes {
    let json = serde_json::to_string(&event.data).unwrap_or_else(|_| "null".into());
    match format {
        StreamFormat::Ndjson => Bytes::from(format!("{json}\n")),
        StreamFormat::Sse => {
            let mut text = String::new();
            // An id holding a line break would end the field early; such an id is left out.
            if let Some(id) = event.id.as_deref().filter(|id| !id.contains(['\n', '\r', '\0'])) {
                text.push_str(&format!("id: {id}\n"));
            }
            // Compact JSON holds no line break.
            text.push_str(&format!("data: {json}\n\n"));
            Bytes::from(text)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    async fn body_text(resp: Response, limit: usize) -> String {
        let mut stream = resp.into_body().into_data_stream();
        let mut text = String::new();
        while text.len() < limit {
            match stream.next().await {
                Some(Ok(chunk)) => text.push_str(&String::from_utf8_lossy(&chunk)),
                _ => break,
            }
        }
        text
    }

    #[tokio::test]
    async fn events_are_written_in_each_format_with_their_ids() {
        let events = || {
            Events::new(futures_util::stream::iter([Event::new("1", json!({"a": 1})), Event::new("2", json!("x\ny"))]))
        };
        let sse = events().into_response(StreamFormat::Sse);
        assert_eq!(sse.headers()["content-type"], "text/event-stream");
        assert_eq!(body_text(sse, usize::MAX).await, "id: 1\ndata: {\"a\":1}\n\nid: 2\ndata: \"x\\ny\"\n\n");
        let ndjson = events().into_response(StreamFormat::Ndjson);
        assert_eq!(ndjson.headers()["content-type"], "application/x-ndjson");
        assert_eq!(body_text(ndjson, usize::MAX).await, "{\"a\":1}\n\"x\\ny\"\n");
    }

    #[tokio::test]
    async fn a_silent_stream_sends_heartbeats_and_a_gone_client_closes_the_sender() {
        let (send, events) = Events::<serde_json::Value>::channel(1);
        let resp = events.into_response_every(StreamFormat::Sse, Duration::from_millis(20));
        assert_eq!(body_text(resp, 2 * ": keep-alive\n\n".len()).await, ": keep-alive\n\n: keep-alive\n\n");
        // The body (and with it the receiver) is dropped: the producer learns it.
        tokio::time::timeout(Duration::from_secs(1), send.closed()).await.expect("closed once the client is gone");
        assert_eq!(send.send(Event::new("1", json!(1))).await, Err(Gone));
    }

    #[tokio::test]
    async fn a_slow_client_makes_the_producer_wait() {
        let (send, events) = Events::channel(2);
        for i in 0..2 {
            send.send(Event::new(i.to_string(), json!(i))).await.unwrap();
        }
        let third = tokio::time::timeout(Duration::from_millis(50), send.send(Event::new("2", json!(2)))).await;
        assert!(third.is_err(), "the buffer is full: the third send waits for the client");
        drop(events);
    }
}
