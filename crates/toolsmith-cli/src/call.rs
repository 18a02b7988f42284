//! `toolsmith call`: one call of a registered tool, cancelled by Ctrl-C; what the tool asks a
//! person is asked on the terminal (unless stdin carries the arguments).

use std::borrow::Cow;
use std::future::Future;
use std::io::{BufReader, Read, Write};
use std::sync::Arc;

use clap::Args;
use serde_json::{Value, json};
use toolsmith::{
    Arguments, AskError, AskFuture, Asker, CoerceErrors, Context, Elicitation, Elicited,
    InsideRuntime, Registry, Repair, ThreadPerCall, ToolError, ToolOutput,
};

use crate::arguments::{PolicyArgs, argument_text};
use crate::error::UsageError;
use crate::interrupt::{GRACE, Interrupt};
use crate::outcome::{Outcome, repairs_json};
use crate::person::{Notes, ShowsNothing, TerminalPerson, converse};
use crate::select::{Renames, find_tool};
use crate::upstream::Upstreams;

/// The asker of a call whose arguments came on stdin: no answer can be read there.
struct StdinTaken;

impl Asker for StdinTaken {
    fn elicit<'a>(&'a self, _: &'a Context, _: &'a Elicitation) -> AskFuture<'a, Elicited> {
        Box::pin(std::future::ready(Err(AskError::Unsupported(
            "stdin carried the arguments (`-`), so no answer can be read on it (give them on \
             the command line to be asked)"
                .to_owned(),
        ))))
    }
}

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
    #[command(flatten)]
    renames: Renames,
    #[command(flatten)]
    pub upstreams: Upstreams,
}

impl CallArgs {
    /// Calls the tool: its output, or why the call failed, or that it was interrupted. What
    /// the tool asks a person ([`Context::elicit`]) is asked on `stderr` and answered on
    /// `stdin`, unless stdin carries the arguments (`-`): then there is nobody to ask.
    pub fn run(
        &self,
        registry: &Registry,
        stdin: &mut dyn Read,
        stderr: &mut dyn Write,
    ) -> Result<Outcome, UsageError> {
        // A sync tool runs on a thread of its own, so that this thread can end the command at
        // Ctrl-C even when the tool does not look at its context.
        let registry = self
            .renames
            .apply(Cow::Borrowed(registry))?
            .into_owned()
            .with_offload(Arc::new(ThreadPerCall));
        // An unknown name is a usage problem, found before stdin is read.
        let entry = find_tool(&registry, &self.tool)?;
        let policy = self.policy.policy();
        let given = self.arguments.as_deref().unwrap_or("{}");
        // Stdin is read as far as the tool reads arguments: under its own limits where it
        // states some.
        let limit = entry
            .tool()
            .limits()
            .map_or(policy.limits.max_input_bytes, |l| l.max_input_bytes);
        let text = match argument_text(given, stdin, limit)? {
            Ok(text) => text,
            Err(error) => {
                let error = ToolError::InvalidArguments {
                    tool: self.tool.clone(),
                    errors: CoerceErrors(vec![error]),
                };
                return Ok(self.outcome(Err(error)));
            }
        };
        let (interrupt, warning) = match Interrupt::watch() {
            Ok(interrupt) => (interrupt, None),
            Err(error) => (
                Interrupt::never(),
                Some(format!(
                    "toolsmith: warning: Ctrl-C cannot cancel the call: {error}"
                )),
            ),
        };
        let context = Context::new()
            .with_policy(policy)
            .with_cancellation(interrupt.cancellation().clone());
        let answered = if self.arguments.as_deref() == Some("-") {
            // Stdin held the arguments: no answer can come on it.
            let context = context.with_asker(Arc::new(StdinTaken));
            let call = registry.call_entry(entry, Arguments::Text(&text), context);
            block_on(interrupt.until_given_up(call))
        } else {
            let notes = Notes::new();
            let person = Arc::new(TerminalPerson::new(notes.sender.clone()));
            let context = context.with_asker(person);
            let mut answers = BufReader::new(stdin);
            let (registry, interrupt, text) = (&registry, &interrupt, &text);
            converse(
                &notes,
                &mut answers,
                stderr,
                &mut ShowsNothing,
                Some(interrupt),
                move |_| {
                    let call = registry.call_entry(entry, Arguments::Text(text), context);
                    block_on(interrupt.until_given_up(call))
                },
            )
            .and_then(|answered| answered)
        };
        let interrupted = interrupt.is_interrupted();
        // The watch ends here: from now on SIGINT ends the process as before.
        drop(interrupt);
        let outcome = match (answered, interrupted) {
            (Err(inside), _) => self.outcome(Err(ToolError::Unavailable {
                tool: self.tool.clone(),
                reason: inside.to_string(),
            })),
            (Ok(answer), true) => {
                let stopped = if answer.is_some() {
                    String::new()
                } else {
                    format!(
                        "; it had not stopped after {} s, and the command ends without its \
                         answer",
                        GRACE.as_secs()
                    )
                };
                Outcome::Interrupted(format!(
                    "toolsmith: interrupted (SIGINT): the call of `{}` was cancelled{stopped}",
                    self.tool
                ))
            }
            (Ok(Some(result)), false) => self.outcome(result),
            // The command gives up on a call only once it is interrupted.
            (Ok(None), false) => self.outcome(Err(ToolError::Cancelled {
                tool: self.tool.clone(),
            })),
        };
        Ok(outcome.after_warnings(warning.into_iter().collect()))
    }

    /// What the call's answer prints.
    fn outcome(&self, result: Result<ToolOutput, ToolError>) -> Outcome {
        match (result, self.json) {
            (Ok(output), false) if self.quiet => Outcome::Success(output.as_text().into_owned()),
            (Ok(output), false) => {
                let repairs = output.repairs.iter().map(repair_line).collect();
                Outcome::Success(output.as_text().into_owned()).after_warnings(repairs)
            }
            (Ok(output), true) => Outcome::Success(output_json(output).to_string()),
            (Err(error), false) => Outcome::Failed(error.to_model_message()),
            (Err(error), true) => Outcome::Invalid(error_json(&error).to_string()),
        }
    }
}

/// Runs `future` to its end on this thread, in a tokio runtime of its own (so that async tools
/// built on tokio work), which is then left without waiting for what the call spawned.
fn block_on<F: Future>(future: F) -> Result<F::Output, InsideRuntime> {
    // tokio would panic.
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(InsideRuntime);
    }
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => {
            let output = runtime.block_on(future);
            runtime.shutdown_background();
            Ok(output)
        }
        // Without a runtime, the tools that need none still run.
        Err(_) => toolsmith::block_on(future),
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
