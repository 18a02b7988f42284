//! What a tool asks ([`Context::elicit`](toolsmith::Context::elicit),
//! [`Context::sample`](toolsmith::Context::sample)) goes to the MCP client the call came from.
//!
//! - Protocol 2026-07-28 and later ([`Rounds`]): the server answers the call with
//!   `input_required` holding the question (SEP-2322), and the client calls again with the
//!   answer; this works over every transport, stateless HTTP too.
//! - Earlier protocols ([`ClientAsker`]): `elicitation/create` or `sampling/createMessage` on
//!   the connection the call came in on, where the client's answer can come back: a lasting
//!   connection (stdio, a byte stream) or an HTTP session. Over stateless HTTP the tool gets
//!   [`ToolError::NobodyToAsk`](toolsmith::ToolError) saying why ([`stateless`]).
//!
//! Either way a client that did not declare the capability is not asked.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::task::Waker;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{
    ElicitRequestParams, ElicitationAction, ElicitationSchema, RequestStateCodec, SealOptions,
};
use rmcp::service::{Peer, ServiceError};
use serde_json::{Value, json};
use toolsmith::{
    AskError, AskFuture, Asker, Context, Elicitation, Elicited, Role, Sampled, Sampling,
};

/// Asks the client of one connection (stdio, a byte stream, an HTTP session), on a protocol
/// before 2026-07-28.
pub(crate) struct ClientAsker {
    peer: Peer<RoleServer>,
}

impl ClientAsker {
    pub(crate) fn new(peer: Peer<RoleServer>) -> Self {
        ClientAsker { peer }
    }

    /// Why the client cannot be asked for `what` (`declared`: whether it declared the
    /// capability), if it cannot.
    fn undeclared(what: &str, declared: bool) -> Result<(), AskError> {
        if declared {
            return Ok(());
        }
        Err(AskError::Unsupported(format!(
            "the client did not declare the `{what}` capability"
        )))
    }
}

/// Asks nobody, saying why: where the client cannot be asked at all.
pub(crate) struct Unreachable(&'static str);

/// The asker of a call over stateless HTTP.
pub(crate) fn stateless() -> Arc<dyn Asker> {
    static STATELESS: LazyLock<Arc<dyn Asker>> = LazyLock::new(|| {
        Arc::new(Unreachable(
            "the server serves HTTP without sessions, where a client's answer has nowhere to \
             go (serve with sessions to ask the client)",
        ))
    });
    Arc::clone(&STATELESS)
}

impl Asker for Unreachable {
    fn elicit<'a>(&'a self, _: &'a Context, _: &'a Elicitation) -> AskFuture<'a, Elicited> {
        Box::pin(std::future::ready(Err(AskError::Unsupported(
            self.0.to_owned(),
        ))))
    }

    fn sample<'a>(&'a self, _: &'a Context, _: &'a Sampling) -> AskFuture<'a, Sampled> {
        Box::pin(std::future::ready(Err(AskError::Unsupported(
            self.0.to_owned(),
        ))))
    }
}

impl Asker for ClientAsker {
    fn elicit<'a>(
        &'a self,
        _context: &'a Context,
        request: &'a Elicitation,
    ) -> AskFuture<'a, Elicited> {
        Box::pin(async move {
            let declared = self.peer.peer_info().is_some_and(|info| {
                info.capabilities
                    .elicitation
                    .as_ref()
                    .is_some_and(|e| e.form.is_some() || e.url.is_none())
            });
            Self::undeclared("elicitation", declared)?;
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: request.message.clone(),
                requested_schema: form(&request.schema)?,
            };
            let result = self
                .peer
                .create_elicitation(params)
                .await
                .map_err(|error| failed("elicitation", &error))?;
            elicited(result)
        })
    }

    fn sample<'a>(
        &'a self,
        _context: &'a Context,
        request: &'a Sampling,
    ) -> AskFuture<'a, Sampled> {
        Box::pin(async move {
            let declared = self
                .peer
                .peer_info()
                .is_some_and(|info| info.capabilities.sampling.is_some());
            Self::undeclared("sampling", declared)?;
            let params = sampling_params(request)?;
            let result = create_message(&self.peer, params).await?;
            sampled(result)
        })
    }
}

