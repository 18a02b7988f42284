//! Asking from inside a call: the form a typed question is written as, the answer read back
//! leniently, and every way asking can end (answered, declined, cancelled, nobody to ask, a
//! failed ask, the call cancelled while it waits).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value, json};
use toolsmith::{
    Arguments, AskError, AskFuture, Asker, CancellationToken, Context, Elicitation, Elicited,
    Sampled, Sampling, ToolError, ToolExt, ToolType, elicitation_schema,
};

/// How the account is used.
#[derive(Debug, Deserialize, ToolType, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Status {
    Active,
    Inactive,
    Pending,
}

/// A seat, each described: a titled choice.
#[derive(Debug, Deserialize, ToolType, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Seat {
    /// Aisle seat
    Aisle,
    /// Window seat
    Window,
}

/// The SEP-1034 form: a default for every primitive type.
#[derive(Debug, Deserialize, ToolType, PartialEq)]
struct Profile {
    /// Full name.
    #[serde(default = "john")]
    name: String,
    #[serde(default = "thirty")]
    age: i64,
    #[serde(default = "high")]
    score: f64,
    #[serde(default = "active")]
    status: Status,
    #[serde(default = "yes")]
    verified: bool,
}

fn john() -> String {
    "John Doe".into()
}
fn thirty() -> i64 {
    30
}
fn high() -> f64 {
    95.5
}
fn active() -> Status {
    Status::Active
}
fn yes() -> bool {
    true
}

impl serde::Serialize for Status {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(match self {
            Status::Active => "active",
            Status::Inactive => "inactive",
            Status::Pending => "pending",
        })
    }
}

/// Seats and choices of several.
#[derive(Debug, Deserialize, ToolType, PartialEq)]
struct Choices {
    seat: Seat,
    statuses: Vec<Status>,
    seats: Vec<Seat>,
    /// Where to send the ticket.
    email: Option<String>,
}

#[test]
fn every_primitive_is_offered_with_its_default() {
    let form = elicitation_schema(&<Profile as toolsmith::Describe>::type_graph()).unwrap();
    let properties = &form["properties"];
    assert_eq!(
        properties["name"],
        json!({"type": "string", "description": "Full name.", "default": "John Doe"})
    );
    assert_eq!(properties["age"], json!({"type": "integer", "default": 30}));
    assert_eq!(
        properties["score"],
        json!({"type": "number", "default": 95.5})
    );
    assert_eq!(
        properties["status"],
        json!({"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"})
    );
    assert_eq!(
        properties["verified"],
        json!({"type": "boolean", "default": true})
    );
    // Every field has a default, so none is required.
    assert!(form.get("required").is_none(), "{form}");
}

#[test]
fn choices_are_titled_when_every_value_is_described_and_sets_of_choices_are_arrays() {
    let form = elicitation_schema(&<Choices as toolsmith::Describe>::type_graph()).unwrap();
    let properties = &form["properties"];
    assert_eq!(
        properties["seat"],
        json!({"type": "string", "oneOf": [
            {"const": "aisle", "title": "Aisle seat"},
            {"const": "window", "title": "Window seat"}
        ]})
    );
    assert_eq!(
        properties["statuses"],
        json!({"type": "array", "items": {"type": "string", "enum": ["active", "inactive", "pending"]}})
    );
    assert_eq!(
        properties["seats"],
        json!({"type": "array", "items": {"anyOf": [
            {"const": "aisle", "title": "Aisle seat"},
            {"const": "window", "title": "Window seat"}
        ]}})
    );
    assert_eq!(
        properties["email"],
        json!({"type": "string", "description": "Where to send the ticket."})
    );
    assert_eq!(form["required"], json!(["seat", "statuses", "seats"]));
}

/// Has a nested object, which no form can hold.
#[derive(Deserialize, ToolType)]
struct Nested {
    #[allow(dead_code)]
    inner: Choices,
}

#[test]
fn a_type_no_form_can_hold_is_refused_naming_the_field() {
    let error = elicitation_schema(&<Nested as toolsmith::Describe>::type_graph()).unwrap_err();
    let message = error.to_string();
    assert!(message.starts_with("/properties/inner: "), "{message}");
    assert!(message.contains("this field is an object"), "{message}");
    let error = elicitation_schema(&<Vec<String> as toolsmith::Describe>::type_graph())
        .unwrap_err()
        .to_string();
    assert!(error.contains("a form is an object of fields"), "{error}");
}

/// Answers every question with what it was given, and remembers the questions.
#[derive(Default)]
struct Scripted {
    answer: Mutex<Option<Result<Elicited, AskError>>>,
    asked: Mutex<Vec<Elicitation>>,
    sampled: Mutex<Vec<Sampling>>,
}

impl Scripted {
    fn answering(answer: Result<Elicited, AskError>) -> Arc<Self> {
        Arc::new(Scripted {
            answer: Mutex::new(Some(answer)),
            ..Scripted::default()
        })
    }
}

impl Asker for Scripted {
    fn elicit<'a>(&'a self, _: &'a Context, request: &'a Elicitation) -> AskFuture<'a, Elicited> {
        self.asked.lock().unwrap().push(request.clone());
        let answer = self.answer.lock().unwrap().take();
        Box::pin(async move {
            match answer {
                Some(answer) => answer,
                // No answer scripted: a person who never answers.
                None => std::future::pending().await,
            }
        })
    }

    fn sample<'a>(&'a self, _: &'a Context, request: &'a Sampling) -> AskFuture<'a, Sampled> {
        self.sampled.lock().unwrap().push(request.clone());
        let text = format!("echo: {}", request.messages[0].text);
        Box::pin(async move {
            Ok(Sampled::new(text)
                .with_model("scripted")
                .with_stop_reason("endTurn"))
        })
    }
}

