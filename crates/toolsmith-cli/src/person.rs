//! The person at the terminal, answering what a tool asks ([`toolsmith::Context::elicit`]):
//! [`TerminalPerson`] (the agent's elicitation handler, and `toolsmith call`'s asker) hands
//! each question to the thread that owns the terminal; [`converse`] runs the work on a thread
//! of its own while that thread asks each question with [`fill_in`], field by field.
//!
//! So one reader serves the approval prompts and the questions alike, and nothing a tool sends
//! reaches the terminal unescaped.

use std::future::Future;
use std::io::{BufRead, Write};
use std::pin::Pin;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context as TaskContext, Poll, Waker};

use serde_json::{Map, Number, Value};
use toolsmith::{
    AskError, AskFuture, Asker, Context, Elicitation, Elicited, InsideRuntime, Sampled, Sampling,
};
use toolsmith_agent::{ElicitationHandler, Event};

use crate::interrupt::Interrupt;

/// What a run sends the terminal's thread.
pub(crate) enum Note {
    /// An event of a streamed run.
    Event(Event),
    /// A question for the person, and where the answer goes.
    Question(Elicitation, Answer),
    /// The run (or resumption) has ended.
    Done,
}

/// The handler of an agent run from the command line: each question goes to the terminal's
/// thread as a [`Note::Question`].
pub(crate) struct TerminalPerson {
    notes: Mutex<Sender<Note>>,
}

impl TerminalPerson {
    pub(crate) fn new(notes: Sender<Note>) -> Self {
        TerminalPerson {
            notes: Mutex::new(notes),
        }
    }
}

impl ElicitationHandler for TerminalPerson {
    fn elicit<'a>(&'a self, request: &'a Elicitation) -> AskFuture<'a, Elicited> {
        let answer = Answer::default();
        let sent = self
            .notes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .send(Note::Question(request.clone(), answer.clone()));
        if sent.is_err() {
            return Box::pin(std::future::ready(Err(AskError::Unsupported(
                "the terminal is no longer read".to_owned(),
            ))));
        }
        Box::pin(answer)
    }
}

/// `toolsmith call`'s asker: the person at the terminal answers what the tool asks a person;
/// there is no model to ask.
impl Asker for TerminalPerson {
    fn elicit<'a>(&'a self, _: &'a Context, request: &'a Elicitation) -> AskFuture<'a, Elicited> {
        ElicitationHandler::elicit(self, request)
    }

    fn sample<'a>(&'a self, _: &'a Context, _: &'a Sampling) -> AskFuture<'a, Sampled> {
        Box::pin(std::future::ready(Err(AskError::Unsupported(
            "`toolsmith call` has no model to ask (`toolsmith agent` has)".to_owned(),
        ))))
    }
}

/// The channel the work's notes (events, questions, its end) come to the terminal's thread
/// on.
pub(crate) struct Notes {
    pub(crate) sender: Sender<Note>,
    receiver: Receiver<Note>,
}

impl Notes {
    pub(crate) fn new() -> Self {
        let (sender, receiver) = std::sync::mpsc::channel();
        Notes { sender, receiver }
    }

    /// Answers the questions queued while no work is going on: the work that asked has ended.
    fn answer_stale(&self) {
        while let Ok(note) = self.receiver.try_recv() {
            if let Note::Question(_, answer) = note {
                answer.give(Err(AskError::Unsupported(
                    "the work that asked has ended".to_owned(),
                )));
            }
        }
    }
}

/// Sends [`Note::Done`] when dropped.
struct Done(Sender<Note>);

impl Drop for Done {
    fn drop(&mut self) {
        let _ = self.0.send(Note::Done);
    }
}

/// What the terminal's thread shows of the work besides its questions.
pub(crate) trait Shows {
    /// An event of a streamed run.
    fn event(&mut self, event: Event, stderr: &mut dyn Write);
    /// A question is about to be asked (a line being written ends first).
    fn before_question(&mut self) {}
}

/// Shows nothing: work that reports no events.
pub(crate) struct ShowsNothing;