/// `request` as `sampling/createMessage`'s params. Written as JSON and read as rmcp's type,
/// which protocol 2025-11-25 deprecates (SEP-2577) without a successor for this request.
fn sampling_params(request: &Sampling) -> Result<Value, AskError> {
    let messages: Vec<Value> = request
        .messages
        .iter()
        .map(|message| {
            let role = match message.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            json!({"role": role, "content": {"type": "text", "text": message.text}})
        })
        .collect();
    let mut params = json!({"messages": messages, "maxTokens": request.max_tokens});
    if let Some(system) = &request.system {
        params["systemPrompt"] = json!(system);
    }
    if let Some(temperature) = request.temperature {
        params["temperature"] = json!(temperature);
    }
    Ok(params)
}

/// Sends `sampling/createMessage` with `params`; the result as JSON.
#[allow(deprecated)]
async fn create_message(peer: &Peer<RoleServer>, params: Value) -> Result<Value, AskError> {
    let params: rmcp::model::CreateMessageRequestParams =
        serde_json::from_value(params).map_err(|error| {
            AskError::Failed(format!("the sampling request does not read ({error})"))
        })?;
    let result = peer
        .create_message(params)
        .await
        .map_err(|error| failed("sampling", &error))?;
    serde_json::to_value(result)
        .map_err(|error| AskError::Failed(format!("the client's answer does not read ({error})")))
}

/// The text of a `sampling/createMessage` result.
fn sampled(result: Value) -> Result<Sampled, AskError> {
    let blocks = match &result["content"] {
        Value::Array(blocks) => blocks.clone(),
        block => vec![block.clone()],
    };
    let text: String = blocks
        .iter()
        .filter(|block| block["type"] == "text")
        .filter_map(|block| block["text"].as_str())
        .collect();
    if text.is_empty() && !blocks.iter().any(|block| block["type"] == "text") {
        return Err(AskError::Failed(format!(
            "the client's model answered without text: {}",
            result["content"]
        )));
    }
    let mut sampled = Sampled::new(text);
    sampled.model = result["model"].as_str().map(str::to_owned);
    sampled.stop_reason = result["stopReason"].as_str().map(str::to_owned);
    Ok(sampled)
}

/// A request to the client that went wrong, in words.
fn failed(what: &str, error: &ServiceError) -> AskError {
    match error {
        ServiceError::McpError(error) => AskError::Failed(format!(
            "the client refused the {what} request: {} (code {})",
            error.message, error.code.0
        )),
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => AskError::Failed(
            format!("the connection to the client closed before it answered the {what} request"),
        ),
        other => AskError::Failed(format!("the {what} request failed: {other}")),
    }
}

/// What a call asks on protocol 2026-07-28 and later, where a server asks by answering
/// `input_required` (SEP-2322) and the client calls again with the answers.
///
/// The call runs from the start each round. Its questions are numbered in the order it asks
/// them (`q0`, `q1`, ...): one answered in an earlier round, to the same question, is answered
/// at once; the first one that is not ends the round, the tool's future dropped, and the client
/// is sent that question. So a tool that asks must ask before it acts, and never act on an
/// error its question got once its context is cancelled (the round ended under it).
///
/// The answers travel in `requestState`, sealed (HMAC-SHA256, [`RequestStateCodec`]) and bound
/// to the tool and its arguments, for an hour: a client can neither forge an answer to a
/// question it was not asked nor carry answers over to another call. Each answer is kept with
/// a fingerprint of its question, and a question that differs is asked again. A call asks at
/// most [`MAX_QUESTIONS`] questions.
pub(crate) struct Rounds {
    /// What `requestState` is sealed with.
    codec: Arc<RequestStateCodec>,
    /// What the state is bound to: the tool's name and its arguments, canonical.
    binding: Vec<u8>,
    /// The answers so far, by question.
    answers: BTreeMap<String, Answered>,
    /// What the client can answer, as it declared in the request's `_meta`.
    elicitation: bool,
    sampling: bool,
    state: Mutex<RoundState>,
}

