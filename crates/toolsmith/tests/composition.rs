//! Registries composed from others: `filter`, `select`, `prefixed`, `renamed`. The new names
//! are what a model sees, sends and reads in errors; declarations follow them.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use toolsmith::{
    Arguments, CancellationToken, Context, Dialect, Offload, Registry, RegistryError, Timeout,
    ToolError, ToolExt, envelope,
};

/// Reads a note.
#[derive(Default)]
struct NotesToolset;

#[toolsmith::toolset(register = false)]
impl NotesToolset {
    /// Reads the note at an index.
    #[tool(read_only)]
    fn read(&self, index: u32) -> String {
        format!("note {index}")
    }

    /// Writes a note.
    #[tool]
    async fn write(&self, text: String) -> Result<String, String> {
        if text.is_empty() {
            return Err("an empty note".into());
        }
        Ok(format!("wrote {text:?}"))
    }
}

/// Says hello.
#[toolsmith::tool]
fn greet(name: String) -> String {
    format!("Hello, {name}!")
}

/// Needs the caller's account.
#[toolsmith::tool]
fn account(ctx: &Context) -> Result<String, ToolError> {
    Ok(ctx.get::<u64>()?.to_string())
}

/// Panics.
#[toolsmith::tool]
fn explode() -> String {
    panic!("composed boom")
}

/// Waits for its call to be cancelled.
#[toolsmith::tool]
async fn forever(ctx: &Context) -> String {
    ctx.cancelled().await;
    String::new()
}

fn registry() -> Registry {
    let mut registry = Registry::new();
    registry.add_toolset(NotesToolset).unwrap();
    registry.add(Arc::new(Greet)).unwrap();
    registry.add(Arc::new(Account)).unwrap();
    registry.add(Arc::new(Explode)).unwrap();
    registry.add(Arc::new(Forever)).unwrap();
    registry
}

fn names(registry: &Registry) -> Vec<&str> {
    registry.names().collect()
}

