//! A program serving its own tools over MCP in one call: stdio by default, streamable HTTP with
//! `--http ADDR`.
//!
//! Run it with `cargo run -p toolsmith-mcp --example serve_tools` (and point an MCP client at
//! the command), or `... --example serve_tools -- --http 127.0.0.1:8080` (until Ctrl-C).

use std::sync::Arc;

use serde::Serialize;
use toolsmith::{Registry, ToolType};
use toolsmith_mcp::{McpConfig, ServeError};

/// Adds two integers.
#[toolsmith::tool(read_only, idempotent)]
fn add(a: i64, b: i64) -> i64 {
    a.saturating_add(b)
}

/// Divides `a` by `b`.
///
/// # Arguments
/// * `b` - Anything but zero.
#[toolsmith::tool(read_only)]
fn divide(a: f64, b: f64) -> Result<f64, String> {
    if b == 0.0 {
        return Err("cannot divide by zero".to_owned());
    }
    Ok(a / b)
}

/// Tomorrow's weather.
#[derive(Serialize, ToolType)]
struct Weather {
    /// The city.
    city: String,
    /// Degrees Celsius.
    celsius: f64,
}

/// Looks up tomorrow's weather in a city.
#[toolsmith::tool(read_only, open_world)]
fn forecast(city: String) -> Weather {
    Weather {
        city,
        celsius: 21.5,
    }
}

fn registry() -> Result<Registry, ServeError> {
    let mut registry = Registry::new();
    registry
        .add(Arc::new(Add))?
        .add(Arc::new(Divide))?
        .add(Arc::new(Forecast))?;
    Ok(registry)
}

fn main() -> Result<(), ServeError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [flag, addr] if flag == "--http" => {
            toolsmith_mcp::serve_http(registry()?, addr, McpConfig::default())
        }
        _ => toolsmith_mcp::serve_stdio(registry()?),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use toolsmith_mcp::McpServer;

    use super::*;

    #[test]
    fn an_object_output_is_declared_as_the_output_schema() {
        let server = McpServer::new(registry().unwrap(), McpConfig::default()).unwrap();
        let forecast = server
            .tools()
            .into_iter()
            .find(|t| t.name == "forecast")
            .unwrap();
        let schema = forecast.output_schema.as_ref().expect("an output schema");
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], serde_json::json!(["city", "celsius"]));
        let add = server
            .tools()
            .into_iter()
            .find(|t| t.name == "add")
            .unwrap();
        assert!(add.output_schema.is_none(), "an integer is no object");
    }
}
