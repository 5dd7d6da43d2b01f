//! Input an operation asks its MCP client for mid-call (`cx.input`): a form or a URL for the
//! user to answer (elicitation), a message from the client's model (sampling), the client's
//! roots. On the stateless revision (2026-07-28, SEP-2322) the call ends with an
//! `input_required` result naming what it waits for; the client answers and sends the same
//! request again with the answers, and the platform runs the call again from the start, so an
//! implementation is written straight through: each `cx.input` returns the answer once it is
//! there. Answers of earlier rounds travel in the result's `requestState`, sealed with an HMAC
//! under a key derived from the server's signing key and bound to the caller, the method, the
//! tool or prompt and its arguments: a state altered, replayed by another caller or against
//! another call, or older than [`STATE_TTL`] is refused (`-32602`). A client of an earlier
//! revision within a session is asked directly instead, by a request on the call's stream, and
//! the call goes on with the answer ([`live`]). A client that did not declare
//! the capability an input needs gets `-32021` naming it (HTTP 400). Where nothing can answer (REST,
//! a client of an earlier revision without a session) `cx.input` fails with [`support::InputRequired`], which the
//! operation's error enum turns into the code its spec names.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, ErrorCode, GetExtensions, InputRequest, InputRequiredResult, InputResponses, RequestId,
    RequestStateCodec, SealOptions, ServerRequest,
};
use rmcp::service::Peer;
use rmcp::{ErrorData as McpError, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use support::InputRequired;

use crate::caller::Caller;
use crate::context::Context;

/// How long an `input_required` result's state is accepted back.
pub const STATE_TTL: Duration = Duration::from_secs(15 * 60);

/// The label the state key is derived under.
const PURPOSE: &str = "specwright mcp request-state v1";

/// What an operation asks its client for.
#[derive(Debug, Clone, PartialEq)]
pub enum Ask {
    /// A form for the user: a message and the JSON Schema of a flat object of answers.
    Form {
        /// What the user is asked.
        message: String,
        /// The answers' schema: `{"type": "object", "properties": …, "required": […]}`.
        schema: Value,
    },
    /// A page for the user to visit (a sign-in, a payment) outside the client.
    Url {
        /// Why.
        message: String,
        /// The page.
        url: String,
        /// Names this elicitation, for the completion notice a server may send.
        id: String,
    },
    /// A message from the client's model, given one user message.
    Sample {
        /// The user message.
        prompt: String,
        /// The longest answer wanted, in tokens.
        max_tokens: u32,
    },
    /// The client's roots (the folders or repositories it works in).
    Roots,
}

impl Ask {
    /// A form of `message` whose answers `schema` describes.
    pub fn form(message: impl Into<String>, schema: Value) -> Ask {
        Ask::Form { message: message.into(), schema }
    }

    /// A message from the client's model answering `prompt`, at most `max_tokens` long.
    pub fn sample(prompt: impl Into<String>, max_tokens: u32) -> Ask {
        Ask::Sample { prompt: prompt.into(), max_tokens }
    }

    /// The capability the client declares when it can answer this (`elicitation.url` for a URL).
    fn capability(&self) -> (&'static str, Option<&'static str>) {
        match self {
            Ask::Form { .. } => ("elicitation", None),
            Ask::Url { .. } => ("elicitation", Some("url")),
            Ask::Sample { .. } => ("sampling", None),
            Ask::Roots => ("roots", None),
        }
    }

    /// The request as MCP writes it.
    fn request(&self) -> Value {
        match self {
            Ask::Form { message, schema } => json!({
                "method": "elicitation/create",
                "params": { "message": message, "requestedSchema": schema },
            }),
            Ask::Url { message, url, id } => json!({
                "method": "elicitation/create",
                "params": { "mode": "url", "message": message, "url": url, "elicitationId": id },
            }),
            Ask::Sample { prompt, max_tokens } => json!({
                "method": "sampling/createMessage",
                "params": {
                    "messages": [{ "role": "user", "content": { "type": "text", "text": prompt } }],
                    "maxTokens": max_tokens,
                },
            }),
            Ask::Roots => json!({ "method": "roots/list", "params": {} }),
        }
    }

    /// Why `answer` is not a result of this request, if it is not.
    fn refuses(&self, answer: &Value) -> Option<&'static str> {
        let ok = match self {
            Ask::Form { .. } | Ask::Url { .. } => {
                answer
                    .get("action")
                    .and_then(Value::as_str)
                    .is_some_and(|a| matches!(a, "accept" | "decline" | "cancel"))
                    && answer.get("content").is_none_or(Value::is_object)
            }
            Ask::Sample { .. } => {
                answer.get("role").is_some_and(Value::is_string)
                    && answer.get("content").is_some_and(|c| c.is_object() || c.is_array())
            }
            Ask::Roots => answer.get("roots").is_some_and(Value::is_array),
        };
        match (ok, self) {
            (true, _) => None,
            (false, Ask::Form { .. } | Ask::Url { .. }) => Some("an elicitation result (`action`, `content`)"),
            (false, Ask::Sample { .. }) => Some("a sampling result (`role`, `content`)"),
            (false, Ask::Roots) => Some("a roots result (`roots`)"),
        }
    }
}

