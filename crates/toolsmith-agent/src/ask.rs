//! What the agent's tools ask ([`Context::elicit`](toolsmith::Context::elicit),
//! [`Context::sample`](toolsmith::Context::sample)): a person through the
//! [`ElicitationHandler`] the agent was given ([`ReAct::elicitation`](crate::ReAct::elicitation)),
//! a model through the agent's own.

use std::sync::Arc;

use toolsmith::{
    AskError, AskFuture, Asker, Context, Elicitation, Elicited, Role, Sampled, Sampling,
};

use crate::{LanguageModel, LmError, Message, Request, ToolChoice};

/// Whoever answers the questions an agent's tools ask a person: a terminal prompt (the
/// `toolsmith agent` command's), a form in an application, a test's script.
///
/// Any `Fn(&Elicitation) -> Result<Elicited, AskError>` that is `Send + Sync` is one, answering
/// at once (a closure that blocks for a person's answer should run in an agent driven by
/// [`run_blocking`](crate::ReAct::run_blocking), or implement the trait with a future).
pub trait ElicitationHandler: Send + Sync {
    /// Asks a person `request.message`, with the form `request.schema`.
    fn elicit<'a>(&'a self, request: &'a Elicitation) -> AskFuture<'a, Elicited>;
}

impl<F> ElicitationHandler for F
where
    F: Fn(&Elicitation) -> Result<Elicited, AskError> + Send + Sync,
{
    fn elicit<'a>(&'a self, request: &'a Elicitation) -> AskFuture<'a, Elicited> {
        let answer = self(request);
        Box::pin(std::future::ready(answer))
    }
}

/// The asker of an agent's tool calls.
pub(crate) struct AgentAsker {
    pub(crate) lm: Arc<dyn LanguageModel>,
    pub(crate) person: Option<Arc<dyn ElicitationHandler>>,
}

impl Asker for AgentAsker {
    fn elicit<'a>(
        &'a self,
        _context: &'a Context,
        request: &'a Elicitation,
    ) -> AskFuture<'a, Elicited> {
        match &self.person {
            Some(person) => person.elicit(request),
            None => Box::pin(std::future::ready(Err(AskError::Unsupported(
                "the agent was given no elicitation handler".to_owned(),
            )))),
        }
    }

    /// The agent's model answers `request` with text, within its `max_tokens` and at its
    /// temperature where it gives one.
    fn sample<'a>(&'a self, context: &'a Context, request: &'a Sampling) -> AskFuture<'a, Sampled> {
        Box::pin(async move {
            let mut messages = Vec::with_capacity(request.messages.len() + 1);
            if let Some(system) = &request.system {
                messages.push(Message::system(system.clone()));
            }
            messages.extend(request.messages.iter().map(|message| match message.role {
                Role::User => Message::user(message.text.clone()),
                Role::Assistant => Message::assistant(message.text.clone()),
            }));
            let reply = self
                .lm
                .complete(Request {
                    messages: &messages,
                    tools: &[],
                    tool_choice: &ToolChoice::Auto,
                    deadline: context.deadline(),
                    max_tokens: Some(request.max_tokens),
                    temperature: request.temperature,
                })
                .await;
            let reply = match reply {
                Ok(reply) => reply,
                // Cut off at the tool's limit: its text as far as it goes, as MCP says.
                Err(LmError::CutOff {
                    text: Some(text), ..
                }) => return Ok(Sampled::new(text).with_stop_reason("maxTokens")),
                Err(error) => {
                    return Err(AskError::Failed(format!(
                        "the agent's model failed: {error}"
                    )));
                }
            };
            let text = reply.message.content.ok_or_else(|| {
                AskError::Failed("the agent's model answered without text".to_owned())
            })?;
            Ok(Sampled::new(text).with_stop_reason("endTurn"))
        })
    }
}
