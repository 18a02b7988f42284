//! The MCP client against servers nobody here wrote, each with the schemas its own SDK writes:
//! the reference servers `@modelcontextprotocol/server-filesystem` (on a fresh folder) and
//! `@modelcontextprotocol/server-memory` (on a fresh file), written with the TypeScript SDK and
//! zod, and a server written with the MCP Python SDK's high-level API and pydantic
//! (`fastmcp_server.py`). For each: every tool imported and declared in every dialect, calls
//! with clean arguments and with arguments as models send them (repaired here, each repair
//! recorded), arguments no repair can save refused here naming every bad field at once, and the
//! server's own refusal coming back in its words. What a call does is checked where it lands:
//! on disk, or by asking the server again.
//!
//! A test whose server the set-up did not install says so and passes (fails, under
//! `TOOLSMITH_REQUIRE_PEERS`), as `toolsmith_testkit` does for every peer.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use std::sync::Arc;

use toolsmith::{
    Arguments, AskError, AskFuture, Asker, Context, Dialect, Elicitation, Elicited, Sampled,
    Sampling, Tool, ToolError, ToolOutput, ToolResult,
};
use toolsmith_mcp::{McpClient, RemoteTool, StdioServer};

/// How long any one step (starting a server, listing, one call) may take.
const STEP: Duration = Duration::from_secs(60);

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Connects to `server` and lists its tools, each step bounded in time.
async fn connect(server: &StdioServer) -> (McpClient, Vec<RemoteTool>) {
    let client = tokio::time::timeout(STEP, McpClient::connect(server))
        .await
        .expect("the server completes its handshake in time")
        .unwrap_or_else(|error| panic!("{error}"));
    let tools = tokio::time::timeout(STEP, client.tools())
        .await
        .expect("the server lists its tools in time")
        .unwrap_or_else(|error| panic!("{error}"));
    (client, tools)
}

fn find<'a>(tools: &'a [RemoteTool], name: &str) -> &'a RemoteTool {
    tools
        .iter()
        .find(|tool| tool.name() == name)
        .unwrap_or_else(|| panic!("no tool {name} listed among {tools:?}"))
}

/// Calls `tool` with `arguments` as a model's JSON, within [`STEP`].
async fn call(tool: &RemoteTool, arguments: Value) -> ToolResult {
    call_in(tool, arguments, Context::new()).await
}

/// Calls `tool` with `arguments` in `context`, within [`STEP`].
async fn call_in(tool: &RemoteTool, arguments: Value, context: Context) -> ToolResult {
    tokio::time::timeout(STEP, tool.call(Arguments::Json(&arguments), context))
        .await
        .unwrap_or_else(|_| panic!("{} answered within {STEP:?}", tool.name()))
}

/// Calls `tool` and expects an answer, with the server's text on failure.
async fn answer(tool: &RemoteTool, arguments: Value) -> ToolOutput {
    call(tool, arguments)
        .await
        .unwrap_or_else(|error| panic!("{} failed: {}", tool.name(), error.to_model_message()))
}

/// The repairs an output records, as (JSON Pointer, code) pairs, sorted.
fn repairs(output: &ToolOutput) -> Vec<(String, &'static str)> {
    let mut repairs: Vec<_> = output
        .repairs
        .iter()
        .map(|repair| (repair.path.clone(), repair.code.as_str()))
        .collect();
    repairs.sort();
    repairs
}