/// An answer, with the fingerprint of the question it answers.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
struct Answered {
    question: String,
    answer: Value,
}

/// What `requestState` holds: the answers so far, and the question the client was sent.
#[derive(serde::Serialize, serde::Deserialize)]
struct Sealed {
    answers: BTreeMap<String, Answered>,
    /// The key and fingerprint of the question the last round ended with.
    pending: (String, String),
}

#[derive(Default)]
struct RoundState {
    /// The next question's number.
    next: usize,
    /// The question that ends this round, once asked: its key, fingerprint and request.
    asked: Option<(String, String, Value)>,
    /// Who waits for the round to end.
    waker: Option<Waker>,
}

/// The codec `requestState` is sealed with: `key`, or one drawn at random for this server, so
/// that a state is answered by the instance that gave it.
pub(crate) fn request_state_codec(
    key: Option<&[u8]>,
) -> Result<RequestStateCodec, crate::ServeError> {
    let invalid = |problem: String| crate::ServeError::InvalidConfig {
        setting: "request_state_key",
        problem,
    };
    let key = match key {
        Some(key) => key.to_vec(),
        None => {
            let mut key = [0u8; RequestStateCodec::MIN_KEY_LENGTH];
            getrandom::fill(&mut key)
                .map_err(|error| invalid(format!("no random key could be drawn ({error})")))?;
            key.to_vec()
        }
    };
    RequestStateCodec::try_new(key).map_err(|error| invalid(error.to_string()))
}

/// The most questions one call may ask.
pub(crate) const MAX_QUESTIONS: usize = 16;

/// How long a `requestState` may be sent back.
const STATE_TTL: Duration = Duration::from_secs(60 * 60);

impl Rounds {
    /// The rounds of a call of `tool` with `arguments` (their text), given this round's
    /// `responses` and the `state` the client echoed; `capabilities` as the request's `_meta`
    /// declared them.
    ///
    /// # Errors
    /// An invalid-params error when `state` is not one this server gave for this call (or it
    /// expired).
    pub(crate) fn new(
        codec: &Arc<RequestStateCodec>,
        tool: &str,
        arguments: &str,
        responses: Option<BTreeMap<String, Value>>,
        state: Option<&str>,
        capabilities: Option<&rmcp::model::ClientCapabilities>,
    ) -> Result<Rounds, rmcp::ErrorData> {
        let binding = binding(tool, arguments);
        let mut answers = BTreeMap::new();
        if let Some(state) = state {
            let sealed: Sealed = codec.open_json_with(state, &binding).map_err(|_| {
                rmcp::ErrorData::invalid_params(
                    format!(
                        "`requestState` is not one this server gave for this call of `{tool}` \
                         with these arguments, or it is over an hour old: call again without it \
                         (and without `inputResponses`) to start over"
                    ),
                    None,
                )
            })?;
            answers = sealed.answers;
            // Only the question the client was sent is answered now; other keys are ignored.
            let (key, question) = sealed.pending;
            if let Some(answer) = responses.and_then(|mut responses| responses.remove(&key)) {
                answers.insert(key, Answered { question, answer });
            }
        }
        let elicitation = capabilities
            .and_then(|c| c.elicitation.as_ref())
            .is_some_and(|e| e.form.is_some() || e.url.is_none());
        Ok(Rounds {
            codec: Arc::clone(codec),
            binding,
            answers,
            elicitation,
            sampling: capabilities.is_some_and(|c| c.sampling.is_some()),
            state: Mutex::new(RoundState::default()),
        })
    }

    /// The question that ends this round, once the call has asked one; `waker` is woken when
    /// it does (from whatever thread the tool asks on).
    pub(crate) fn asked(&self, waker: &Waker) -> Option<Question> {
        let mut state = lock(&self.state);
        if state.asked.is_none() {
            state.waker = Some(waker.clone());
        }
        state
            .asked
            .clone()
            .map(|(key, fingerprint, request)| Question {
                key,
                fingerprint,
                request,
            })
    }

