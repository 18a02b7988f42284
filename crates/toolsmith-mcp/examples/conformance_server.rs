//! The server the official MCP conformance suite (`@modelcontextprotocol/conformance`) tests:
//! tools written with `#[tool]`, named and answering as the suite's scenarios expect, served
//! over streamable HTTP with sessions at `--http ADDR`, path `/mcp`.
//!
//! `cargo xtask conformance` builds and runs it; by hand:
//! `cargo run -p toolsmith-mcp --example conformance_server -- --http 127.0.0.1:0`. It prints
//! `conformance_server: listening on http://ADDR/mcp` on stderr once it serves (the address
//! bound, a free port for port 0), and stops on SIGTERM or Ctrl-C.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};
use serde_json::json;
use toolsmith::{
    Content, Context, Elicited, LogLevel, Progress, Registry, Resource, Sampling, ToolError,
    ToolOutput, ToolType,
};
use toolsmith_mcp::{McpConfig, McpServer, ServeError};

/// A 1x1 red PNG, as the suite's reference server sends it.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// A minimal WAV, as the suite's reference server sends it.
const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// The bytes `encoded` (a constant above) stands for.
fn bytes(encoded: &str) -> Vec<u8> {
    // The constants are valid base64; nothing a client sends is decoded here.
    BASE64.decode(encoded).unwrap_or_default()
}

/// Tests simple text content response.
#[toolsmith::tool]
fn test_simple_text() -> String {
    "This is a simple text response for testing.".to_owned()
}

/// Tests image content response.
#[toolsmith::tool]
fn test_image_content() -> Content {
    Content::image(bytes(PNG), "image/png")
}

/// Tests audio content response.
#[toolsmith::tool]
fn test_audio_content() -> Content {
    Content::audio(bytes(WAV), "audio/wav")
}

/// Tests embedded resource content response.
#[toolsmith::tool]
fn test_embedded_resource() -> Content {
    Resource::text(
        "test://embedded-resource",
        "This is an embedded resource content.",
    )
    .with_mime_type("text/plain")
    .into()
}

/// Tests response with multiple content types.
#[toolsmith::tool]
fn test_multiple_content_types() -> ToolOutput {
    ToolOutput::new(vec![
        Content::text("Multiple content types test:"),
        Content::image(bytes(PNG), "image/png"),
        Resource::text(
            "test://mixed-content-resource",
            r#"{"test":"data","value":123}"#,
        )
        .with_mime_type("application/json")
        .into(),
    ])
}

/// Tests tool that emits log messages during execution.
#[toolsmith::tool]
async fn test_tool_with_logging(ctx: &Context) -> String {
    ctx.log(LogLevel::Info, "Tool execution started");
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.log(LogLevel::Info, "Tool processing data");
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.log(LogLevel::Info, "Tool execution completed");
    "Tool with logging executed successfully".to_owned()
}

/// Tests tool that reports progress notifications.
#[toolsmith::tool]
async fn test_tool_with_progress(ctx: &Context) -> String {
    for (step, done) in [0, 50, 100].into_iter().enumerate() {
        if step > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ctx.progress(Progress::of(done, 100).with_message(format!("Completed step {done} of 100")));
    }
    "Progress reported".to_owned()
}

/// Tests error response handling.
#[toolsmith::tool]
fn test_error_handling() -> Result<String, String> {
    Err("This tool intentionally returns an error for testing".to_owned())
}

/// A postal address.
#[derive(Deserialize, ToolType)]
#[serde(rename = "address")]
struct Address {
    /// The street.
    street: Option<String>,
    /// The city.
    city: Option<String>,
}

/// Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613).
#[toolsmith::tool]
fn json_schema_2020_12_tool(name: Option<String>, address: Option<Address>) -> String {
    let place = address
        .map(|a| {
            format!(
                "{}, {}",
                a.street.unwrap_or_default(),
                a.city.unwrap_or_default()
            )
        })
        .unwrap_or_default();
    format!(
        "JSON Schema 2020-12 tool called with: {} {place}",
        name.unwrap_or_default()
    )
}

/// Tests server-initiated sampling (LLM completion request).
#[toolsmith::tool]
async fn test_sampling(ctx: &Context, prompt: String) -> Result<String, ToolError> {
    let sampled = ctx
        .sample(Sampling::new(prompt).with_max_tokens(100))
        .await?;
    Ok(format!("LLM response: {}", sampled.text))
}

/// What `test_elicitation` asks the user.
#[derive(Deserialize, Serialize, ToolType)]
struct UserInfo {
    /// User's response
    username: String,
    /// User's email address
    email: String,
}

/// Tests server-initiated elicitation (user input request).
#[toolsmith::tool]
async fn test_elicitation(ctx: &Context, message: String) -> Result<String, ToolError> {
    let answer = ctx.elicit::<UserInfo>(message).await?;
    Ok(format!(
        "User response: <action: {}, content: {}>",
        answer.action(),
        content(answer)
    ))
}

/// A status, offered with a default (SEP-1034).
#[derive(Deserialize, Serialize, ToolType)]
#[serde(rename_all = "snake_case")]
enum Status {
    Active,
    Inactive,
    Pending,
}

/// A form with a default for every primitive type (SEP-1034).
#[derive(Deserialize, Serialize, ToolType)]
struct Defaults {
    #[serde(default = "defaults::name")]
    name: String,
    #[serde(default = "defaults::age")]
    age: i64,
    #[serde(default = "defaults::score")]
    score: f64,
    #[serde(default = "defaults::status")]
    status: Status,
    #[serde(default = "defaults::verified")]
    verified: bool,
}

