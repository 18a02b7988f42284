//! [`Outcome`]: what a command prints, where, and with which exit status; and the JSON it prints,
//! laid out for reading ([`pretty`]), repairs among it ([`repairs_json`]).

use serde_json::Value;
use toolsmith::Repair;

use crate::error::UsageError;

/// What a command prints, and whether the input it judged was valid.
#[derive(Debug)]
pub enum Outcome {
    /// The command did its job: this text on stdout (exit 0).
    Success(String),
    /// The input was judged and found wanting: this text on stdout (JSON errors, or lint
    /// findings one a line) says why (exit 1).
    Invalid(String),
    /// The tool arguments are invalid or the tool failed: this message on stderr says why
    /// (exit 1).
    Failed(String),
    /// The command was interrupted (SIGINT): this message on stderr says what was stopped
    /// (exit 130).
    Interrupted(String),
    /// Part of the job was done: `done` on stdout, and `problems` on stderr say what was not
    /// (exit 1).
    Partial {
        /// What could be done.
        done: String,
        /// What could not, one a line.
        problems: String,
    },
    /// `outcome`, after these warnings on stderr, one a line (the exit status is `outcome`'s).
    Warned {
        /// What to say first.
        warnings: String,
        /// Then the outcome itself.
        outcome: Box<Outcome>,
    },
}

impl Outcome {
    /// This outcome, after `warnings` on stderr; itself when there are none.
    pub fn after_warnings(self, warnings: Vec<String>) -> Outcome {
        if warnings.is_empty() {
            return self;
        }
        Outcome::Warned {
            warnings: warnings.join("\n"),
            outcome: Box::new(self),
        }
    }

    /// A JSON document printed for reading (exit 0).
    pub fn document(value: &Value) -> Result<Outcome, UsageError> {
        pretty(value).map(Outcome::Success)
    }
}

/// A JSON document laid out for reading.
pub fn pretty(value: &Value) -> Result<String, UsageError> {
    serde_json::to_string_pretty(value).map_err(UsageError::Print)
}

/// Repairs as the JSON array every command prints.
pub fn repairs_json(repairs: &[Repair]) -> Value {
    Value::Array(repairs.iter().map(Repair::to_json).collect())
}