/// Asks for a profile and says what came back.
#[toolsmith::tool]
async fn ask_profile(ctx: &Context) -> Result<String, ToolError> {
    Ok(match ctx.elicit::<Profile>("Your profile?").await? {
        Elicited::Accept(p) => format!(
            "{} {} {} {:?} {}",
            p.name, p.age, p.score, p.status, p.verified
        ),
        other => other.action().to_owned(),
    })
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => unreachable!("an object is given"),
    }
}

fn call(ctx: Context) -> Result<String, ToolError> {
    AskProfile
        .call_blocking(Arguments::Text("{}"), ctx)
        .map(|output| output.as_text().into_owned())
}

#[test]
fn an_answer_is_read_leniently_into_the_type_and_the_form_is_what_was_asked() {
    let asker = Scripted::answering(Ok(Elicited::Accept(object(json!({
        "name": "Jane Smith", "age": "25", "score": 88, "status": "Inactive", "verified": "false"
    })))));
    let answer = call(Context::new().with_asker(asker.clone())).unwrap();
    assert_eq!(answer, "Jane Smith 25 88 Inactive false");
    let asked = asker.asked.lock().unwrap();
    assert_eq!(asked[0].message, "Your profile?");
    assert_eq!(asked[0].schema["properties"]["name"]["default"], "John Doe");
}

#[test]
fn a_declined_or_cancelled_question_is_said_as_such() {
    for (answer, word) in [(Elicited::Decline, "decline"), (Elicited::Cancel, "cancel")] {
        let asker = Scripted::answering(Ok(answer));
        assert_eq!(call(Context::new().with_asker(asker)).unwrap(), word);
    }
}

#[test]
fn an_answer_that_does_not_fit_is_an_ask_failed_error_saying_why() {
    let asker = Scripted::answering(Ok(Elicited::Accept(object(json!({"age": "old"})))));
    let error = call(Context::new().with_asker(asker)).unwrap_err();
    assert_eq!(error.code(), "ask_failed");
    let message = error.to_model_message();
    assert!(
        message.contains("the answer does not fit the form"),
        "{message}"
    );
    assert!(message.contains("age"), "{message}");
}

#[test]
fn nobody_to_ask_is_an_error_the_tool_can_handle() {
    let error = call(Context::new()).unwrap_err();
    assert_eq!(error.code(), "nobody_to_ask");
    assert_eq!(
        error.to_model_message(),
        "Tool `ask_profile` needed to ask a person (elicitation), and there is nobody to ask \
         here: the caller gave the call nobody to ask."
    );
    assert_eq!(error.to_json()["asking"], "elicitation");
    // An asker that takes no questions for a person says so in its own words.
    struct ModelOnly;
    impl Asker for ModelOnly {}
    let error = call(Context::new().with_asker(Arc::new(ModelOnly))).unwrap_err();
    assert_eq!(error.code(), "nobody_to_ask");
    assert!(
        error
            .to_model_message()
            .contains("takes no questions for a person")
    );
    let failed = Scripted::answering(Err(AskError::Failed("the client went away".into())));
    let error = call(Context::new().with_asker(failed)).unwrap_err();
    assert_eq!(error.code(), "ask_failed");
    assert!(error.to_model_message().ends_with("the client went away"));
}

#[test]
fn a_call_cancelled_while_it_waits_for_an_answer_ends_cancelled() {
    let asker = Arc::new(Scripted::default());
    let token = CancellationToken::new();
    let cancel = token.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        cancel.cancel();
    });
    let ctx = Context::new().with_asker(asker).with_cancellation(token);
    let error = call(ctx).unwrap_err();
    canceller.join().unwrap();
    assert_eq!(error.code(), "cancelled");
}

/// Summarizes `text` with the caller's model.
#[toolsmith::tool]
async fn summarize(ctx: &Context, text: String) -> Result<String, ToolError> {
    let sampled = ctx
        .sample(
            Sampling::new(text)
                .with_max_tokens(100)
                .with_system("Be brief."),
        )
        .await?;
    Ok(format!(
        "{} ({})",
        sampled.text,
        sampled.model.unwrap_or_default()
    ))
}

#[test]
fn sampling_asks_the_callers_model_or_says_there_is_none() {
    let asker = Arc::new(Scripted::default());
    let ctx = Context::new().with_asker(asker.clone());
    let output = Summarize
        .call_blocking(Arguments::Text(r#"{"text": "sky"}"#), ctx)
        .unwrap();
    assert_eq!(output.as_text(), "echo: sky (scripted)");
    let sampled = asker.sampled.lock().unwrap();
    assert_eq!(sampled[0].max_tokens, 100);
    assert_eq!(sampled[0].system.as_deref(), Some("Be brief."));
    let error = Summarize
        .call_blocking(Arguments::Text(r#"{"text": "sky"}"#), Context::new())
        .unwrap_err();
    assert_eq!(error.code(), "nobody_to_ask");
    assert!(error.to_model_message().contains("a model (sampling)"));
}