/// The (JSON Pointer, code) pairs sorted, for comparing with [`repairs`] or [`refusals`].
fn pairs(expected: &[(&str, &'static str)]) -> Vec<(String, &'static str)> {
    let mut pairs: Vec<_> = expected
        .iter()
        .map(|(path, code)| ((*path).to_owned(), *code))
        .collect();
    pairs.sort();
    pairs
}

/// What a call refused here found wrong, as (JSON Pointer, code) pairs, sorted; the model's
/// message must name each field, as `a.b[0].c`.
fn refusals(error: &ToolError, fields: &[&str]) -> Vec<(String, &'static str)> {
    let message = error.to_model_message();
    assert_eq!(error.code(), "invalid_arguments", "{message}");
    for field in fields {
        assert!(
            message.contains(&format!("`{field}`")),
            "{field}: {message}"
        );
    }
    let ToolError::InvalidArguments { errors, .. } = error else {
        unreachable!("invalid_arguments is InvalidArguments");
    };
    let mut found: Vec<_> = errors
        .iter()
        .map(|error| (error.path.clone(), error.code.as_str()))
        .collect();
    found.sort();
    found
}

/// The server's refusal, in its words: a tool failure, never a transport's.
fn failure(error: &ToolError) -> &str {
    match error {
        ToolError::Failed { message, .. } => message,
        other => panic!("a tool failure, not {other:?}"),
    }
}

/// Every tool as each dialect's receiver would take it: nothing its limits refuse, and a
/// declaration written in each.
fn assert_declared_in_every_dialect(tools: &[RemoteTool]) {
    for dialect in Dialect::ALL {
        let findings = toolsmith::lint_tools(tools.iter().map(|tool| tool as &dyn Tool), dialect);
        assert!(findings.is_empty(), "{dialect}: {findings:?}");
        for tool in tools {
            toolsmith::envelope(tool, dialect)
                .unwrap_or_else(|e| panic!("{} in {dialect}: {e}", tool.name()));
        }
    }
}

/// A fresh folder for one test, removed when the test ends, passed, failed or skipped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(what: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("toolsmith-reference-{what}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // Without symbolic links: the filesystem server compares real paths.
        Scratch(dir.canonicalize().unwrap())
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn text(path: &Path) -> &str {
    path.to_str().unwrap()
}

// ---- server-filesystem ---------------------------------------------------------------------

/// `server-filesystem` allowed into `root` and nowhere else, when the set-up installed it.
fn filesystem_server(root: &Path) -> Option<StdioServer> {
    let (node, script) = toolsmith_testkit::require_node_script(
        "@modelcontextprotocol/server-filesystem",
        "dist/index.js",
    )?;
    Some(StdioServer::new(
        "filesystem",
        text(&node),
        [text(&script), text(root)],
    ))
}

#[test]
fn every_filesystem_tool_is_imported_exactly_and_declared_in_every_dialect() {
    let scratch = Scratch::new("fs-declared");
    let root = scratch.path();
    let Some(server) = filesystem_server(root) else {
        return;
    };
    runtime().block_on(async {
        let (_client, tools) = connect(&server).await;
        for name in [
            "read_text_file",
            "read_file",
            "write_file",
            "edit_file",
            "list_directory",
            "list_directory_with_sizes",
            "directory_tree",
        ] {
            find(&tools, name);
        }
        for tool in &tools {
            assert!(
                tool.import_warnings().is_empty(),
                "{}: {:?}",
                tool.name(),
                tool.import_warnings()
            );
        }
        assert_eq!(
            find(&tools, "read_text_file").title(),
            Some("Read Text File")
        );
        let hints = find(&tools, "write_file").annotations();
        assert_eq!(hints.read_only, Some(false));
        assert_eq!(hints.destructive, Some(true));
        // The output schema the server declares is declared again.
        let declared = toolsmith::envelope(find(&tools, "read_text_file"), Dialect::Mcp).unwrap();
        assert_eq!(
            declared["outputSchema"]["properties"]["content"]["type"], "string",
            "{declared}"
        );
        assert_declared_in_every_dialect(&tools);
    });
}

#[test]
fn filesystem_writes_reads_and_lists_the_folder_it_was_given() {
    let scratch = Scratch::new("fs-clean");
    let root = scratch.path();
    let Some(server) = filesystem_server(root) else {
        return;
    };
    runtime().block_on(async {
        let (_client, tools) = connect(&server).await;
        let notes = root.join("notes.txt");
        answer(
            find(&tools, "write_file"),
            json!({"path": text(&notes), "content": "first line\nsecond line\n"}),
        )
        .await;
        assert_eq!(
            std::fs::read_to_string(&notes).unwrap(),
            "first line\nsecond line\n"
        );

        // Written here, read there.
        std::fs::write(root.join("from-rust.md"), "# written by the test\n").unwrap();
        let read = answer(
            find(&tools, "read_text_file"),
            json!({"path": text(&root.join("from-rust.md"))}),
        )
        .await;
        assert_eq!(read.as_text(), "# written by the test\n");
        assert_eq!(
            read.structured,
            Some(json!({"content": "# written by the test\n"}))
        );
        assert!(read.repairs.is_empty(), "{:?}", read.repairs);
        let read = answer(find(&tools, "read_file"), json!({"path": text(&notes)})).await;
        assert_eq!(read.as_text(), "first line\nsecond line\n");

        std::fs::create_dir(root.join("sub")).unwrap();
        let listing = answer(find(&tools, "list_directory"), json!({"path": text(root)})).await;
        let listing = listing.as_text();
        let mut lines: Vec<&str> = listing.lines().collect();
        lines.sort_unstable();
        assert_eq!(
            lines,
            ["[DIR] sub", "[FILE] from-rust.md", "[FILE] notes.txt"]
        );
    });
}

#[test]
fn filesystem_arguments_as_models_send_them_are_repaired_and_recorded() {
    let scratch = Scratch::new("fs-messy");
    let root = scratch.path();
    let Some(server) = filesystem_server(root) else {
        return;
    };
    runtime().block_on(async {
        let (_client, tools) = connect(&server).await;
        let lines = root.join("lines.txt");
        std::fs::write(&lines, "one\ntwo\nthree\n").unwrap();
        std::fs::write(root.join("big.log"), "x".repeat(5000)).unwrap();
        std::fs::write(root.join("small.txt"), "x").unwrap();

        // A number as text: the server takes the number.
        let read = answer(
            find(&tools, "read_text_file"),
            json!({"path": text(&lines), "head": "2"}),
        )
        .await;
        assert_eq!(read.as_text(), "one\ntwo");
        assert_eq!(repairs(&read), pairs(&[("/head", "number_from_string")]));

        // An enum in the wrong case: sorted by size as asked, not by name.
        let listing = answer(
            find(&tools, "list_directory_with_sizes"),
            json!({"path": text(root), "sortBy": "SIZE"}),
        )
        .await;
        let listed = listing.as_text();
        let big = listed.find("big.log").expect("big.log listed");
        let small = listed.find("small.txt").expect("small.txt listed");
        assert!(big < small, "sorted by size, largest first: {listed}");
        assert_eq!(repairs(&listing), pairs(&[("/sortBy", "enum_case")]));

        // An array sent as JSON text: the pattern it holds is applied.
        let tree = answer(
            find(&tools, "directory_tree"),
            json!({"path": text(root), "excludePatterns": "[\"*.log\"]"}),
        )
        .await;
        assert_eq!(
            repairs(&tree),
            pairs(&[("/excludePatterns", "parsed_json_string")])
        );
        let tree = tree.as_text();
        assert!(
            tree.contains("small.txt") && !tree.contains("big.log"),
            "{tree}"
        );

        // "true" for a boolean, the edits as JSON text and one edit an object inside a string:
        // a dry run changes nothing on disk.
        let edit = json!({"oldText": "two", "newText": "TWO"}).to_string();
        let dry = answer(
            find(&tools, "edit_file"),
            json!({"path": text(&lines), "edits": format!("[{edit}]"), "dryRun": "true"}),
        )
        .await;
        assert!(dry.as_text().contains("+TWO"), "{}", dry.as_text());
        assert_eq!(
            repairs(&dry),
            pairs(&[
                ("/dryRun", "bool_from_string"),
                ("/edits", "parsed_json_string")
            ])
        );
        assert_eq!(
            std::fs::read_to_string(&lines).unwrap(),
            "one\ntwo\nthree\n"
        );
        let done = answer(
            find(&tools, "edit_file"),
            json!({"path": text(&lines), "edits": [edit], "dryRun": "false"}),
        )
        .await;
        assert_eq!(
            repairs(&done),
            pairs(&[
                ("/dryRun", "bool_from_string"),
                ("/edits/0", "parsed_json_string")
            ])
        );
        assert_eq!(
            std::fs::read_to_string(&lines).unwrap(),
            "one\nTWO\nthree\n"
        );

        // A number for a string is written as sent.
        let written = answer(
            find(&tools, "write_file"),
            json!({"path": text(&root.join("price.txt")), "content": 12.5}),
        )
        .await;
        assert_eq!(
            repairs(&written),
            pairs(&[("/content", "string_from_number")])
        );
        assert_eq!(
            std::fs::read_to_string(root.join("price.txt")).unwrap(),
            "12.5"
        );
    });
}

#[test]
fn filesystem_arguments_no_repair_can_save_are_refused_here_all_at_once() {
    let scratch = Scratch::new("fs-refused");
    let root = scratch.path();
    let Some(server) = filesystem_server(root) else {
        return;
    };
    runtime().block_on(async {
        let (_client, tools) = connect(&server).await;
        let target = root.join("never.txt");
        let error = call(
            find(&tools, "write_file"),
            json!({"path": [text(&target), "other.txt"], "content": {"text": "hi"}}),
        )
        .await
        .unwrap_err();
        assert_eq!(
            refusals(&error, &["path", "content"]),
            pairs(&[("/content", "string_type"), ("/path", "string_type")])
        );
        assert!(!target.exists(), "nothing reached the server");

        let error = call(
            find(&tools, "read_text_file"),
            json!({"head": "the first few", "tail": {"lines": 2}}),
        )
        .await
        .unwrap_err();
        assert_eq!(
            refusals(&error, &["path", "head", "tail"]),
            pairs(&[
                ("/head", "float_parsing"),
                ("/path", "missing"),
                ("/tail", "float_type")
            ])
        );

        let error = call(
            find(&tools, "list_directory_with_sizes"),
            json!({"path": text(root), "sortBy": "date"}),
        )
        .await
        .unwrap_err();
        let message = error.to_model_message();
        assert_eq!(refusals(&error, &["sortBy"]), pairs(&[("/sortBy", "enum")]));
        assert!(
            message.contains("name") && message.contains("size"),
            "the allowed values: {message}"
        );
    });
}

#[test]
fn filesystem_refuses_a_path_outside_its_folder_in_its_own_words() {
    let scratch = Scratch::new("fs-allowed");
    let root = scratch.path();
    let outside_scratch = Scratch::new("fs-outside");
    let outside = outside_scratch.path();
    let Some(server) = filesystem_server(root) else {
        return;
    };
    runtime().block_on(async {
        let (_client, tools) = connect(&server).await;
        let secret = outside.join("secret.txt");
        std::fs::write(&secret, "not for the server").unwrap();
        let error = call(
            find(&tools, "read_text_file"),
            json!({"path": text(&secret)}),
        )
        .await
        .unwrap_err();
        assert_eq!(error.code(), "failed", "{error:?}");
        let message = failure(&error);
        assert!(
            message.contains("Access denied") && message.contains(text(&secret)),
            "{message}"
        );
        assert!(!message.contains("not for the server"), "{message}");

        // Writing there is refused too, and nothing is written.
        let planted = outside.join("planted.txt");
        let error = call(
            find(&tools, "write_file"),
            json!({"path": text(&planted), "content": "x"}),
        )
        .await
        .unwrap_err();
        assert!(failure(&error).contains("Access denied"), "{error:?}");
        assert!(!planted.exists());

        // The connection serves on after the refusals.
        let listing = answer(find(&tools, "list_allowed_directories"), json!({})).await;
        assert!(
            listing.as_text().contains(text(root)),
            "{}",
            listing.as_text()
        );
    });
}

// ---- server-memory -------------------------------------------------------------------------

/// `server-memory` keeping its graph in `file`, when the set-up installed it.
fn memory_server(file: &Path) -> Option<StdioServer> {
    let (node, script) = toolsmith_testkit::require_node_script(
        "@modelcontextprotocol/server-memory",
        "dist/index.js",
    )?;
    Some(
        StdioServer::new("memory", text(&node), [text(&script)])
            .with_env("MEMORY_FILE_PATH", text(file)),
    )
}

/// The graph's entity names and relations, sorted, from a `read_graph` or `search_nodes`
/// answer's structured content.
fn graph(output: &ToolOutput) -> (Vec<String>, Vec<(String, String, String)>) {
    let graph = output.structured.as_ref().expect("a structured graph");
    let mut entities: Vec<String> = graph["entities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entity| entity["name"].as_str().unwrap().to_owned())
        .collect();
    entities.sort();
    let mut relations: Vec<(String, String, String)> = graph["relations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let field = |key: &str| r[key].as_str().unwrap().to_owned();
            (field("from"), field("relationType"), field("to"))
        })
        .collect();
    relations.sort();
    (entities, relations)
}

#[test]
fn every_memory_tool_is_imported_exactly_and_declared_in_every_dialect() {
    let scratch = Scratch::new("memory-declared");
    let dir = scratch.path();
    let Some(server) = memory_server(&dir.join("graph.jsonl")) else {
        return;
    };
    runtime().block_on(async {
        let (_client, tools) = connect(&server).await;
        assert_eq!(tools.len(), 9, "{tools:?}");
        for tool in &tools {
            assert!(
                tool.import_warnings().is_empty(),
                "{}: {:?}",
                tool.name(),
                tool.import_warnings()
            );
            assert!(
                tool.output().is_some(),
                "{} declares its output",
                tool.name()
            );
        }
        assert_declared_in_every_dialect(&tools);
    });
}

#[test]
fn memory_keeps_entities_and_relations_and_finds_them() {
    let scratch = Scratch::new("memory-clean");
    let dir = scratch.path();
    let file = dir.join("graph.jsonl");
    let Some(server) = memory_server(&file) else {
        return;
    };
    runtime().block_on(async {
        let (_client, tools) = connect(&server).await;
        let created = answer(
            find(&tools, "create_entities"),
            json!({"entities": [
                {"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]},
                {"name": "Analytical Engine", "entityType": "machine", "observations": []},
            ]}),
        )
        .await;
        assert_eq!(created.structured.as_ref().unwrap()["entities"][0]["name"], "Ada");
        answer(
            find(&tools, "create_relations"),
            json!({"relations": [{"from": "Ada", "to": "Analytical Engine", "relationType": "programmed"}]}),
        )
        .await;

        let read = answer(find(&tools, "read_graph"), json!({})).await;
        assert_eq!(
            graph(&read),
            (
                vec!["Ada".to_owned(), "Analytical Engine".to_owned()],
                vec![(
                    "Ada".to_owned(),
                    "programmed".to_owned(),
                    "Analytical Engine".to_owned()
                )]
            )
        );
        let found = answer(find(&tools, "search_nodes"), json!({"query": "first program"})).await;
        let (entities, relations) = graph(&found);
        assert_eq!(entities, ["Ada"]);
        assert_eq!(relations.len(), 1, "a relation touching a match is kept");

        // Kept in the file it was given, nowhere else.
        let kept = std::fs::read_to_string(&file).unwrap();
        let kept: Vec<Value> = kept
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(kept.len(), 3, "{kept:?}");
        assert_eq!(
            kept[0],
            json!({"type": "entity", "name": "Ada", "entityType": "person", "observations": ["wrote the first program"]})
        );
    });
}

#[test]
fn memory_arguments_as_models_send_them_are_repaired_and_recorded() {
    let scratch = Scratch::new("memory-messy");
    let dir = scratch.path();
    let Some(server) = memory_server(&dir.join("graph.jsonl")) else {
        return;
    };
    runtime().block_on(async {
        let (_client, tools) = connect(&server).await;
        // The whole list as JSON text, and inside it a key in snake_case and a number for a
        // string.
        let entities = json!([
            {"name": "Grace", "entity_type": "person", "observations": ["found a moth"]},
            {"name": 1947, "entityType": "year", "observations": []},
        ]);
        let created = answer(
            find(&tools, "create_entities"),
            json!({"entities": entities.to_string()}),
        )
        .await;
        assert_eq!(
            repairs(&created),
            pairs(&[
                ("/entities", "parsed_json_string"),
                ("/entities/0/entity_type", "key_renamed"),
                ("/entities/1/name", "string_from_number")
            ])
        );
        // One entity where a list belongs.
        let created = answer(
            find(&tools, "create_entities"),
            json!({"entities": {"name": "Moth", "entityType": "insect", "observations": []}}),
        )
        .await;
        assert_eq!(repairs(&created), pairs(&[("/entities", "wrap_in_array")]));
        // A relation as JSON text inside the list, an observation list as JSON text, and a
        // lone string where a list belongs.
        let related = answer(
            find(&tools, "create_relations"),
            json!({"relations": [json!({"from": "Grace", "to": 1947, "relationType": "debugged in"}).to_string()]}),
        )
        .await;
        assert_eq!(
            repairs(&related),
            pairs(&[
                ("/relations/0", "parsed_json_string"),
                ("/relations/0/to", "string_from_number")
            ])
        );
        let observed = answer(
            find(&tools, "add_observations"),
            json!({"observations": [
                {"entityName": "Grace", "contents": "[\"coined 'debugging'\", \"admiral\"]"},
                {"entityName": "1947", "contents": "the year of the moth"},
            ]}),
        )
        .await;
        assert_eq!(
            repairs(&observed),
            pairs(&[
                ("/observations/0/contents", "parsed_json_string"),
                ("/observations/1/contents", "wrap_in_array")
            ])
        );

        let read = answer(find(&tools, "read_graph"), json!({})).await;
        assert_eq!(
            graph(&read),
            (
                vec!["1947".to_owned(), "Grace".to_owned(), "Moth".to_owned()],
                vec![(
                    "Grace".to_owned(),
                    "debugged in".to_owned(),
                    "1947".to_owned()
                )]
            )
        );
        let structured = read.structured.unwrap();
        let grace = structured["entities"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == "Grace")
            .unwrap();
        assert_eq!(
            grace["observations"],
            json!(["found a moth", "coined 'debugging'", "admiral"])
        );
        let year = structured["entities"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == "1947")
            .unwrap();
        assert_eq!(year["observations"], json!(["the year of the moth"]));
    });
}

#[test]
fn memory_arguments_no_repair_can_save_are_refused_here_all_at_once() {
    let scratch = Scratch::new("memory-refused");
    let dir = scratch.path();
    let file = dir.join("graph.jsonl");
    let Some(server) = memory_server(&file) else {
        return;
    };
    runtime().block_on(async {
        let (_client, tools) = connect(&server).await;
        let error = call(
            find(&tools, "create_entities"),
            json!({"entities": [
                {"name": "Ok", "entityType": "fine", "observations": []},
                {"name": {"first": "Alan"}, "observations": [{"said": "hello"}]},
            ]}),
        )
        .await
        .unwrap_err();
        let found = refusals(
            &error,
            &[
                "entities[1].name",
                "entities[1].entityType",
                "entities[1].observations[0]",
            ],
        );
        assert_eq!(
            found,
            pairs(&[
                ("/entities/1/entityType", "missing"),
                ("/entities/1/name", "string_type"),
                ("/entities/1/observations/0", "string_type"),
            ])
        );
        // Refused as a whole: not even the good entity reached the server.
        let read = answer(find(&tools, "read_graph"), json!({})).await;
        assert_eq!(graph(&read), (vec![], vec![]));
        assert!(!file.exists(), "the server never wrote its file");
    });
}

#[test]
fn memory_refuses_observations_on_an_unknown_entity_in_its_own_words() {
    let scratch = Scratch::new("memory-unknown");
    let dir = scratch.path();
    let Some(server) = memory_server(&dir.join("graph.jsonl")) else {
        return;
    };
    runtime().block_on(async {
        let (_client, tools) = connect(&server).await;
        let error = call(
            find(&tools, "add_observations"),
            json!({"observations": [{"entityName": "Nobody", "contents": ["exists"]}]}),
        )
        .await
        .unwrap_err();
        assert_eq!(error.code(), "failed", "{error:?}");
        let message = failure(&error);
        assert!(
            message.contains("Entity with name Nobody not found"),
            "{message}"
        );
    });
}

// ---- the MCP Python SDK (FastMCP, now MCPServer) -------------------------------------------

/// `fastmcp_server.py` on the peer environment's Python, when the set-up installed it.
fn python_server() -> Option<StdioServer> {
    let python = toolsmith_testkit::require("python")?;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fastmcp_server.py");
    Some(StdioServer::new("shop", text(&python), [script]))
}

/// An order with every field, as a careful caller writes it.
fn clean_order() -> Value {
    json!({
        "customer": {
            "name": "Ada",
            "address": {"street": "1 Loom Lane", "city": "London", "postcode": "EC1"},
            "vip": true,
        },
        "lines": [
            {"sku": "gear", "quantity": 3, "unit_price": 2.5},
            {"sku": "card", "quantity": 10, "unit_price": 0.1},
        ],
        "priority": "urgent",
        "gift": true,
        "note": "handle with care",
    })
}

#[test]
fn every_python_sdk_tool_is_imported_exactly_and_declared_in_every_dialect() {
    let Some(server) = python_server() else {
        return;
    };
    runtime().block_on(async {
        let (_client, tools) = connect(&server).await;
        let mut names: Vec<&str> = tools.iter().map(|tool| tool.name()).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            [
                "place_order",
                "rsvp",
                "survey",
                "tagline",
                "top_tags",
                "withdraw"
            ]
        );
        for tool in &tools {
            assert!(
                tool.import_warnings().is_empty(),
                "{}: {:?}",
                tool.name(),
                tool.import_warnings()
            );
            assert!(
                tool.output().is_some(),
                "{} declares its output",
                tool.name()
            );
        }
        // The typed output is declared again as the SDK wrote it: the enum through its `$ref`,
        // the optional field nullable.
        let declared = toolsmith::envelope(find(&tools, "place_order"), Dialect::Mcp).unwrap();
        let output = &declared["outputSchema"];
        assert_eq!(output["type"], "object", "{declared}");
        let required: Vec<&str> = output["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|name| name.as_str().unwrap())
            .collect();
        assert!(
            required.contains(&"priority") && required.contains(&"note"),
            "{output}"
        );
        let input = &declared["inputSchema"];
        assert_eq!(input["required"], json!(["customer", "lines"]), "{input}");
        let declared = toolsmith::envelope(find(&tools, "top_tags"), Dialect::Mcp).unwrap();
        assert_eq!(
            declared["outputSchema"]["properties"]["result"]["type"], "array",
            "{declared}"
        );
        assert_declared_in_every_dialect(&tools);
    });
}

#[test]
fn a_python_sdk_tool_takes_clean_typed_arguments_and_answers_typed_output() {
    let Some(server) = python_server() else {
        return;
    };
    runtime().block_on(async {
        let (_client, tools) = connect(&server).await;
        let order = answer(find(&tools, "place_order"), clean_order()).await;
        assert!(order.repairs.is_empty(), "{:?}", order.repairs);
        assert_eq!(
            order.structured,
            Some(json!({
                "customer": "Ada", "city": "London", "postcode": "EC1", "vip": true,
                "priority": "urgent", "lines": 2, "units": 13, "total": 8.5, "gift": true,
                "note": "handle with care",
            }))
        );

        // The optional fields left out take the server's defaults.
        let order = answer(
            find(&tools, "place_order"),
            json!({
                "customer": {"name": "Bo", "address": {"street": "2 Side St", "city": "Oslo"}},
                "lines": [],
            }),
        )
        .await;
        let order = order.structured.unwrap();
        assert_eq!(order["priority"], "normal");
        assert_eq!(order["postcode"], Value::Null);
        assert_eq!(order["note"], Value::Null);
        assert_eq!(
            (order["vip"].clone(), order["gift"].clone()),
            (json!(false), json!(false))
        );

        let tags = answer(
            find(&tools, "top_tags"),
            json!({"tags": ["b", "a", "b", "c", "b", "a"], "limit": 2}),
        )
        .await;
        assert_eq!(tags.structured, Some(json!({"result": ["b", "a"]})));
    });
}

#[test]
fn python_sdk_arguments_as_models_send_them_are_repaired_and_recorded() {
    let Some(server) = python_server() else {
        return;
    };
    runtime().block_on(async {
        let (_client, tools) = connect(&server).await;
        // The customer object as JSON text with a number for its postcode, the lines as JSON
        // text with numbers as text and a key in camelCase, the enum shouted, booleans as
        // words.
        let customer = json!({
            "name": "Ada",
            "address": {"street": "1 Loom Lane", "city": "London", "postcode": 10115},
            "vip": "yes",
        });
        let lines = json!([
            {"sku": "gear", "quantity": "3", "unit_price": "2.5"},
            {"sku": "card", "quantity": 10.0, "unitPrice": 0.1},
        ]);
        let order = answer(
            find(&tools, "place_order"),
            json!({
                "customer": customer.to_string(),
                "lines": lines.to_string(),
                "priority": "URGENT",
                "gift": "true",
            }),
        )
        .await;
        assert_eq!(
            repairs(&order),
            pairs(&[
                ("/customer", "parsed_json_string"),
                ("/customer/address/postcode", "string_from_number"),
                ("/customer/vip", "bool_from_string"),
                ("/gift", "bool_from_string"),
                ("/lines", "parsed_json_string"),
                ("/lines/0/quantity", "int_from_string"),
                ("/lines/0/unit_price", "number_from_string"),
                ("/lines/1/quantity", "int_from_float"),
                ("/lines/1/unitPrice", "key_renamed"),
                ("/priority", "enum_case"),
            ])
        );
        assert_eq!(
            order.structured,
            Some(json!({
                "customer": "Ada", "city": "London", "postcode": "10115", "vip": true,
                "priority": "urgent", "lines": 2, "units": 13, "total": 8.5, "gift": true,
                "note": null,
            }))
        );

        // A list as JSON text, an integer as text, and a boolean as "true".
        let tags = answer(
            find(&tools, "top_tags"),
            json!({"tags": "[\"x\", \"y\", \"y\", \"z\", \"z\", \"z\"]", "limit": "2", "ascending": "true"}),
        )
        .await;
        assert_eq!(tags.structured, Some(json!({"result": ["y", "z"]})));
        assert_eq!(
            repairs(&tags),
            pairs(&[
                ("/ascending", "bool_from_string"),
                ("/limit", "int_from_string"),
                ("/tags", "parsed_json_string"),
            ])
        );
    });
}

#[test]
fn python_sdk_arguments_no_repair_can_save_are_refused_here_all_at_once() {
    let Some(server) = python_server() else {
        return;
    };
    runtime().block_on(async {
        let (_client, tools) = connect(&server).await;
        let error = call(
            find(&tools, "place_order"),
            json!({
                "customer": {"name": "Ada", "address": {"street": "1 Loom Lane"}},
                "lines": [
                    {"sku": "gear", "quantity": "three", "unit_price": 2.5},
                    {"sku": "card", "quantity": 500, "unit_price": "cheap"},
                ],
                "priority": "whenever",
            }),
        )
        .await
        .unwrap_err();
        let found = refusals(
            &error,
            &[
                "customer.address.city",
                "lines[0].quantity",
                "lines[1].quantity",
                "lines[1].unit_price",
                "priority",
            ],
        );
        assert_eq!(
            found,
            pairs(&[
                ("/customer/address/city", "missing"),
                ("/lines/0/quantity", "int_parsing"),
                ("/lines/1/quantity", "less_than_equal"),
                ("/lines/1/unit_price", "float_parsing"),
                ("/priority", "enum"),
            ])
        );
        let message = error.to_model_message();
        assert!(
            message.contains("low") && message.contains("normal") && message.contains("urgent"),
            "the allowed priorities: {message}"
        );
        assert!(message.contains("100"), "the maximum quantity: {message}");
    });
}

#[test]
fn a_python_sdk_tool_that_raises_fails_in_its_own_words() {
    let Some(server) = python_server() else {
        return;
    };
    runtime().block_on(async {
        let (_client, tools) = connect(&server).await;
        let error = call(
            find(&tools, "withdraw"),
            json!({"account": "acc-7", "amount": "25"}),
        )
        .await
        .unwrap_err();
        assert_eq!(error.code(), "failed", "{error:?}");
        let message = failure(&error);
        assert!(
            message.contains("insufficient funds in acc-7: 25.00 asked, 10.00 available"),
            "{message}"
        );
        // The connection serves on after the failure.
        let tags = answer(find(&tools, "top_tags"), json!({"tags": ["a"]})).await;
        assert_eq!(tags.structured, Some(json!({"result": ["a"]})));
    });
}

/// A person and a model at the caller's side, answering what the Python server's tools ask.
struct Answering(Elicited);

impl Asker for Answering {
    fn elicit<'a>(&'a self, _: &'a Context, request: &'a Elicitation) -> AskFuture<'a, Elicited> {
        // The form is the SDK's own schema of its pydantic model.
        let asked = &request.schema["properties"];
        let answer = match (&self.0, asked["name"]["type"].as_str()) {
            (answer, Some("string")) => Ok(answer.clone()),
            _ => Err(AskError::Failed(format!(
                "an unexpected form: {}",
                request.schema
            ))),
        };
        Box::pin(std::future::ready(answer))
    }

    fn sample<'a>(&'a self, _: &'a Context, request: &'a Sampling) -> AskFuture<'a, Sampled> {
        let text = format!(
            "[{}] {}",
            request.system.as_deref().unwrap_or(""),
            request.messages.last().map_or("", |m| m.text.as_str())
        );
        Box::pin(std::future::ready(Ok(
            Sampled::new(text).with_model("echo-1")
        )))
    }
}