impl Shows for ShowsNothing {
    fn event(&mut self, _: Event, _: &mut dyn Write) {}
}

/// Runs `go` on a thread of its own while this thread, which owns the terminal, shows its
/// events and asks the person its tools' questions (sent as [`Note::Question`]s on `notes` by a
/// [`TerminalPerson`]), reading `answers`; `go` is given the sender for its events. Each
/// question is asked under `interrupt`'s [`prompting`](Interrupt::prompting) guard, where
/// there is one.
///
/// # Errors
/// [`InsideRuntime`] when this thread is inside a tokio runtime: it would block that runtime
/// until the work ends (even with the work on another thread), so nothing is started.
pub(crate) fn converse<T: Send>(
    notes: &Notes,
    answers: &mut dyn BufRead,
    stderr: &mut dyn Write,
    shows: &mut dyn Shows,
    interrupt: Option<&Interrupt>,
    go: impl FnOnce(Sender<Note>) -> T + Send,
) -> Result<T, InsideRuntime> {
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(InsideRuntime);
    }
    // A question still queued was asked by earlier work (a sync tool that ran on past its
    // run's end): nothing waits for its answer now.
    notes.answer_stale();
    std::thread::scope(|scope| {
        let sender = notes.sender.clone();
        let worker = scope.spawn(move || {
            // Says the work ended however it ends, a panic too: this thread waits for it.
            let _done = Done(sender.clone());
            go(sender)
        });
        for note in notes.receiver.iter() {
            match note {
                Note::Event(event) => shows.event(event, stderr),
                Note::Question(question, answer) => {
                    shows.before_question();
                    let _open = interrupt.map(Interrupt::prompting);
                    answer.give(fill_in(&question, answers, stderr));
                }
                Note::Done => break,
            }
        }
        notes.answer_stale();
        match worker.join() {
            Ok(done) => Ok(done),
            // A panic in the work is the program's bug: it goes on as it would have.
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// A person's answer, given on one thread and awaited on another.
#[derive(Clone, Default)]
pub(crate) struct Answer(Arc<Mutex<Slot>>);

#[derive(Default)]
struct Slot {
    answer: Option<Result<Elicited, AskError>>,
    waker: Option<Waker>,
}

impl Answer {
    /// Gives the answer, waking whoever waits for it.
    pub(crate) fn give(&self, answer: Result<Elicited, AskError>) {
        let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        slot.answer = Some(answer);
        if let Some(waker) = slot.waker.take() {
            waker.wake();
        }
    }
}

impl Future for Answer {
    type Output = Result<Elicited, AskError>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match slot.answer.take() {
            Some(answer) => Poll::Ready(answer),
            None => {
                slot.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

/// Asks `question` on the terminal: whether to answer at all (`y`, or `n` to decline; no
/// input left cancels), then each field of its form in turn. An empty line takes a field's
/// default, leaves out an optional field, and asks a required one again; an answer that does
/// not read as the field's type asks again, saying what it takes.
pub(crate) fn fill_in(
    question: &Elicitation,
    answers: &mut dyn BufRead,
    stderr: &mut dyn Write,
) -> Result<Elicited, AskError> {
    let _ = writeln!(
        stderr,
        "toolsmith: a tool asks: {}",
        printable(&question.message, false)
    );
    loop {
        let Some(line) = prompt(answers, stderr, "Answer it? [y]es / [n]o: ") else {
            return Ok(Elicited::Cancel);
        };
        match line.as_str() {
            "y" | "Y" | "yes" | "Yes" => break,
            "n" | "N" | "no" | "No" => return Ok(Elicited::Decline),
            _ => {}
        }
    }
    let empty = Map::new();
    let properties = question.schema["properties"].as_object().unwrap_or(&empty);
    let required: Vec<&str> = question.schema["required"]
        .as_array()
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut content = Map::new();
    for (name, field) in properties {
        let field = Field::read(name, field, required.contains(&name.as_str()));
        let _ = writeln!(stderr, "{}", field.describe());
        let value = loop {
            let Some(line) = prompt(answers, stderr, &format!("{}: ", printable(name, false)))
            else {
                return Ok(Elicited::Cancel);
            };
            if line.is_empty() {
                match (&field.default, field.required) {
                    (Some(default), _) => break Some(default.clone()),
                    (None, false) => break None,
                    (None, true) => {
                        let _ = writeln!(stderr, "  this one is required: {}", field.takes());
                        continue;
                    }
                }
            }
            match field.parse(&line) {
                Some(value) => break Some(value),
                None => {
                    let _ = writeln!(stderr, "  {}", field.takes());
                }
            }
        };
        if let Some(value) = value {
            content.insert(name.clone(), value);
        }
    }
    Ok(Elicited::Accept(content))
}

/// Writes `prompt` and reads one line, trimmed; `None` when there is no input left.
fn prompt(answers: &mut dyn BufRead, stderr: &mut dyn Write, prompt: &str) -> Option<String> {
    let _ = write!(stderr, "{prompt}");
    let _ = stderr.flush();
    let mut line = String::new();
    match answers.read_line(&mut line) {
        Ok(0) | Err(_) => {
            let _ = writeln!(stderr);
            None
        }
        Ok(_) => Some(line.trim().to_owned()),
    }
}

/// One field of a form, as the terminal asks it.
struct Field {
    name: String,
    description: Option<String>,
    kind: Kind,
    default: Option<Value>,
    required: bool,
    /// The bounds the form states: a number's `minimum` and `maximum`, a text's `minLength`
    /// and `maxLength` (in characters), a set of choices' `minItems` and `maxItems`.
    least: Option<f64>,
    most: Option<f64>,
}

enum Kind {
    Text,
    Integer,
    Number,
    Boolean,
    /// One of these values (with their titles, where the form gives them).
    Choice(Vec<(String, Option<String>)>),
    /// Some of these values.
    Choices(Vec<(String, Option<String>)>),
}

impl Field {
    fn read(name: &str, schema: &Value, required: bool) -> Self {
        let kind = match schema["type"].as_str() {
            Some("integer") => Kind::Integer,
            Some("number") => Kind::Number,
            Some("boolean") => Kind::Boolean,
            Some("array") => Kind::Choices(options(&schema["items"])),
            _ if schema.get("enum").is_some() || schema.get("oneOf").is_some() => {
                Kind::Choice(options(schema))
            }
            _ => Kind::Text,
        };
        let (least, most) = match kind {
            Kind::Integer | Kind::Number => ("minimum", "maximum"),
            Kind::Text => ("minLength", "maxLength"),
            Kind::Choices(_) => ("minItems", "maxItems"),
            Kind::Boolean | Kind::Choice(_) => ("", ""),
        };
        Field {
            name: name.to_owned(),
            description: schema["description"].as_str().map(str::to_owned),
            kind,
            default: schema.get("default").cloned(),
            required,
            least: schema.get(least).and_then(Value::as_f64),
            most: schema.get(most).and_then(Value::as_f64),
        }
    }

    /// Whether `size` (a number, a text's length, how many choices) is within the bounds.
    fn within(&self, size: f64) -> bool {
        self.least.is_none_or(|least| size >= least) && self.most.is_none_or(|most| size <= most)
    }

    /// The field as shown before its prompt: name, description, options, default.
    fn describe(&self) -> String {
        let mut out = format!("  {}", printable(&self.name, false));
        if let Some(description) = &self.description {
            out.push_str(&format!(" - {}", printable(description, false)));
        }
        if !self.required {
            out.push_str(" (optional)");
        }
        if let Kind::Choice(options) | Kind::Choices(options) = &self.kind {
            for (at, (value, title)) in options.iter().enumerate() {
                out.push_str(&format!("\n    {}) {}", at + 1, printable(value, false)));
                if let Some(title) = title {
                    out.push_str(&format!(" - {}", printable(title, false)));
                }
            }
        }
        if let Some(default) = &self.default {
            out.push_str(&format!(
                "\n    (empty for {})",
                printable(&default.to_string(), false)
            ));
        }
        out
    }

    /// What the field takes, said after an answer it could not read.
    fn takes(&self) -> String {
        let what = match self.kind {
            Kind::Text => "type the text",
            Kind::Integer => "type a whole number",
            Kind::Number => "type a number",
            Kind::Boolean => "type y or n",
            Kind::Choice(_) => "type one option's number or value",
            Kind::Choices(_) => "type options' numbers or values, separated by commas",
        };
        let unit = match self.kind {
            Kind::Text => " characters",
            Kind::Choices(_) => " options",
            _ => "",
        };
        match (self.least, self.most) {
            (Some(least), Some(most)) => format!("{what}, from {least} to {most}{unit}"),
            (Some(least), None) => format!("{what}, at least {least}{unit}"),
            (None, Some(most)) => format!("{what}, at most {most}{unit}"),
            (None, None) => what.to_owned(),
        }
    }

    /// `line` as the field's value, if it reads as one.
    fn parse(&self, line: &str) -> Option<Value> {
        #[allow(clippy::cast_precision_loss)]
        let count = |n: usize| n as f64;
        match &self.kind {
            Kind::Text => self
                .within(count(line.chars().count()))
                .then(|| Value::String(line.to_owned())),
            Kind::Integer => {
                let number = line.parse::<i64>().ok()?;
                #[allow(clippy::cast_precision_loss)]
                self.within(number as f64).then(|| Value::from(number))
            }
            Kind::Number => line
                .parse::<f64>()
                .ok()
                .filter(|number| self.within(*number))
                .and_then(Number::from_f64)
                .map(Value::Number),
            Kind::Boolean => match line {
                "y" | "Y" | "yes" | "Yes" | "true" => Some(Value::Bool(true)),
                "n" | "N" | "no" | "No" | "false" => Some(Value::Bool(false)),
                _ => None,
            },
            Kind::Choice(options) => pick(options, line).map(Value::String),
            Kind::Choices(options) => line
                .split(',')
                .map(|part| pick(options, part.trim()).map(Value::String))
                .collect::<Option<Vec<Value>>>()
                .filter(|picked| self.within(count(picked.len())))
                .map(Value::Array),
        }
    }
}

/// The option `text` names: by its number (from 1) or its value.
fn pick(options: &[(String, Option<String>)], text: &str) -> Option<String> {
    if let Some(at) = text.parse::<usize>().ok().and_then(|n| n.checked_sub(1))
        && let Some((value, _)) = options.get(at)
    {
        return Some(value.clone());
    }
    options
        .iter()
        .find(|(value, _)| value == text)
        .map(|(value, _)| value.clone())
}

/// The options of a choice: `enum` (with the legacy `enumNames` as titles), or `oneOf` /
/// `anyOf` of `{const, title}`.
fn options(schema: &Value) -> Vec<(String, Option<String>)> {
    if let Some(values) = schema["enum"].as_array() {
        let names = schema["enumNames"].as_array();
        return values
            .iter()
            .enumerate()
            .filter_map(|(at, value)| {
                let title = names
                    .and_then(|names| names.get(at))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                value.as_str().map(|value| (value.to_owned(), title))
            })
            .collect();
    }
    let titled = schema["oneOf"]
        .as_array()
        .or_else(|| schema["anyOf"].as_array());
    titled
        .into_iter()
        .flatten()
        .filter_map(|option| {
            let value = option["const"].as_str()?.to_owned();
            Some((value, option["title"].as_str().map(str::to_owned)))
        })
        .collect()
}

/// `text` safe to show on a terminal: control characters (which could move the cursor, rewrite
/// the line a person is about to answer, or change the terminal's state) and the invisible
/// characters that reorder or hide text (bidirectional overrides, zero-width ones) written as
/// escapes; line breaks and tabs kept where `lines` says.
pub(crate) fn printable(text: &str, lines: bool) -> String {
    let hidden = |c: char| matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}');
    text.chars()
        .map(|c| {
            if (c.is_control() && !(lines && (c == '\n' || c == '\t'))) || hidden(c) {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}