/// The client's answer to an [`Ask`].
#[derive(Debug, Clone, PartialEq)]
pub struct Answer(pub Value);

impl Answer {
    /// A form's answers, when the user accepted it (not when they declined or cancelled).
    pub fn accepted(&self) -> Option<&Map<String, Value>> {
        match self.0.get("action").and_then(Value::as_str) {
            Some("accept") => self.0.get("content").and_then(Value::as_object),
            _ => None,
        }
    }

    /// The text of a model's message (its text blocks, joined).
    pub fn text(&self) -> String {
        let blocks = match self.0.get("content") {
            Some(Value::Array(blocks)) => blocks.iter().collect(),
            Some(block) => vec![block],
            None => Vec::new(),
        };
        blocks.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("")
    }

    /// The URIs of the client's roots.
    pub fn roots(&self) -> Vec<String> {
        let roots = self.0.get("roots").and_then(Value::as_array);
        roots.into_iter().flatten().filter_map(|r| r.get("uri").and_then(Value::as_str).map(str::to_string)).collect()
    }
}

/// The sealed state: the answers the call used, by key.
#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    answers: BTreeMap<String, Value>,
}

/// One MCP request's inputs while its operation runs.
#[derive(Default)]
struct Round {
    /// Answers of earlier rounds (from the state) and of this one (the request's).
    given: BTreeMap<String, Value>,
    /// Answers the call used, carried to the next round.
    used: BTreeMap<String, Value>,
    /// What the call asks for and has no answer to.
    asked: BTreeMap<String, Value>,
    /// A capability the client lacks for an input the call needs.
    missing: Option<(&'static str, Option<&'static str>)>,
    /// An answer that is not a result of what was asked.
    invalid: Option<String>,
    capabilities: Value,
    /// Who is asked at once, where the call can wait for the answer: a session's client, or the
    /// client polling the task the call became.
    live: Option<Live>,
}

tokio::task_local! {
    static ROUND: RefCell<Round>;
}

/// Seals and opens the states of one server's calls.
pub(crate) struct Inputs {
    codec: RequestStateCodec,
}

/// What a request is, for binding its state: the caller, the method, the tool or prompt and its
/// arguments.
pub(crate) struct Binding<'a> {
    pub caller: &'a Caller,
    pub method: &'static str,
    pub name: &'a str,
    pub arguments: &'a Value,
}

impl Binding<'_> {
    fn bytes(&self) -> Vec<u8> {
        let arguments = Sha256::digest(self.arguments.to_string().as_bytes());
        let mut out = Vec::new();
        for part in [
            self.caller.tenant.as_bytes(),
            self.caller.subject.as_bytes(),
            self.method.as_bytes(),
            self.name.as_bytes(),
        ] {
            out.extend_from_slice(&(part.len() as u64).to_be_bytes());
            out.extend_from_slice(part);
        }
        out.extend_from_slice(&arguments);
        out
    }
}

/// Whether a call's outcome is a success (then it stands, whatever it asked).
pub(crate) trait Succeeded {
    fn succeeded(&self) -> bool;
}

impl<T, E> Succeeded for Result<T, E> {
    fn succeeded(&self) -> bool {
        self.is_ok()
    }
}

impl<T: Succeeded> Succeeded for Option<T> {
    fn succeeded(&self) -> bool {
        self.as_ref().is_some_and(Succeeded::succeeded)
    }
}

/// How a request's round ended.
pub(crate) enum Outcome<T> {
    /// The call finished (its own outcome, success or failure).
    Done(T),
    /// The call waits for input: answer the client this.
    InputRequired(InputRequiredResult),
}

impl Inputs {
    /// The codec of `keys`' current signing key.
    pub(crate) fn new(keys: &crate::keys::SigningKeys) -> Result<Inputs, McpError> {
        let codec = RequestStateCodec::try_new(keys.derived_secret(PURPOSE).to_vec())
            .map_err(|e| McpError::internal_error(format!("the request-state key: {e}"), None))?;
        Ok(Inputs { codec })
    }

