//! `toolsmith coerce`: tool arguments coerced against a JSON Schema file.

use std::io::Read;
use std::path::PathBuf;

use clap::Args;
use serde_json::json;
use toolsmith::{Arguments, CoerceErrors, ImportedSchema, Type};

use crate::arguments::{PolicyArgs, argument_text};
use crate::error::UsageError;
use crate::outcome::{Outcome, repairs_json};
use crate::schema_file::load_checked_schema;

/// The arguments of `toolsmith coerce`.
#[derive(Debug, Args)]
pub struct CoerceArgs {
    /// The JSON Schema of the arguments; its root must be `type: object`.
    #[arg(long, value_name = "FILE")]
    schema: PathBuf,
    /// The arguments as JSON text; read from stdin when omitted or `-`.
    #[arg(value_name = "ARGS_JSON")]
    arguments: Option<String>,
    /// Import the schema strictly: refuse what has no exact reading instead of warning.
    #[arg(long)]
    strict_import: bool,
    #[command(flatten)]
    policy: PolicyArgs,
}

impl CoerceArgs {
    /// The canonical arguments and their repairs, or every error.
    pub fn run(&self, stdin: &mut dyn Read) -> Result<Outcome, UsageError> {
        let (schema, warnings) = load_checked_schema(&self.schema, self.strict_import)?;
        Ok(self.coerce(&schema, stdin)?.after_warnings(warnings))
    }

    fn coerce(&self, schema: &ImportedSchema, stdin: &mut dyn Read) -> Result<Outcome, UsageError> {
        match schema.graph().resolved_root() {
            Some(Type::Struct(_) | Type::Map(_)) => {}
            other => {
                return Err(UsageError::NotObject {
                    path: self.schema.clone(),
                    kind: other.map_or("an unresolvable reference", Type::kind),
                });
            }
        }

        let policy = self.policy.policy();
        let given = self.arguments.as_deref().unwrap_or("-");
        let text = match argument_text(given, stdin, policy.limits.max_input_bytes)? {
            Ok(text) => text,
            Err(error) => return Ok(invalid(&CoerceErrors(vec![error]))),
        };

        Ok(
            // Coerced by the type, then checked against the schema itself.
            match schema.coerce(Arguments::Text(&text), &policy) {
                // Written from the value where it lies: `json!` would copy all of it first.
                Ok(coerced) => Outcome::Success(format!(
                    "{{\"value\":{},\"repairs\":{}}}",
                    coerced.value,
                    repairs_json(&coerced.repairs)
                )),
                Err(errors) => invalid(&errors),
            },
        )
    }
}

fn invalid(errors: &CoerceErrors) -> Outcome {
    Outcome::Invalid(json!({ "errors": errors.to_json() }).to_string())
}