mod defaults {
    pub fn name() -> String {
        "John Doe".to_owned()
    }
    pub fn age() -> i64 {
        30
    }
    pub fn score() -> f64 {
        95.5
    }
    pub fn status() -> super::Status {
        super::Status::Active
    }
    pub fn verified() -> bool {
        true
    }
}

/// Tests elicitation with default values for every primitive type (SEP-1034).
#[toolsmith::tool]
async fn test_elicitation_sep1034_defaults(ctx: &Context) -> Result<String, ToolError> {
    let answer = ctx.elicit::<Defaults>("Please review your details").await?;
    Ok(completed(answer.action(), &content(answer)))
}

/// Tests elicitation with every enum form (SEP-1330): untitled and titled single choices, the
/// legacy `enumNames`, untitled and titled multiple choices. Written by hand: the legacy form
/// is deprecated, and typed questions never write it.
#[toolsmith::tool]
async fn test_elicitation_sep1330_enums(ctx: &Context) -> Result<String, ToolError> {
    let titled = |prefix: &str, titles: [&str; 3]| -> Vec<serde_json::Value> {
        titles
            .iter()
            .enumerate()
            .map(|(at, title)| json!({"const": format!("{prefix}{}", at + 1), "title": title}))
            .collect()
    };
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {
                "type": "string",
                "oneOf": titled("value", ["First Option", "Second Option", "Third Option"]),
            },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
            },
            "titledMulti": {
                "type": "array",
                "items": {"anyOf": titled("value", ["First Choice", "Second Choice", "Third Choice"])},
            },
        },
    });
    let answer = ctx
        .elicit_with_schema("Choose your options", schema)
        .await?;
    let action = answer.action();
    let content = answer.accepted().map(serde_json::Value::Object);
    Ok(completed(action, &content.unwrap_or_default()))
}

/// An answer's content as JSON (`null` when there is none).
fn content<T: Serialize>(answer: Elicited<T>) -> serde_json::Value {
    answer
        .accepted()
        .and_then(|content| serde_json::to_value(content).ok())
        .unwrap_or_default()
}

fn completed(action: &str, content: &serde_json::Value) -> String {
    format!("Elicitation completed: action={action}, content={content}")
}

/// Every tool the suite calls.
fn registry() -> Result<Registry, ServeError> {
    let mut registry = Registry::new();
    let tools: [Arc<dyn toolsmith::Tool>; 13] = [
        Arc::new(TestSimpleText),
        Arc::new(TestImageContent),
        Arc::new(TestAudioContent),
        Arc::new(TestEmbeddedResource),
        Arc::new(TestMultipleContentTypes),
        Arc::new(TestToolWithLogging),
        Arc::new(TestToolWithProgress),
        Arc::new(TestErrorHandling),
        Arc::new(JsonSchema202012Tool),
        Arc::new(TestSampling),
        Arc::new(TestElicitation),
        Arc::new(TestElicitationSep1034Defaults),
        Arc::new(TestElicitationSep1330Enums),
    ];
    for tool in tools {
        registry.add(tool)?;
    }
    Ok(registry)
}

fn main() -> Result<(), ServeError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let addr = match args.as_slice() {
        [flag, addr] if flag == "--http" => addr.clone(),
        _ => {
            eprintln!("usage: conformance_server --http ADDR");
            std::process::exit(2);
        }
    };
    // Sessions: the suite's clients speak protocols before 2026-07-28, where a server asks its
    // client (sampling, elicitation) through the client's session.
    let server = McpServer::new(registry()?, McpConfig::default().with_sessions(true))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let served = runtime.block_on(async move {
        let shutdown = toolsmith_mcp::shutdown_signal()?;
        let listener = toolsmith_mcp::bind_http(&addr).await?;
        let bound = listener.local_addr().map_err(|error| ServeError::Bind {
            addr: addr.clone(),
            error,
        })?;
        eprintln!("conformance_server: listening on http://{bound}/mcp");
        server.serve_http(listener, shutdown).await
    });
    runtime.shutdown_background();
    served
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn declared(name: &str) -> serde_json::Value {
        let server = McpServer::new(registry().unwrap(), McpConfig::default()).unwrap();
        let tool = server.tools().into_iter().find(|t| t.name == name).unwrap();
        serde_json::to_value(tool).unwrap()
    }

    #[test]
    fn every_tool_is_described() {
        let server = McpServer::new(registry().unwrap(), McpConfig::default()).unwrap();
        for tool in server.tools() {
            assert!(tool.description.as_deref().is_some_and(|d| !d.is_empty()));
        }
    }

    #[test]
    fn the_2020_12_tool_states_its_dialect_and_keeps_its_definitions() {
        let schema = &declared("json_schema_2020_12_tool")["inputSchema"];
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["$defs"]["address"]["type"], "object", "{schema}");
        assert!(
            schema["properties"]["address"]
                .to_string()
                .contains("#/$defs/address")
        );
    }

    #[test]
    fn the_defaults_form_offers_a_default_for_every_primitive_type() {
        use toolsmith::Describe;
        let form = toolsmith::elicitation_schema(&Defaults::type_graph()).unwrap();
        let properties = &form["properties"];
        assert_eq!(
            properties["name"],
            json!({"type": "string", "default": "John Doe"})
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
    }

    #[test]
    fn the_media_constants_are_what_they_say() {
        assert!(bytes(PNG).starts_with(b"\x89PNG"));
        assert!(bytes(WAV).starts_with(b"RIFF"));
    }
}
