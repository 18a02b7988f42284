//! [`ClientAsker`]: what a tool asks ([`Context::elicit`](toolsmith::Context::elicit),
//! [`Context::sample`](toolsmith::Context::sample)) goes to the MCP client as
//! `elicitation/create` or `sampling/createMessage`, on the connection the call came in on.
//!
//! A server can ask its client only where the client can answer: on a lasting connection
//! (stdio, a byte stream) or an HTTP session, to a client that declared the capability, on a
//! protocol before 2026-07-28 (which has servers ask through `input_required` results
//! instead). Anywhere else the tool gets [`ToolError::NobodyToAsk`](toolsmith::ToolError)
//! saying why, rather than a question sent where no answer can come back.

use std::sync::{Arc, LazyLock};

use rmcp::RoleServer;
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
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

/// The asker of a call on protocol 2026-07-28 or later.
pub(crate) fn input_required() -> Arc<dyn Asker> {
    static INPUT_REQUIRED: LazyLock<Arc<dyn Asker>> = LazyLock::new(|| {
        Arc::new(Unreachable(
            "on protocol 2026-07-28 a server asks through `input_required` results, which \
             this server does not send; a client on an earlier protocol can be asked",
        ))
    });
    Arc::clone(&INPUT_REQUIRED)
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
            let declared = self
                .peer
                .peer_info()
                .is_some_and(|info| info.capabilities.elicitation.is_some());
            Self::undeclared("elicitation", declared)?;
            let schema: ElicitationSchema = serde_json::from_value(request.schema.clone())
                .map_err(|error| {
                    AskError::Failed(format!(
                        "the form is not an MCP elicitation schema ({error})"
                    ))
                })?;
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: request.message.clone(),
                requested_schema: schema,
            };
            let result = self
                .peer
                .create_elicitation(params)
                .await
                .map_err(|error| failed("elicitation", &error))?;
            match result.action {
                ElicitationAction::Accept => match result.content {
                    Some(Value::Object(content)) => Ok(Elicited::Accept(content)),
                    Some(other) => Err(AskError::Failed(format!(
                        "the client accepted with content that is not an object: {other}"
                    ))),
                    None => Ok(Elicited::Accept(serde_json::Map::new())),
                },
                ElicitationAction::Decline => Ok(Elicited::Decline),
                ElicitationAction::Cancel => Ok(Elicited::Cancel),
                // An action of a later protocol: not an answer this server can read.
                _ => Err(AskError::Failed(
                    "the client answered with an action this server does not know".to_owned(),
                )),
            }
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
    Ok(Sampled {
        text,
        model: result["model"].as_str().map(str::to_owned),
        stop_reason: result["stopReason"].as_str().map(str::to_owned),
    })
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
