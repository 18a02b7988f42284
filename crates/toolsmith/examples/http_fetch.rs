//! A tool written by hand: its parameters are imported from a JSON Schema (coerced by the type
//! read from it, then checked against the schema itself), and its call is async and does real
//! I/O. `http_fetch` reads a page of one site over HTTP/1.1 (hyper's
//! client connection on tokio's sockets), awaiting the network where it is called (no thread
//! of its own), bounded in bytes and time, and stopping when its call is cancelled.
//!
//! The program chooses the site; the model chooses only the path, so no argument can point
//! the tool at another host.
//!
//! Run it with `cargo run -p toolsmith --example http_fetch -- http://127.0.0.1:8000 /index.html`
//! (without arguments it prints the tool's declaration).

use std::future::Future;
use std::pin::pin;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::Uri;
use hyper::http::uri::Authority;
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use serde_json::json;
use toolsmith::{
    Arguments, Content, Context, ImportOptions, ImportedSchema, Repair, Tool, ToolAnnotations,
    ToolError, ToolFuture, ToolOutput, TypeGraph,
};

/// The tool's parameters, as a client of a JSON-Schema-described API would hand them over.
const PARAMETERS: &str = r#"{
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "The page's path on the site, from its root: `/docs/index.html`.",
            "pattern": "^/",
            "maxLength": 2048,
            "not": {"pattern": "(^|/)\\.\\.(/|$)"}
        },
        "max_bytes": {
            "type": "integer",
            "description": "Read at most this many bytes of the page.",
            "minimum": 1,
            "maximum": 1048576,
            "default": 65536
        }
    },
    "required": ["path"],
    "additionalProperties": false
}"#;

/// The arguments, once coerced to the parameters (the default filled in).
#[derive(Deserialize)]
struct Fetch {
    path: String,
    max_bytes: usize,
}

/// Reads pages of one site.
pub struct HttpFetch {
    authority: Authority,
    parameters: ImportedSchema,
    timeout: Duration,
}

/// Why a site could not be set up.
#[derive(Debug)]
pub struct SetupError(String);

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SetupError {}

impl HttpFetch {
    /// Pages of the site at `base` (`http://HOST:PORT`; plain HTTP only), each fetch given at
    /// most ten seconds.
    ///
    /// # Errors
    /// When `base` is not an `http://` URL with a host, or the parameters' schema does not
    /// import (it always does: it is this file's own).
    pub fn new(base: &str) -> Result<Self, SetupError> {
        let uri: Uri = base
            .parse()
            .map_err(|e| SetupError(format!("`{base}` is not a URL: {e}")))?;
        if uri.scheme_str() != Some("http") {
            return Err(SetupError(format!("`{base}` is not an http:// URL")));
        }
        let authority = uri
            .authority()
            .cloned()
            .ok_or_else(|| SetupError(format!("`{base}` has no host")))?;
        let schema: serde_json::Value =
            serde_json::from_str(PARAMETERS).map_err(|e| SetupError(e.to_string()))?;
        // Leniently: `not` (no `..` segment in the path) is outside the type model; the type
        // reads the rest, and the schema's validator enforces all of it after coercion.
        let parameters = ImportedSchema::new(schema, &ImportOptions::lenient())
            .map_err(|e| SetupError(format!("the parameters do not import: {e}")))?;
        Ok(HttpFetch {
            authority,
            parameters,
            timeout: Duration::from_secs(10),
        })
    }

    /// The same tool, giving each fetch at most `timeout`.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

impl Tool for HttpFetch {
    fn name(&self) -> &str {
        "http_fetch"
    }

    fn description(&self) -> &str {
        "Fetches a page of the documentation site and answers its text."
    }

    fn parameters(&self) -> &TypeGraph {
        self.parameters.graph()
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            read_only: Some(true),
            open_world: Some(true),
            ..ToolAnnotations::default()
        }
    }