    /// Runs `call` with the request's answers (its `inputResponses` and those its
    /// `requestState` carries) within reach of `cx.input`.
    pub(crate) async fn run<F: Future<Output: Succeeded>>(
        &self,
        binding: Binding<'_>,
        capabilities: Option<ClientCapabilities>,
        responses: Option<InputResponses>,
        state: Option<&str>,
        call: F,
    ) -> Result<Outcome<F::Output>, McpError> {
        let ad = binding.bytes();
        let mut given = match state {
            None => BTreeMap::new(),
            Some(sealed) => {
                let state: State = self.codec.open_json_with(sealed, &ad).map_err(|e| {
                    McpError::invalid_params(
                        format!("requestState is refused ({e}): send the request again without it"),
                        None,
                    )
                })?;
                state.answers
            }
        };
        given.extend(responses.unwrap_or_default());
        let capabilities = capabilities.and_then(|c| serde_json::to_value(c).ok()).unwrap_or(Value::Null);
        let round = Round { given, capabilities, ..Round::default() };
        let (output, round) = within(round, call).await?;
        // A call that went on without what it asked (and succeeded) stands: its change is
        // committed, and running it again would make it twice.
        if round.asked.is_empty() || output.succeeded() {
            return Ok(Outcome::Done(output));
        }
        let mut requests = BTreeMap::new();
        for (key, request) in round.asked {
            let request: InputRequest = serde_json::from_value(request)
                .map_err(|e| McpError::internal_error(format!("input request `{key}`: {e}"), None))?;
            requests.insert(key, request);
        }
        let sealed = self
            .codec
            .seal_json_with(&State { answers: round.used }, &SealOptions::new().associated_data(&ad).ttl(STATE_TTL))
            .map_err(|e| McpError::internal_error(format!("sealing the request state: {e}"), None))?;
        Ok(Outcome::InputRequired(InputRequiredResult::new(Some(requests), Some(sealed))))
    }
}

/// Runs `call` for a client of a session, which is asked each input directly on the stream of
/// request `origin` (server-to-client requests, MCP 2025-11-25 and before) as the call reaches
/// it, even where the call runs on a task of its own (a call that may become an MCP task).
pub(crate) async fn live<F: Future>(peer: Peer<RoleServer>, origin: RequestId, call: F) -> Result<F::Output, McpError> {
    let capabilities = peer.peer_info().and_then(|info| serde_json::to_value(&info.capabilities).ok());
    let live = Some(Live::Peer(peer, origin));
    let round = Round { capabilities: capabilities.unwrap_or(Value::Null), live, ..Round::default() };
    Ok(within(round, call).await?.0)
}

/// Asks requests (by key) of a client that answers later, and waits for every answer.
pub(crate) type Asker = Arc<
    dyn Fn(BTreeMap<String, Value>) -> futures_util::future::BoxFuture<'static, Result<BTreeMap<String, Value>, String>>
        + Send
        + Sync,
>;

/// Who answers a call's input at once.
#[derive(Clone)]
enum Live {
    /// A session's client, asked by a request on the stream of the call's request.
    Peer(Peer<RoleServer>, RequestId),
    /// The client of the task the call became, through the task (`tasks/get`, `tasks/update`).
    Task(Asker),
}

impl Live {
    /// The answers to `asks` (key, request), all asked together.
    async fn ask(&self, asks: &[(&str, &Ask)]) -> Result<Vec<Value>, String> {
        match self {
            Live::Peer(peer, origin) => {
                let asked = asks.iter().map(|(_, ask)| send(peer, Some(origin), ask.request()));
                futures_util::future::join_all(asked).await.into_iter().collect()
            }
            Live::Task(asker) => {
                let requests = asks.iter().map(|(key, ask)| (key.to_string(), ask.request())).collect();
                let mut answers = asker(requests).await?;
                asks.iter()
                    .map(|(key, _)| answers.remove(*key).ok_or_else(|| format!("no answer to `{key}`")))
                    .collect()
            }
        }
    }
}

/// From now on the call in flight (now a task) asks its input through `asker`.
pub(crate) fn through_task(asker: Asker) {
    let _ = ROUND.try_with(|r| r.borrow_mut().live = Some(Live::Task(asker)));
}