#[test]
fn filter_keeps_the_tools_it_says_yes_to_in_their_order() {
    let all = registry();
    let notes = all.filter(|entry| entry.toolset() == Some("notes"));
    assert_eq!(names(&notes), ["notes_read", "notes_write"]);
    let none = all.filter(|_| false);
    assert!(none.is_empty());
    // What is left out is not there to call.
    let error = notes
        .call_blocking("greet", Arguments::Text(r#"{"name": "x"}"#), Context::new())
        .unwrap_err();
    assert_eq!(error.code(), "not_found");
    // The original is untouched.
    assert_eq!(all.len(), 6);
}

#[test]
fn select_takes_names_and_star_patterns() {
    let all = registry();
    let selected = all.select(&["notes_*", "greet"]).unwrap();
    assert_eq!(names(&selected), ["notes_read", "notes_write", "greet"]);
    let selected = all.select(&["*e*"]).unwrap();
    assert_eq!(
        names(&selected),
        ["notes_read", "notes_write", "greet", "explode", "forever"]
    );
    // A name matches only itself.
    assert_eq!(names(&all.select(&["notes_read"]).unwrap()), ["notes_read"]);
}

#[test]
fn select_with_a_pattern_that_matches_nothing_is_an_error_naming_the_tools() {
    let all = registry();
    let error = all.select(&["greet", "note_*"]).unwrap_err();
    assert_eq!(
        error,
        RegistryError::NoMatch {
            pattern: "note_*".into(),
            names: "notes_read, notes_write, greet, account, explode, forever".into()
        }
    );
    assert_eq!(
        error.to_string(),
        "no tool matches `note_*`; the tools are: notes_read, notes_write, greet, account, \
         explode, forever"
    );
    assert!(
        all.select(&["greet "]).is_err(),
        "a name is matched exactly"
    );
}

#[test]
fn prefixed_tools_are_called_declared_and_named_in_errors_by_their_new_names() {
    let gh = registry().prefixed("gh").unwrap();
    assert_eq!(
        names(&gh),
        [
            "gh_notes_read",
            "gh_notes_write",
            "gh_greet",
            "gh_account",
            "gh_explode",
            "gh_forever"
        ]
    );
    let output = gh
        .call_blocking(
            "gh_notes_read",
            Arguments::Text(r#"{"index": "3"}"#),
            Context::new(),
        )
        .unwrap();
    assert_eq!(output.as_text(), "note 3");
    assert_eq!(output.repairs[0].code.as_str(), "int_from_string");
    let error = gh
        .call_blocking("notes_read", Arguments::Text("{}"), Context::new())
        .unwrap_err();
    assert_eq!(
        error,
        ToolError::NotFound {
            name: "notes_read".into(),
            did_you_mean: Some("gh_notes_read".into())
        }
    );
    // The toolset it came from is still known.
    assert_eq!(gh.entry("gh_notes_read").unwrap().toolset(), Some("notes"));
}

#[test]
fn a_renamed_tools_every_error_names_the_new_name() {
    let token = CancellationToken::new();
    token.cancel();
    let cases: [(&str, &str, Context, &str); 6] = [
        (
            "notes_read",
            r#"{"index": "x"}"#,
            Context::new(),
            "invalid_arguments",
        ),
        ("notes_write", r#"{"text": ""}"#, Context::new(), "failed"),
        ("explode", "{}", Context::new(), "panicked"),
        ("account", "{}", Context::new(), "missing_data"),
        (
            "greet",
            r#"{"name": "x"}"#,
            Context::new().with_cancellation(token),
            "cancelled",
        ),
        ("forever", "{}", Context::new(), "timed_out"),
    ];
    let base = registry().with_layer(Timeout::new(Duration::from_millis(20)));
    for (name, args, ctx, code) in cases {
        let renamed = base.renamed(name, "renamed_tool").unwrap();
        assert!(renamed.entry(name).is_none());
        let error = renamed
            .call_blocking("renamed_tool", Arguments::Text(args), ctx)
            .unwrap_err();
        assert_eq!(error.code(), code, "{name}: {error:?}");
        assert_eq!(error.tool(), "renamed_tool", "{name}: {error:?}");
        let message = error.to_model_message();
        assert!(message.contains("`renamed_tool`"), "{name}: {message}");
        assert!(!message.contains(&format!("`{name}`")), "{name}: {message}");
    }
}

#[test]
fn a_renamed_tool_called_without_its_registry_names_the_new_name_too() {
    let renamed = registry().renamed("notes_read", "read_note").unwrap();
    let tool = renamed.get("read_note").unwrap();
    assert_eq!(tool.name(), "read_note");
    let error = tool
        .call_blocking(Arguments::Text(r#"{"idx": 1}"#), Context::new())
        .unwrap_err();
    assert!(
        error
            .to_model_message()
            .starts_with("Invalid arguments for tool `read_note`"),
        "{error}"
    );
}

#[test]
fn an_offloaded_renamed_tool_that_cannot_be_run_names_the_new_name() {
    struct Busy;
    impl Offload for Busy {
        fn spawn(&self, _: Box<dyn FnOnce() + Send>) -> Result<(), String> {
            Err("busy".into())
        }
    }
    let renamed = registry()
        .with_offload(Arc::new(Busy))
        .renamed("greet", "hello")
        .unwrap();
    assert_eq!(
        renamed.call_blocking("hello", Arguments::Text(r#"{"name": "x"}"#), Context::new()),
        Err(ToolError::Unavailable {
            tool: "hello".into(),
            reason: "busy".into()
        })
    );
}

#[test]
fn declarations_follow_the_new_names_in_every_dialect() {
    let original = registry();
    // Declared once under the old names first, so that a cache could go stale.
    for entry in &original {
        for dialect in Dialect::ALL {
            let _ = entry.declaration(dialect);
        }
    }
    let renamed = original
        .renamed("greet", "say_hello")
        .unwrap()
        .prefixed("demo")
        .unwrap();
    let entry = renamed.entry("demo_say_hello").unwrap();
    for dialect in Dialect::ALL {
        let declared = entry.declaration(dialect).unwrap();
        let name = match dialect {
            Dialect::OpenAi { .. } => &declared["function"]["name"],
            _ => &declared["name"],
        };
        assert_eq!(name, "demo_say_hello", "{dialect}");
        assert_eq!(*declared, envelope(entry.tool().as_ref(), dialect).unwrap());
    }
    let mcp = renamed
        .entry("demo_notes_read")
        .unwrap()
        .declaration(Dialect::Mcp)
        .unwrap();
    assert_eq!(mcp["annotations"], json!({"readOnlyHint": true}));
    assert_eq!(mcp["inputSchema"]["required"], json!(["index"]));
    // The original keeps its names.
    assert_eq!(
        original
            .entry("greet")
            .unwrap()
            .declaration(Dialect::JsonSchema)
            .unwrap()["name"],
        "greet"
    );
}

#[test]
fn a_declaration_is_written_once_and_lent_afterwards() {
    let registry = registry();
    let entry = registry.entry("notes_write").unwrap();
    let first = entry
        .declaration(Dialect::Anthropic { strict: true })
        .unwrap();
    let second = entry
        .declaration(Dialect::Anthropic { strict: true })
        .unwrap();
    assert!(matches!(first, Cow::Borrowed(_)));
    let (Cow::Borrowed(first), Cow::Borrowed(second)) = (first, second) else {
        panic!("not lent from the cache");
    };
    assert!(std::ptr::eq(first, second));
    assert_eq!(first["strict"], true);
    // A filtered registry shares the written declarations.
    let filtered = registry.filter(|e| e.name() == "notes_write");
    let again = filtered
        .entry("notes_write")
        .unwrap()
        .declaration(Dialect::Anthropic { strict: true })
        .unwrap();
    assert!(std::ptr::eq(again.as_ref(), first));
}

#[test]
fn a_name_that_would_clash_or_is_missing_is_refused() {
    let all = registry();
    let clash = all.renamed("greet", "notes_read").unwrap_err();
    assert!(matches!(clash, RegistryError::DuplicateName { ref name, .. } if name == "notes_read"));
    assert!(
        clash
            .to_string()
            .starts_with("two tools are named `notes_read`"),
        "{clash}"
    );
    let missing = all.renamed("gret", "hello").unwrap_err();
    assert!(matches!(missing, RegistryError::NoMatch { ref pattern, .. } if pattern == "gret"));
}

#[test]
fn composed_registries_keep_their_layers_and_offload() {
    let base = registry().with_layer(Timeout::new(Duration::from_millis(20)));
    let composed = base
        .select(&["forever", "greet"])
        .unwrap()
        .prefixed("x")
        .unwrap();
    assert_eq!(composed.layers().len(), base.layers().len());
    assert_eq!(
        composed
            .call_blocking("x_forever", Arguments::Text("{}"), Context::new())
            .unwrap_err()
            .code(),
        "timed_out"
    );
}

#[test]
fn the_stated_limits_and_hints_of_a_renamed_tool_are_its_own() {
    fn tight() -> toolsmith::Limits {
        toolsmith::Limits {
            max_string_bytes: 4,
            ..toolsmith::Limits::default()
        }
    }
    /// Echoes a short word.
    #[toolsmith::tool(limits = tight, idempotent)]
    fn short(word: String) -> String {
        word
    }
    let mut registry = Registry::new();
    registry.add(Arc::new(Short)).unwrap();
    let renamed = registry.renamed("short", "tiny").unwrap();
    let tool = renamed.get("tiny").unwrap();
    assert_eq!(tool.limits(), Some(tight()));
    assert_eq!(tool.annotations().idempotent, Some(true));
    let error = renamed
        .call_blocking(
            "tiny",
            Arguments::Text(r#"{"word": "toolong"}"#),
            Context::new(),
        )
        .unwrap_err();
    assert_eq!(error.code(), "invalid_arguments");
    assert!(error.to_model_message().contains("`tiny`"), "{error}");
}