    fn call<'a>(&'a self, arguments: Arguments<'a>, context: Context) -> ToolFuture<'a> {
        let tool = context.tool_name().unwrap_or(self.name()).to_owned();
        // Coerced as any tool's arguments are, then checked against the schema; refused at
        // once when they cannot be.
        let coerced = match self.parameters.coerce(arguments, context.policy()) {
            Ok(coerced) => coerced,
            Err(errors) => {
                return ToolFuture::ready(Err(ToolError::InvalidArguments { tool, errors }));
            }
        };
        // The schema's own shape: `path` a string, `max_bytes` an integer in range.
        let value = match Fetch::deserialize(&coerced.value) {
            Ok(value) => value,
            Err(error) => {
                return ToolFuture::ready(Err(ToolError::Failed {
                    tool,
                    message: format!("the coerced arguments do not read as the tool's: {error}"),
                }));
            }
        };
        let repairs = coerced.repairs;
        ToolFuture::new(async move {
            // The earlier of the tool's own time and the call's deadline.
            let time = context
                .remaining()
                .map_or(self.timeout, |left| left.min(self.timeout));
            let fetched = tokio::time::timeout(time, self.fetch(&value));
            let answer = tokio::select! {
                biased;
                () = context.cancelled() => return Err(context.stopped_error(tool)),
                answer = fetched => answer,
            };
            match answer {
                Err(_elapsed) => Err(ToolError::TimedOut {
                    tool,
                    after: Some(time),
                }),
                Ok(Err(message)) => Err(ToolError::Failed { tool, message }),
                Ok(Ok(page)) => Ok(page.into_output(&value.path, repairs)),
            }
        })
    }
}

/// A page as read.
struct Page {
    status: u16,
    content_type: Option<String>,
    body: Vec<u8>,
    truncated: bool,
}

impl Page {
    /// The page's text for the model, and what was read as structured output.
    fn into_output(self, path: &str, repairs: Vec<Repair>) -> ToolOutput {
        let text = String::from_utf8_lossy(&self.body).into_owned();
        let mut output = ToolOutput::new(vec![Content::text(text)]);
        output.structured = Some(json!({
            "path": path,
            "status": self.status,
            "content_type": self.content_type,
            "bytes": self.body.len(),
            "truncated": self.truncated,
        }));
        output.with_repairs(repairs)
    }
}