/// Runs `call` within `round`; a refused answer or a missing capability is the request's error.
async fn within<F: Future>(round: Round, call: F) -> Result<(F::Output, Round), McpError> {
    let (output, round) = ROUND
        .scope(RefCell::new(round), async {
            let output = call.await;
            (output, ROUND.with(|r| std::mem::take(&mut *r.borrow_mut())))
        })
        .await;
    if let Some(reason) = &round.invalid {
        return Err(McpError::invalid_params(reason.clone(), None));
    }
    if let Some((capability, mode)) = round.missing {
        let needed = match mode {
            Some(mode) => json!({ capability: { mode: {} } }),
            None => json!({ capability: {} }),
        };
        return Err(McpError::new(
            ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
            format!("this call needs the client capability `{capability}`, which the client does not declare"),
            Some(json!({ "requiredCapabilities": needed })),
        ));
    }
    Ok((output, round))
}

/// Sends `request` (an input request: `{method, params}`) to a session's client, on the stream of
/// request `origin` (by default the one being handled); its answer.
pub(crate) async fn send(peer: &Peer<RoleServer>, origin: Option<&RequestId>, request: Value) -> Result<Value, String> {
    let request: InputRequest = serde_json::from_value(request).map_err(|e| e.to_string())?;
    let mut request = match request {
        InputRequest::CreateMessage(r) => ServerRequest::CreateMessageRequest(r),
        InputRequest::Elicitation(r) => ServerRequest::ElicitRequest(r),
        InputRequest::ListRoots(r) => ServerRequest::ListRootsRequest(r),
        other => return Err(format!("no request of a session: {other:?}")),
    };
    if let Some(origin) = origin {
        request.extensions_mut().insert(rmcp::service::OriginatingRequestId(origin.clone()));
    }
    let result = peer.send_request(request).await.map_err(|e| e.to_string())?;
    serde_json::to_value(result).map_err(|e| e.to_string())
}

impl Round {
    fn can(&self, (capability, mode): (&str, Option<&str>)) -> bool {
        match self.capabilities.get(capability) {
            Some(c) if c.is_object() => mode.is_none_or(|m| c.get(m).is_some()),
            _ => false,
        }
    }
}

/// Where nothing can answer.
fn unanswerable(key: &str) -> InputRequired {
    InputRequired {
        message: format!(
            "this operation asks for input (`{key}`) that only an MCP client can give (of protocol 2026-07-28, or within a session): call it as an MCP tool"
        ),
    }
}

impl Context {
    /// Whether the client can answer `ask` (it declared the capability), so that an operation
    /// asks only what it can be answered.
    pub fn can_ask(&self, ask: &Ask) -> bool {
        ROUND.try_with(|r| r.borrow().can(ask.capability())).unwrap_or(false)
    }

    /// The client's answer to `ask`, under `key` (unique within the operation). Without one yet
    /// the call stops here (return the error with `?`) and the client is asked.
    pub async fn input(&mut self, key: &str, ask: Ask) -> Result<Answer, InputRequired> {
        let [answer] = self.inputs([(key, ask)]).await?;
        Ok(answer)
    }

    /// The answers to several asks at once: the client is asked every one it has not answered
    /// together.
    pub async fn inputs<const N: usize>(&mut self, asks: [(&str, Ask); N]) -> Result<[Answer; N], InputRequired> {
        let first = asks.first().map_or("", |(k, _)| *k).to_string();
        answers(asks.into_iter().collect())
            .await?
            .try_into()
            .map_err(|_| InputRequired { message: format!("waiting for the client's input `{first}`") })
    }
}

