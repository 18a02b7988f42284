//! [`Signature`]: what a model is asked (typed inputs, instructions) and what it must answer
//! (typed outputs), and the `finish` tool through which the answer comes back coerced.

use std::marker::PhantomData;

use serde::Deserialize;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use toolsmith::{
    Arguments, Context, Describe, Dialect, Policy, Repair, Tool, ToolError, ToolFuture, ToolOutput,
    Type, TypeGraph, coerce_arguments,
};

use crate::declaration::ToolDeclaration;
use crate::error::AgentError;

/// The name of the tool through which a model gives its answer.
pub const FINISH: &str = "finish";

/// A task for a model: typed inputs, typed outputs, and instructions.
///
/// Both sides are structs: the input's fields are shown to the model, the output's fields are the
/// parameters of the `finish` tool the model answers with. Derive [`ToolType`](toolsmith::ToolType)
/// (and serde's traits) on them; their doc comments become the model's field descriptions.
///
/// ```
/// use serde::{Deserialize, Serialize};
/// use toolsmith::ToolType;
/// use toolsmith_agent::Signature;
///
/// #[derive(Serialize, ToolType, Deserialize)]
/// struct Review {
///     /// The review's text.
///     text: String,
/// }
///
/// #[derive(Deserialize, ToolType)]
/// struct Verdict {
///     /// Whether the review is positive.
///     positive: bool,
/// }
///
/// struct Classify;
/// impl Signature for Classify {
///     type Input = Review;
///     type Output = Verdict;
///     fn instructions() -> &'static str {
///         "Say whether the review is positive."
///     }
/// }
/// ```
pub trait Signature {
    /// What the model is given; serialized to an object whose fields it reads.
    type Input: Serialize + Describe;
    /// What the model answers; a struct, read from the `finish` call.
    type Output: DeserializeOwned + Describe;

    /// What the model is to do.
    fn instructions() -> &'static str;
}

/// The question and answer of the `toolsmith agent` command: one string in,
/// one string out.
#[derive(Debug, Clone, Copy)]
pub struct QuestionAnswer;

/// The input of [`QuestionAnswer`].
#[derive(Debug, Clone, Serialize, serde::Deserialize, toolsmith::ToolType)]
pub struct Question {
    /// The question to answer.
    pub question: String,
}

/// The output of [`QuestionAnswer`].
#[derive(Debug, Clone, Serialize, serde::Deserialize, toolsmith::ToolType)]
pub struct AnswerText {
    /// The answer to the question.
    pub answer: String,
}

impl Signature for QuestionAnswer {
    type Input = Question;
    type Output = AnswerText;
    fn instructions() -> &'static str {
        "Answer the question. Use the tools when they help; when you know the answer, give it."
    }
}

/// The `finish` tool: its parameters are the signature's output struct, so the answer is coerced
/// like any tool's arguments.
pub(crate) struct FinishTool {
    parameters: TypeGraph,
    description: String,
}

