//! The reference's API toolset: shared state built from a constructor argument (a base URL), so
//! the toolset is built by hand and then turned into tools (`register = false`: the global
//! registry has no base URL to build it with).
//!
//! The facade does no HTTP; this toolset says which request it would make, which is what its
//! state decides.
//!
//! Run it with `cargo run -p toolsmith --example api_toolset`.

use std::sync::atomic::{AtomicU64, Ordering};

use toolsmith::{Arguments, Context, Policy, ToolExt, Toolset};

/// A client for one API, at a base URL chosen when it is built.
pub struct ApiToolset {
    base_url: String,
    requests: AtomicU64,
}

impl ApiToolset {
    /// A client for the API at `base_url`.
    pub fn new(base_url: impl Into<String>) -> Self {
        ApiToolset {
            base_url: base_url.into(),
            requests: AtomicU64::new(0),
        }
    }

    fn request(&self, method: &str, path: &str) -> String {
        let n = self.requests.fetch_add(1, Ordering::SeqCst) + 1;
        format!(
            "#{n} {method} {}/{}",
            self.base_url.trim_end_matches('/'),
            path.trim_start_matches('/')
        )
    }
}

#[toolsmith::toolset(register = false)]
impl ApiToolset {
    /// Fetches one user by id.
    #[tool(read_only, open_world)]
    fn get_user(&self, id: u64) -> String {
        self.request("GET", &format!("users/{id}"))
    }

    /// Lists users, a page at a time.
    ///
    /// # Arguments
    /// * `page` - Which page, from 1.
    /// * `per_page` - How many users a page holds.
    #[tool(read_only, open_world)]
    fn list_users(&self, page: Option<u32>, #[param(default = 20)] per_page: u32) -> String {
        self.request(
            "GET",
            &format!("users?page={}&per_page={per_page}", page.unwrap_or(1)),
        )
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tools = ApiToolset::new("https://api.example.com").into_tools();
    let policy = Policy::default();
    println!(
        "{}",
        tools[0]
            .call_blocking(
                Arguments::Text(r#"{"id": "7"}"#),
                Context::new().with_policy(policy.clone())
            )?
            .as_text()
    );
    println!(
        "{}",
        tools[1]
            .call_blocking(
                Arguments::Text("{}"),
                Context::new().with_policy(policy.clone())
            )?
            .as_text()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use serde_json::{Value, json};
    use toolsmith::testing;

    use super::*;

    #[test]
    fn envelopes_match_golden_in_every_dialect() {
        let tools = ApiToolset::new("https://api.example.com").into_tools();
        let tools: Vec<&dyn toolsmith::Tool> = tools.iter().map(|t| t.as_ref()).collect();
        testing::assert_envelopes_golden(&tools, "tests/golden/api_toolset");
    }

    #[test]
    fn schemas_match_golden() {
        let schemas: Vec<Value> = ApiToolset::new("https://api.example.com")
            .into_tools()
            .iter()
            .map(|t| {
                serde_json::json!({"type": "function", "function": toolsmith::envelope(&**t, toolsmith::Dialect::JsonSchema).unwrap()})
            })
            .collect();
        testing::assert_golden("tests/golden/api_toolset.json", &Value::Array(schemas));
    }

    #[test]
    fn toolset_name_is_the_type_name_without_toolset() {
        assert_eq!(<ApiToolset as Toolset>::NAME, "api");
        let tools = ApiToolset::new("x").into_tools();
        assert_eq!(tools[0].name(), "api_get_user");
    }

    #[test]
    fn tools_share_the_instance_built_by_hand() {
        let tools = ApiToolset::new("https://api.example.com/").into_tools();
        assert_eq!(
            testing::call_text(tools[0].as_ref(), json!({"id": 7})).unwrap(),
            "#1 GET https://api.example.com/users/7"
        );
        assert_eq!(
            testing::call_text(tools[1].as_ref(), json!({"page": 2})).unwrap(),
            "#2 GET https://api.example.com/users?page=2&per_page=20"
        );
    }

    #[test]
    fn a_declared_default_is_in_the_schema_and_filled_in() {
        let tools = ApiToolset::new("u").into_tools();
        let schema =
            toolsmith::parameters_schema(tools[1].parameters(), toolsmith::Dialect::JsonSchema)
                .unwrap();
        assert_eq!(schema["properties"]["per_page"]["default"], 20);
        assert_eq!(schema["required"], json!([]));
    }

    #[test]
    fn a_toolset_declared_register_false_is_not_in_the_global_registry() {
        let registry = toolsmith::registry().unwrap();
        assert!(registry.get("api_get_user").is_none());
    }
}
