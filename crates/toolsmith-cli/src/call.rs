//! `toolsmith call`: one call of a registered tool.

use std::io::Read;

use clap::Args;
use serde_json::{Value, json};
use toolsmith::{Arguments, CoerceErrors, Context, Registry, Repair, ToolError, ToolOutput};

use crate::error::UsageError;
use crate::input::{PolicyArgs, argument_text, find_tool};
use crate::output::{Outcome, repairs_json};

/// The arguments of `toolsmith call`.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// The name of the tool to call.
    #[arg(value_name = "TOOL")]
    tool: String,
    /// The arguments as JSON text; read from stdin when `-`; `{}` when omitted.
    #[arg(value_name = "ARGS_JSON")]
    arguments: Option<String>,
    /// Print one JSON object on stdout: `{"ok": true, "text", "structured", "repairs"}`, or the
    /// error (`{"ok": false, "code", "message", ...}`).
    #[arg(long)]
    json: bool,
    /// Do not print the repairs the arguments needed on stderr (they are printed one a line
    /// otherwise, unless `--json` puts them in its object).
    #[arg(long, short = 'q')]
    quiet: bool,
    #[command(flatten)]
    policy: PolicyArgs,
}

impl CallArgs {
    /// Calls the tool: its output, or why the call failed.
    pub fn run(&self, registry: &Registry, stdin: &mut dyn Read) -> Result<Outcome, UsageError> {
        // An unknown name is a usage problem, found before stdin is read.
        let entry = find_tool(registry, &self.tool)?;
        let policy = self.policy.policy();
        let given = self.arguments.as_deref().unwrap_or("{}");
        // Stdin is read as far as the tool reads arguments: under its own limits where it
        // states some.
        let limit = entry
            .tool()
            .limits()
            .map_or(policy.limits.max_input_bytes, |l| l.max_input_bytes);
        let result = match argument_text(given, stdin, limit)? {
            Ok(text) => {
                let context = Context::new().with_policy(policy);
                toolsmith::block_on(registry.call_entry(entry, Arguments::Text(&text), context))
                    .unwrap_or_else(|inside| {
                        Err(ToolError::Unavailable {
                            tool: self.tool.clone(),
                            reason: inside.to_string(),
                        })
                    })
            }
            Err(error) => Err(ToolError::InvalidArguments {
                tool: self.tool.clone(),
                errors: CoerceErrors(vec![error]),
            }),
        };
        Ok(match (result, self.json) {
            (Ok(output), false) if self.quiet => Outcome::Success(output.as_text().into_owned()),
            (Ok(output), false) => {
                let repairs = output.repairs.iter().map(repair_line).collect();
                Outcome::Success(output.as_text().into_owned()).after_warnings(repairs)
            }
            (Ok(output), true) => Outcome::Success(output_json(output).to_string()),
            (Err(error), false) => Outcome::Failed(error.to_model_message()),
            (Err(error), true) => Outcome::Invalid(error_json(&error).to_string()),
        })
    }
}

/// One repair as a line for stderr, its control characters escaped: what a model sent cannot
/// break the line or reach the terminal as a control sequence.
fn repair_line(repair: &Repair) -> String {
    let mut line = String::from("toolsmith: repaired ");
    for c in repair.message().chars() {
        if c.is_control() {
            line.extend(c.escape_default());
        } else {
            line.push(c);
        }
    }
    line
}

fn output_json(output: ToolOutput) -> Value {
    json!({
        "ok": true,
        "text": output.as_text(),
        "structured": output.structured,
        "repairs": repairs_json(&output.repairs),
    })
}

/// The error's own JSON, led by `"ok": false` so that a script tells the two shapes apart.
fn error_json(error: &ToolError) -> Value {
    let mut out = serde_json::Map::new();
    out.insert("ok".to_owned(), Value::Bool(false));
    if let Value::Object(fields) = error.to_json() {
        out.extend(fields);
    }
    Value::Object(out)
}