impl HttpFetch {
    /// One GET on its own connection, the body read up to `max_bytes`.
    async fn fetch(&self, fetch: &Fetch) -> Result<Page, String> {
        // The request target in origin form (the path alone; the host goes in `Host`), as a
        // server expects it from a client that is no proxy.
        let target = Uri::builder()
            .path_and_query(fetch.path.as_str())
            .build()
            .map_err(|e| format!("`{}` is not a path that can be requested: {e}", fetch.path))?;
        let stream = tokio::net::TcpStream::connect(self.authority.as_str())
            .await
            .map_err(|e| format!("could not connect to {}: {e}", self.authority))?;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake::<_, Empty<Bytes>>(TokioIo::new(stream))
                .await
                .map_err(|e| format!("could not speak HTTP to {}: {e}", self.authority))?;
        let request = hyper::Request::get(target)
            .header(hyper::header::HOST, self.authority.as_str())
            .header(hyper::header::USER_AGENT, "toolsmith-http-fetch")
            .body(Empty::new())
            .map_err(|e| format!("the request could not be made: {e}"))?;
        let exchange = async move {
            let response = sender
                .send_request(request)
                .await
                .map_err(|e| format!("the request failed: {e}"))?;
            let status = response.status();
            if !status.is_success() {
                return Err(format!("the site answered {status} for `{}`", fetch.path));
            }
            let content_type = response
                .headers()
                .get(hyper::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let mut body = response.into_body();
            let mut read = Vec::new();
            let mut truncated = false;
            while let Some(frame) = body.frame().await {
                let frame = frame.map_err(|e| format!("the page was cut off: {e}"))?;
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                let room = fetch.max_bytes - read.len();
                if data.len() > room {
                    read.extend_from_slice(&data[..room]);
                    truncated = true;
                    break;
                }
                read.extend_from_slice(&data);
            }
            Ok(Page {
                status: status.as_u16(),
                content_type,
                body: read,
                truncated,
            })
        };
        alongside(connection, exchange).await
    }
}

/// `exchange`, with `connection` (which moves the bytes) polled beside it until it ends.
async fn alongside<T>(
    connection: impl Future<Output = Result<(), hyper::Error>>,
    exchange: impl Future<Output = T>,
) -> T {
    let mut connection = pin!(connection);
    let mut exchange = pin!(exchange);
    let mut connected = true;
    std::future::poll_fn(|cx| {
        // A connection that ends (closed, or failed) fails the exchange in its own words.
        if connected && connection.as_mut().poll(cx).is_ready() {
            connected = false;
        }
        exchange.as_mut().poll(cx)
    })
    .await
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(base), Some(path)) = (args.next(), args.next()) else {
        let tool = HttpFetch::new("http://127.0.0.1:8000")?;
        let declared = toolsmith::envelope(&tool, toolsmith::Dialect::Mcp)?;
        println!("{}", serde_json::to_string_pretty(&declared)?);
        return Ok(());
    };
    let tool = HttpFetch::new(&base)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let arguments = json!({ "path": path });
    let output = runtime.block_on(tool.call(Arguments::Json(&arguments), Context::new()))?;
    println!("{}", output.as_text());
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::sync::Arc;
    use std::sync::mpsc;
    use std::time::Instant;

    use toolsmith::{CancellationToken, Dialect, Registry, Timeout};

    use super::*;

    /// A real HTTP server on a free loopback port, in a thread of its own: `/hello`, `/big`
    /// (100 KB), `/slow` (answers when the test lets it go, or after 20 s), anything else 404.
    struct Site {
        base: String,
        let_go: mpsc::Sender<()>,
        requests: Arc<std::sync::Mutex<Vec<String>>>,
    }

    impl Site {
        fn start() -> Site {
            let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
            let base = format!("http://{}", server.server_addr());
            let (let_go, wait) = mpsc::channel::<()>();
            let requests = Arc::new(std::sync::Mutex::new(Vec::new()));
            let seen = Arc::clone(&requests);
            std::thread::spawn(move || {
                for request in server.incoming_requests() {
                    let url = request.url().to_owned();
                    seen.lock().unwrap().push(url.clone());
                    let text = |body: &str| {
                        tiny_http::Response::from_string(body).with_header(
                            "Content-Type: text/plain; charset=utf-8"
                                .parse::<tiny_http::Header>()
                                .unwrap(),
                        )
                    };
                    let _ = match url.as_str() {
                        "/hello" => request.respond(text("Hello, toolsmith!")),
                        "/big" => request.respond(text(&"x".repeat(100_000))),
                        "/slow" => {
                            let _ = wait.recv_timeout(Duration::from_secs(20));
                            request.respond(text("finally"))
                        }
                        _ => request.respond(text("no such page").with_status_code(404)),
                    };
                }
            });
            Site {
                base,
                let_go,
                requests,
            }
        }