    /// The `input_required` result for `question`.
    pub(crate) fn input_required(&self, question: Question) -> Value {
        let sealed = Sealed {
            answers: self.answers.clone(),
            pending: (question.key.clone(), question.fingerprint),
        };
        let options = SealOptions::new()
            .associated_data(&self.binding)
            .ttl(STATE_TTL);
        // The state is plain data: it always serializes.
        let payload = serde_json::to_vec(&sealed).unwrap_or_default();
        let state = self.codec.seal_with(&payload, &options);
        json!({
            "resultType": "input_required",
            "inputRequests": {question.key: question.request},
            "requestState": state,
        })
    }

    /// The answer to the next question, or the round's end: `request` is the question as the
    /// client is sent it.
    fn ask(&self, request: Value) -> AskFuture<'_, Value> {
        let mut state = lock(&self.state);
        if state.next >= MAX_QUESTIONS {
            return Box::pin(std::future::ready(Err(AskError::Failed(format!(
                "a call may ask at most {MAX_QUESTIONS} questions, and this one asked more"
            )))));
        }
        let key = format!("q{}", state.next);
        state.next += 1;
        let fingerprint = fingerprint(&request);
        if let Some(answered) = self.answers.get(&key)
            && answered.question == fingerprint
        {
            return Box::pin(std::future::ready(Ok(answered.answer.clone())));
        }
        if state.asked.is_none() {
            state.asked = Some((key, fingerprint, request));
            if let Some(waker) = state.waker.take() {
                waker.wake();
            }
        }
        // The round ends here: the server drops the call.
        Box::pin(std::future::pending())
    }
}

/// A question that ends a round.
pub(crate) struct Question {
    key: String,
    fingerprint: String,
    request: Value,
}

impl Asker for Rounds {
    fn elicit<'a>(&'a self, _: &'a Context, request: &'a Elicitation) -> AskFuture<'a, Elicited> {
        Box::pin(async move {
            declared_in_meta("elicitation", self.elicitation)?;
            let schema = form(&request.schema)?;
            let question = json!({
                "method": "elicitation/create",
                "params": {"mode": "form", "message": request.message, "requestedSchema": schema},
            });
            let answer = self.ask(question).await?;
            let result: rmcp::model::ElicitResult = serde_json::from_value(answer.clone())
                .map_err(|_| {
                    AskError::Failed(format!(
                        "the client's answer is not an elicitation result: {answer}"
                    ))
                })?;
            elicited(result)
        })
    }

    fn sample<'a>(&'a self, _: &'a Context, request: &'a Sampling) -> AskFuture<'a, Sampled> {
        Box::pin(async move {
            declared_in_meta("sampling", self.sampling)?;
            let params = sampling_params(request)?;
            checked_sampling(&params)?;
            let question = json!({"method": "sampling/createMessage", "params": params});
            sampled(self.ask(question).await?)
        })
    }
}

/// What a call's `requestState` is bound to: `tool` and its arguments, with object keys in
/// order (so that a client writing them out again in another order is the same call).
fn binding(tool: &str, arguments: &str) -> Vec<u8> {
    fn canonical(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.values_mut().for_each(canonical);
                map.sort_keys();
            }
            Value::Array(items) => items.iter_mut().for_each(canonical),
            _ => {}
        }
    }
    let arguments = match serde_json::from_str::<Value>(arguments) {
        Ok(mut value) => {
            canonical(&mut value);
            value.to_string()
        }
        Err(_) => arguments.to_owned(),
    };
    let mut bound = Vec::with_capacity(tool.len() + 1 + arguments.len());
    bound.extend_from_slice(tool.as_bytes());
    bound.push(0);
    bound.extend_from_slice(arguments.as_bytes());
    bound
}