impl Tool for FinishTool {
    fn name(&self) -> &str {
        FINISH
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &TypeGraph {
        &self.parameters
    }

    fn call<'a>(&'a self, arguments: Arguments<'a>, context: Context) -> ToolFuture<'a> {
        ToolFuture::ready(self.read_arguments(arguments, context.policy()))
    }
}

impl FinishTool {
    /// The `finish` call's arguments coerced to the output type.
    fn read_arguments(
        &self,
        arguments: Arguments<'_>,
        policy: &Policy,
    ) -> Result<ToolOutput, ToolError> {
        let coerced = coerce_arguments(&self.parameters, arguments, policy).map_err(|errors| {
            ToolError::InvalidArguments {
                tool: FINISH.to_owned(),
                errors,
            }
        })?;
        Ok(ToolOutput::structured(coerced.value).with_repairs(coerced.repairs))
    }
}

/// The system message: the instructions, the input's fields, and how to answer.
fn write_system_prompt<S: Signature>(
    input_fields: &[(String, Option<String>)],
    with_tools: bool,
) -> String {
    let mut prompt = String::from(S::instructions());
    prompt.push_str("\n\nYou are given:");
    for (name, description) in input_fields {
        prompt.push_str(&format!("\n- `{name}`"));
        if let Some(description) = description {
            prompt.push_str(&format!(": {description}"));
        }
    }
    if with_tools {
        prompt.push_str(
            "\n\nCall the tools you are given as often as you need, reading each result. ",
        );
    } else {
        prompt.push_str("\n\n");
    }
    prompt.push_str(&format!(
        "Give your final answer by calling `{FINISH}` with its fields."
    ));
    prompt
}

/// An answer read from the model, or the message that sends it back to fix it.
pub(crate) enum Verdict<O> {
    Accepted {
        output: O,
        value: Value,
        repairs: Vec<Repair>,
    },
    Rejected(String),
}

/// A signature made ready for a model: prompts and the `finish` declaration, built once.
pub(crate) struct Compiled<S: Signature> {
    finish: FinishTool,
    pub(crate) finish_declaration: ToolDeclaration,
    /// The output's only field, when it is a string: a plain-text reply answers it.
    pub(crate) text_field: Option<String>,
    /// The system prompts, written once: with tools, and without.
    system_prompts: [String; 2],
    _signature: PhantomData<fn() -> S>,
}

impl<S: Signature> Compiled<S> {
    pub(crate) fn new(dialect: Dialect) -> Result<Self, AgentError> {
        let output = S::Output::type_graph();
        let Some(Type::Struct(fields)) = output.resolved_root() else {
            return Err(AgentError::Signature(
                "the output must be a struct (its fields are the answer)".to_owned(),
            ));
        };
        let text_field = match fields.fields.as_slice() {
            [only] if matches!(output.resolve(&only.ty), Some(Type::String(_))) => {
                Some(only.name.clone())
            }
            _ => None,
        };
        let mut description = String::from("Give the final answer.");
        if let Some(about) = &fields.description {
            description.push(' ');
            description.push_str(about);
        }
        let input = S::Input::type_graph();
        let input_fields: Vec<(String, Option<String>)> = match input.resolved_root() {
            Some(Type::Struct(fields)) => fields
                .fields
                .iter()
                .map(|f| (f.name.clone(), f.description.clone()))
                .collect(),
            _ => {
                return Err(AgentError::Signature(
                    "the input must be a struct (its fields are what the model reads)".to_owned(),
                ));
            }
        };
        let finish = FinishTool {
            parameters: output,
            description,
        };
        let finish_declaration = ToolDeclaration::of(&finish);
        finish_declaration
            .parameters_in(dialect)
            .map_err(|e| AgentError::Signature(e.to_string()))?;
        let system_prompts = [
            write_system_prompt::<S>(&input_fields, true),
            write_system_prompt::<S>(&input_fields, false),
        ];
        Ok(Compiled {
            finish,
            finish_declaration,
            text_field,
            system_prompts,
            _signature: PhantomData,
        })
    }

    /// The system message: the instructions, the fields, and how to answer (written once, when
    /// the signature was compiled: it was a tenth of a short run's time).
    pub(crate) fn system_prompt(&self, with_tools: bool) -> String {
        self.system_prompts[usize::from(!with_tools)].clone()
    }

    /// The user message: each input field on its own lines, text as it is, the rest as JSON.
    pub(crate) fn user_message(&self, input: &S::Input) -> Result<String, AgentError> {
        crate::fields::user_message(input).map_err(AgentError::Input)
    }

    /// Reads a `finish` call's arguments: coerced as the `finish` tool's, then the output read
    /// from the coerced value in place (not through a tool's output, whose text the loop never
    /// reads, nor from a copy).
    pub(crate) fn read(&self, arguments: &Value, policy: &Policy) -> Verdict<S::Output> {
        let coerced = coerce_arguments(&self.finish.parameters, Arguments::Json(arguments), policy)
            .map_err(|errors| ToolError::InvalidArguments {
                tool: FINISH.to_owned(),
                errors,
            });
        match coerced {
            Ok(coerced) => {
                let value = coerced.value;
                match S::Output::deserialize(&value) {
                    Ok(typed) => Verdict::Accepted {
                        output: typed,
                        value,
                        repairs: coerced.repairs,
                    },
                    Err(e) => Verdict::Rejected(format!(
                        "Invalid arguments for tool `{FINISH}`: the answer does not fit ({e})."
                    )),
                }
            }
            Err(error) => Verdict::Rejected(error.to_model_message()),
        }
    }

    /// Reads a plain-text reply as the answer, where the output is one string.
    pub(crate) fn read_text(&self, text: &str, policy: &Policy) -> Option<Verdict<S::Output>> {
        let field = self.text_field.as_ref()?;
        let mut object = serde_json::Map::new();
        object.insert(field.clone(), Value::String(text.to_owned()));
        Some(self.read(&Value::Object(object), policy))
    }

    /// What the model reads when it replied without calling `finish`.
    pub(crate) fn nudge(&self) -> String {
        format!(
            "You did not give an answer. Call `{FINISH}` with the answer's fields (or another \
             tool, if you need more information)."
        )
    }
}