/// The answers to `asks`, each under its key, from the request in flight: given with it (or in
/// its state), or asked of a session's client now; without all of them the missing ones are
/// recorded as asked and the call stops.
pub(crate) async fn answers(asks: Vec<(&str, Ask)>) -> Result<Vec<Answer>, InputRequired> {
    let first = asks.first().map_or("", |(k, _)| *k).to_string();
    let known = ROUND.try_with(|round| {
        let mut round = round.borrow_mut();
        let mut got: Vec<Option<Answer>> = Vec::with_capacity(asks.len());
        let mut live = Vec::new();
        for (i, (key, ask)) in asks.iter().enumerate() {
            got.push(None);
            match round.given.get(*key).cloned() {
                Some(answer) => {
                    if let Some(expected) = ask.refuses(&answer) {
                        round.invalid = Some(format!("inputResponses.{key} is not {expected}"));
                        continue;
                    }
                    round.used.insert(key.to_string(), answer.clone());
                    got[i] = Some(Answer(answer));
                }
                None if !round.can(ask.capability()) => round.missing = Some(ask.capability()),
                None if round.live.is_some() => live.push(i),
                None => {
                    round.asked.insert(key.to_string(), ask.request());
                }
            }
        }
        (got, round.live.clone().filter(|_| !live.is_empty()).map(|who| (who, live)))
    });
    let Ok((mut got, live)) = known else { return Err(unanswerable(&first)) };
    if let Some((who, live)) = live {
        let pending: Vec<(&str, &Ask)> = live.iter().map(|&i| (asks[i].0, &asks[i].1)).collect();
        let answers = who
            .ask(&pending)
            .await
            .map_err(|e| InputRequired { message: format!("the client did not answer `{first}`: {e}") })?;
        for (i, answer) in live.into_iter().zip(answers) {
            let (key, ask) = &asks[i];
            if let Some(expected) = ask.refuses(&answer) {
                return Err(InputRequired { message: format!("the client's answer to `{key}` is not {expected}") });
            }
            let _ = ROUND.try_with(|r| r.borrow_mut().given.insert(key.to_string(), answer.clone()));
            got[i] = Some(Answer(answer));
        }
    }
    if got.iter().any(Option::is_none) {
        return Err(InputRequired { message: format!("waiting for the client's input `{first}`") });
    }
    Ok(got.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(subject: &str) -> Caller {
        Caller { subject: subject.into(), tenant: "acme".into(), ..Caller::anonymous("r-1") }
    }

    fn elicitation() -> Option<ClientCapabilities> {
        serde_json::from_value(json!({ "elicitation": {} })).ok()
    }

    /// A round of a call that asks `user_name` and, with `ignore`, goes on without it.
    async fn round(
        inputs: &Inputs,
        caller: &Caller,
        responses: Option<InputResponses>,
        state: Option<&str>,
        ignore: bool,
    ) -> Result<Outcome<Result<String, InputRequired>>, McpError> {
        let arguments = json!({ "n": 1 });
        let binding = Binding { caller, method: "tools/call", name: "greet", arguments: &arguments };
        let call = async move {
            let asked = answers(vec![(
                "user_name",
                Ask::form("Who?", json!({ "type": "object", "properties": { "name": { "type": "string" } } })),
            )])
            .await;
            match (asked, ignore) {
                (Ok(answers), _) => Ok(answers[0].accepted().map(|a| a["name"].to_string()).unwrap_or_default()),
                (Err(_), true) => Ok("nobody".to_string()),
                (Err(e), false) => Err(e),
            }
        };
        inputs.run(binding, elicitation(), responses, state, call).await
    }

    #[tokio::test]
    async fn a_round_asks_carries_its_answers_in_a_state_bound_to_the_caller_and_a_call_going_on_stands() {
        let dir = tempfile::tempdir().unwrap();
        let keys = crate::keys::SigningKeys::load_or_create(dir.path()).unwrap();
        let inputs = Inputs::new(&keys).unwrap();
        let ann = caller("ann");
        let first = round(&inputs, &ann, None, None, false).await;
        let Ok(Outcome::InputRequired(asked)) = first else {
            panic!("expected input_required, got {:?}", first.map(|o| matches!(o, Outcome::Done(_))))
        };
        let state = asked.request_state.clone().unwrap();
        assert!(asked.input_requests.unwrap().contains_key("user_name"));
        let answer: InputResponses =
            [("user_name".to_string(), json!({ "action": "accept", "content": { "name": "Ann" } }))].into();
        let Ok(Outcome::Done(Ok(name))) = round(&inputs, &ann, Some(answer.clone()), Some(&state), false).await else {
            panic!("expected the answer")
        };
        assert_eq!(name, "\"Ann\"");
        // The state is the caller's and the key's: another user's, or under a rotated key, fails.
        let refused = round(&inputs, &caller("bob"), Some(answer.clone()), Some(&state), false).await;
        assert_eq!(refused.err().map(|e| e.code), Some(ErrorCode::INVALID_PARAMS));
        crate::keys::SigningKeys::rotate(dir.path()).unwrap();
        let rotated = Inputs::new(&crate::keys::SigningKeys::load(dir.path()).unwrap()).unwrap();
        let refused = round(&rotated, &ann, Some(answer), Some(&state), false).await;
        assert_eq!(refused.err().map(|e| e.code), Some(ErrorCode::INVALID_PARAMS));
        // A call that goes on without the answer and succeeds is its result, not a new round.
        let Ok(Outcome::Done(Ok(name))) = round(&inputs, &ann, None, None, true).await else {
            panic!("expected the call's own result")
        };
        assert_eq!(name, "nobody");
    }
}