/// A fingerprint of `question`: its answer is kept with it, and a question that differs next
/// round is asked again.
fn fingerprint(question: &Value) -> String {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    question.to_string().hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

fn declared_in_meta(what: &str, declared: bool) -> Result<(), AskError> {
    if declared {
        return Ok(());
    }
    Err(AskError::Unsupported(format!(
        "the client did not declare the `{what}` capability (for forms) in the request's `_meta`"
    )))
}

/// `schema` as MCP's elicitation schema, checked as rmcp reads it.
fn form(schema: &Value) -> Result<ElicitationSchema, AskError> {
    serde_json::from_value(schema.clone()).map_err(|error| {
        AskError::Failed(format!(
            "the form is not an MCP elicitation schema ({error})"
        ))
    })
}

/// Whether `params` read as `sampling/createMessage`'s params.
#[allow(deprecated)]
fn checked_sampling(params: &Value) -> Result<(), AskError> {
    serde_json::from_value::<rmcp::model::CreateMessageRequestParams>(params.clone())
        .map(drop)
        .map_err(|error| AskError::Failed(format!("the sampling request does not read ({error})")))
}

/// A client's elicitation result as the tool's answer.
fn elicited(result: rmcp::model::ElicitResult) -> Result<Elicited, AskError> {
    match result.action {
        ElicitationAction::Accept => match result.content {
            Some(Value::Object(content)) => Ok(Elicited::Accept(content)),
            None => Ok(Elicited::Accept(serde_json::Map::new())),
            Some(other) => Err(AskError::Failed(format!(
                "the client accepted with content that is not an object: {other}"
            ))),
        },
        ElicitationAction::Decline => Ok(Elicited::Decline),
        ElicitationAction::Cancel => Ok(Elicited::Cancel),
        // An action of a later protocol: not an answer this server can read.
        _ => Err(AskError::Failed(
            "the client answered with an action this server does not know".to_owned(),
        )),
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_call_asking_past_the_bound_is_told_so() {
        let codec = Arc::new(request_state_codec(None).unwrap());
        let rounds = Rounds::new(&codec, "ask", "{}", None, None, None).unwrap();
        let waker = Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        for at in 0..MAX_QUESTIONS {
            let mut ask = rounds.ask(json!({"n": at}));
            // Unanswered: the round ends at the first one.
            assert!(ask.as_mut().poll(&mut cx).is_pending());
        }
        let mut ask = rounds.ask(json!({"n": MAX_QUESTIONS}));
        let std::task::Poll::Ready(Err(AskError::Failed(why))) = ask.as_mut().poll(&mut cx) else {
            panic!("the question past the bound was asked");
        };
        assert!(why.contains("at most 16 questions"), "{why}");
        assert_eq!(rounds.asked(waker).unwrap().key, "q0");
    }

    #[test]
    fn an_answer_to_another_question_is_not_taken() {
        let codec = Arc::new(request_state_codec(None).unwrap());
        let first = Rounds::new(&codec, "ask", "{}", None, None, None).unwrap();
        let waker = Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        let mut ask = first.ask(json!({"question": "name?"}));
        assert!(ask.as_mut().poll(&mut cx).is_pending());
        drop(ask);
        let question = first.asked(waker).unwrap();
        let state = first.input_required(question)["requestState"]
            .as_str()
            .unwrap()
            .to_owned();
        let answer = BTreeMap::from([("q0".to_owned(), json!("Ada"))]);
        let second = Rounds::new(&codec, "ask", "{}", Some(answer), Some(&state), None).unwrap();
        // The same question: answered.
        let mut same = second.ask(json!({"question": "name?"}));
        assert!(matches!(
            same.as_mut().poll(&mut cx),
            std::task::Poll::Ready(Ok(answer)) if answer == "Ada"
        ));
        // A call that asks another question first this round: asked again.
        let third = Rounds::new(
            &codec,
            "ask",
            "{}",
            Some(BTreeMap::from([("q0".to_owned(), json!("Ada"))])),
            Some(&state),
            None,
        )
        .unwrap();
        let mut other = third.ask(json!({"question": "age?"}));
        assert!(other.as_mut().poll(&mut cx).is_pending());
        assert_eq!(third.asked(waker).unwrap().key, "q0");
    }
}