        fn tool(&self) -> HttpFetch {
            HttpFetch::new(&self.base).unwrap()
        }
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn fetches_a_page_from_a_local_server() {
        let site = Site::start();
        let tool = site.tool();
        let output = runtime()
            .block_on(tool.call(Arguments::Text(r#"{"path": "/hello"}"#), Context::new()))
            .unwrap();
        assert_eq!(output.as_text(), "Hello, toolsmith!");
        assert_eq!(
            output.structured,
            Some(json!({
                "path": "/hello",
                "status": 200,
                "content_type": "text/plain; charset=utf-8",
                "bytes": 17,
                "truncated": false,
            }))
        );
        assert!(output.repairs.is_empty());
        assert_eq!(*site.requests.lock().unwrap(), ["/hello"]);
    }

    #[test]
    fn is_awaited_through_a_registry_with_its_layers_and_blocking_entry_point() {
        let site = Site::start();
        let mut registry = Registry::new();
        registry.add(Arc::new(site.tool())).unwrap();
        let output = runtime()
            .block_on(registry.call(
                "http_fetch",
                Arguments::Text(r#"{"path": "/hello"}"#),
                Context::new(),
            ))
            .unwrap();
        assert_eq!(output.as_text(), "Hello, toolsmith!");
        // From sync code, with the facade's tokio feature: the runtime is the thread's own.
        let output = registry
            .call_blocking(
                "http_fetch",
                Arguments::Text(r#"{"path": "/hello"}"#),
                Context::new(),
            )
            .unwrap();
        assert_eq!(output.as_text(), "Hello, toolsmith!");
    }

    #[test]
    fn arguments_are_coerced_and_reading_stops_at_max_bytes() {
        let site = Site::start();
        let tool = site.tool();
        let output = runtime()
            .block_on(tool.call(
                Arguments::Text(r#"{"path": "/big", "max_bytes": "1000"}"#),
                Context::new(),
            ))
            .unwrap();
        assert_eq!(output.as_text().len(), 1000);
        let structured = output.structured.unwrap();
        assert_eq!(structured["truncated"], true);
        assert_eq!(structured["bytes"], 1000);
        assert_eq!(output.repairs[0].code.as_str(), "int_from_string");
        // The default bound is the schema's, 64 KiB.
        let output = runtime()
            .block_on(tool.call(Arguments::Text(r#"{"path": "/big"}"#), Context::new()))
            .unwrap();
        assert_eq!(output.structured.unwrap()["bytes"], 65536);
    }

    #[test]
    fn arguments_outside_the_schema_are_refused_before_any_request() {
        let site = Site::start();
        let tool = site.tool();
        for (arguments, expected) in [
            (r#"{"path": "hello"}"#, "`path`: "),
            (r#"{"path": "/hello", "max_bytes": 0}"#, "`max_bytes`: "),
            (
                r#"{"path": "/hello", "host": "evil.example"}"#,
                "`host`: unknown field",
            ),
            (r#"{}"#, "`path`: missing required field"),
            // Outside the type model, kept by the schema's validator.
            (
                r#"{"path": "/docs/../secret"}"#,
                "`path`: expected a value that satisfies the schema's `not`",
            ),
        ] {
            let error = tool
                .call(Arguments::Text(arguments), Context::new())
                .into_ready()
                .expect("refused at once")
                .unwrap_err();
            assert_eq!(error.code(), "invalid_arguments", "{arguments}");
            assert!(
                error.to_model_message().contains(expected),
                "{arguments}: {error}"
            );
        }
        assert!(site.requests.lock().unwrap().is_empty());
    }

    #[test]
    fn a_path_that_is_no_request_target_fails_before_anything_is_sent() {
        let site = Site::start();
        let error = runtime()
            .block_on(site.tool().call(
                Arguments::Text(r#"{"path": "/a b\r\nHost: evil.example"}"#),
                Context::new(),
            ))
            .unwrap_err();
        assert_eq!(error.code(), "failed");
        assert!(
            error
                .to_model_message()
                .contains("is not a path that can be requested"),
            "{error}"
        );
        assert!(site.requests.lock().unwrap().is_empty());
    }

    #[test]
    fn a_page_the_site_does_not_have_is_a_failure_naming_the_status() {
        let site = Site::start();
        let error = runtime()
            .block_on(
                site.tool()
                    .call(Arguments::Text(r#"{"path": "/missing"}"#), Context::new()),
            )
            .unwrap_err();
        assert_eq!(
            error,
            ToolError::Failed {
                tool: "http_fetch".into(),
                message: "the site answered 404 Not Found for `/missing`".into()
            }
        );
    }

    #[test]
    fn a_site_that_is_not_there_is_a_failure_naming_it() {
        // A port that was free a moment ago.
        let address = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let tool = HttpFetch::new(&format!("http://{address}")).unwrap();
        let error = runtime()
            .block_on(tool.call(Arguments::Text(r#"{"path": "/"}"#), Context::new()))
            .unwrap_err();
        assert_eq!(error.code(), "failed");
        assert!(
            error
                .to_model_message()
                .contains(&format!("could not connect to {address}")),
            "{error}"
        );
    }

    #[test]
    fn a_call_cancelled_while_the_site_is_slow_stops_at_once() {
        let site = Site::start();
        let tool = site.tool();
        let token = CancellationToken::new();
        let cancel = token.clone();
        let requests = Arc::clone(&site.requests);
        std::thread::spawn(move || {
            // Once the request has reached the site, the caller gives up.
            let started = Instant::now();
            while requests.lock().unwrap().is_empty() && started.elapsed() < Duration::from_secs(20)
            {
                std::thread::sleep(Duration::from_millis(1));
            }
            cancel.cancel();
        });
        let started = Instant::now();
        let error = runtime()
            .block_on(tool.call(
                Arguments::Text(r#"{"path": "/slow"}"#),
                Context::new().with_cancellation(token),
            ))
            .unwrap_err();
        assert_eq!(
            error,
            ToolError::Cancelled {
                tool: "http_fetch".into()
            }
        );
        assert!(started.elapsed() < Duration::from_secs(10));
        site.let_go.send(()).unwrap();
    }

    #[test]
    fn a_slow_site_runs_out_the_tools_own_time_or_the_calls_deadline() {
        let site = Site::start();
        let tool = site.tool().with_timeout(Duration::from_millis(100));
        let error = runtime()
            .block_on(tool.call(Arguments::Text(r#"{"path": "/slow"}"#), Context::new()))
            .unwrap_err();
        assert_eq!(
            error,
            ToolError::TimedOut {
                tool: "http_fetch".into(),
                after: Some(Duration::from_millis(100))
            }
        );
        site.let_go.send(()).unwrap();

        // Behind a registry's Timeout layer, the layer's time ends it.
        let mut registry = Registry::new().with_layer(Timeout::new(Duration::from_millis(50)));
        registry.add(Arc::new(site.tool())).unwrap();
        let error = registry
            .call_blocking(
                "http_fetch",
                Arguments::Text(r#"{"path": "/slow"}"#),
                Context::new(),
            )
            .unwrap_err();
        assert_eq!(error.code(), "timed_out");
        site.let_go.send(()).unwrap();
    }

    #[test]
    fn is_declared_from_its_imported_schema_in_every_dialect() {
        let tool = HttpFetch::new("http://127.0.0.1:1").unwrap();
        let declared = toolsmith::envelope(&tool, Dialect::OpenAi { strict: false }).unwrap();
        assert_eq!(declared["function"]["name"], "http_fetch");
        let parameters = &declared["function"]["parameters"];
        assert_eq!(parameters["required"], json!(["path"]));
        assert_eq!(parameters["properties"]["max_bytes"]["default"], 65536);
        assert_eq!(parameters["properties"]["path"]["pattern"], "^/");
        let mcp = toolsmith::envelope(&tool, Dialect::Mcp).unwrap();
        assert_eq!(
            mcp["annotations"],
            json!({"readOnlyHint": true, "openWorldHint": true})
        );
        for dialect in Dialect::ALL {
            assert!(toolsmith::envelope(&tool, dialect).is_ok(), "{dialect}");
        }
    }

    #[test]
    fn only_a_plain_http_site_can_be_set_up() {
        for base in [
            "https://example.com",
            "ftp://x",
            "not a url",
            "/just/a/path",
        ] {
            assert!(HttpFetch::new(base).is_err(), "{base}");
        }
    }
}
