//! [`ToolDeclaration`]: a tool as a model is told of it, in no provider's shape. Each client
//! writes it in its own dialect and envelope.

use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, OnceLock};

use serde_json::Value;
use toolsmith::{Dialect, EnvelopeError, Tool, TypeGraph, parameters_schema};

/// A tool offered to a model: its name, description and parameters' type.
///
/// Provider-neutral: a [`LanguageModel`](crate::LanguageModel) writes the parameters in its own
/// dialect ([`parameters_in`](Self::parameters_in)) and wraps them in its API's envelope (an
/// OpenAI `function`, an Anthropic `input_schema`, a Gemini function declaration). The schema
/// of each dialect is written the first time it is asked for and kept, so declaring the same
/// tools on every step of a run costs a lookup. Cloning is cheap.
///
/// ```
/// use toolsmith::Dialect;
/// use toolsmith_agent::ToolDeclaration;
///
/// /// Adds two integers.
/// #[toolsmith::tool]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// let declared = ToolDeclaration::of(&Add);
/// assert_eq!(declared.name(), "add");
/// let gemini = declared.parameters_in(Dialect::Gemini)?;
/// assert_eq!(gemini["required"], serde_json::json!(["a", "b"]));
/// # Ok::<(), toolsmith::EnvelopeError>(())
/// ```
#[derive(Clone)]
pub struct ToolDeclaration(Arc<Declared>);

struct Declared {
    name: String,
    description: String,
    parameters: TypeGraph,
    schemas: [OnceLock<Result<Value, EnvelopeError>>; Dialect::ALL.len()],
}

impl ToolDeclaration {
    /// A tool of `name` whose arguments are an object of type `parameters` (a struct).
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: TypeGraph,
    ) -> Self {
        ToolDeclaration(Arc::new(Declared {
            name: name.into(),
            description: description.into(),
            parameters,
            schemas: [const { OnceLock::new() }; Dialect::ALL.len()],
        }))
    }

    /// The declaration of `tool`.
    pub fn of(tool: &dyn Tool) -> Self {
        ToolDeclaration::new(tool.name(), tool.description(), tool.parameters().clone())
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// What the tool does, for the model.
    pub fn description(&self) -> &str {
        &self.0.description
    }

    /// The type of the tool's arguments.
    pub fn parameters(&self) -> &TypeGraph {
        &self.0.parameters
    }

    /// The parameters' JSON Schema in `dialect`, once the name is one `dialect`'s receiver
    /// takes.
    ///
    /// # Errors
    /// [`EnvelopeError::Name`] when the receiver refuses the name, [`EnvelopeError::Schema`]
    /// when the parameters cannot be written in the dialect (a recursive type for Gemini, say).
    pub fn parameters_in(&self, dialect: Dialect) -> Result<Cow<'_, Value>, EnvelopeError> {
        let slot = Dialect::ALL
            .iter()
            .position(|&d| d == dialect)
            .and_then(|index| self.0.schemas.get(index));
        match slot {
            Some(slot) => match slot.get_or_init(|| self.write(dialect)) {
                Ok(schema) => Ok(Cow::Borrowed(schema)),
                Err(error) => Err(error.clone()),
            },
            // A dialect missing from `Dialect::ALL` goes uncached.
            None => self.write(dialect).map(Cow::Owned),
        }
    }

    fn write(&self, dialect: Dialect) -> Result<Value, EnvelopeError> {
        dialect
            .check_tool_name(&self.0.name)
            .map_err(EnvelopeError::Name)?;
        parameters_schema(&self.0.parameters, dialect).map_err(|error| EnvelopeError::Schema {
            tool: self.0.name.clone(),
            error,
        })
    }
}

impl fmt::Debug for ToolDeclaration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDeclaration")
            .field("name", &self.0.name)
            .field("description", &self.0.description)
            .finish_non_exhaustive()
    }
}