/// What a Python SDK tool asks while it runs (`ctx.elicit`, `session.create_message`) reaches
/// the asker of the call's context here, and the answer is what the tool reads; with nobody
/// to ask, the server is told so, and the call fails saying it.
#[test]
fn a_python_sdk_tools_questions_reach_whoever_the_call_asks() {
    let Some(server) = python_server() else {
        return;
    };
    runtime().block_on(async {
        let (_client, tools) = connect(&server).await;
        let asking = |answer: Elicited| Context::new().with_asker(Arc::new(Answering(answer)));
        let person = json!({"name": "Ada", "guests": "3"});
        let accepted = call_in(
            find(&tools, "rsvp"),
            json!({"event": "the launch"}),
            asking(Elicited::Accept(person.as_object().unwrap().clone())),
        )
        .await
        .unwrap();
        assert_eq!(
            accepted.as_text(),
            "Ada comes to the launch with 3 guests",
            "{accepted:?}"
        );
        let declined = call_in(
            find(&tools, "rsvp"),
            json!({"event": "the launch"}),
            asking(Elicited::Decline),
        )
        .await
        .unwrap();
        assert_eq!(declined.as_text(), "no answer for the launch (decline)");

        let tagline = call_in(
            find(&tools, "tagline"),
            json!({"product": "gears"}),
            asking(Elicited::Cancel),
        )
        .await
        .unwrap();
        assert_eq!(
            tagline.as_text(),
            "[One line.] A tagline for gears (by echo-1)"
        );

        let error = call_in(
            find(&tools, "rsvp"),
            json!({"event": "the launch"}),
            Context::new(),
        )
        .await
        .unwrap_err();
        // The SDK lets the refusal out of the tool as the call's own protocol error.
        let message = error.to_string();
        assert!(message.contains("nobody can answer here"), "{message}");
    });
}

/// A server may ask while one call runs, but not without end: past 16 questions a call's
/// questions are refused (an agent's model answering each would be billed for every one), and
/// the server hears why.
#[test]
fn a_call_passes_on_at_most_sixteen_of_a_servers_questions() {
    let Some(server) = python_server() else {
        return;
    };
    runtime().block_on(async {
        let (_client, tools) = connect(&server).await;
        let person = json!({"name": "Ada"}).as_object().unwrap().clone();
        let asking =
            || Context::new().with_asker(Arc::new(Answering(Elicited::Accept(person.clone()))));
        let few = call_in(find(&tools, "survey"), json!({"questions": 16}), asking())
            .await
            .unwrap();
        assert_eq!(few.as_text(), "16 answered");
        let many = call_in(find(&tools, "survey"), json!({"questions": 40}), asking())
            .await
            .unwrap();
        let text = many.as_text();
        assert!(
            text.starts_with("16 answered, then refused: ")
                && text.contains("16 questions already"),
            "{text}"
        );
        // Each call has its own sixteen.
        let again = call_in(find(&tools, "survey"), json!({"questions": 3}), asking())
            .await
            .unwrap();
        assert_eq!(again.as_text(), "3 answered");
    });
}
