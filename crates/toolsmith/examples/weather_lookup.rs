//! The reference's single tool: a city and optional units. Once as a free function, and once as
//! a tool with state (an API key), whose one method is the tool.
//!
//! Run it with `cargo run -p toolsmith --example weather_lookup`.

use toolsmith::{Arguments, Context, ToolExt};

/// Looks up the current weather for a city.
#[toolsmith::tool(read_only, open_world)]
pub fn weather_lookup(city: String, units: Option<String>) -> String {
    let units = units.as_deref().unwrap_or("celsius");
    format!("Sunny in {city}, 21 degrees {units}")
}

/// A weather service client: the key is state every call uses.
pub struct WeatherService {
    api_key: String,
}

impl WeatherService {
    /// A client that signs its calls with `api_key`.
    pub fn new(api_key: impl Into<String>) -> Self {
        WeatherService {
            api_key: api_key.into(),
        }
    }

    fn from_env() -> Self {
        WeatherService::new(std::env::var("WEATHER_API_KEY").unwrap_or_default())
    }
}

#[toolsmith::tool(name = "weather_service", constructor = WeatherService::from_env)]
impl WeatherService {
    /// Looks up the weather with the service's key.
    ///
    /// # Arguments
    /// * `city` - The city, as its name in English.
    fn lookup(&self, city: &str) -> String {
        let signed = if self.api_key.is_empty() {
            "unsigned"
        } else {
            "signed"
        };
        format!("{signed} request for {city}")
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!(
        "{}",
        serde_json::to_string_pretty(&toolsmith::envelope(
            &WeatherLookup,
            toolsmith::Dialect::OpenAi { strict: false }
        )?)?
    );
    let output =
        WeatherLookup.call_blocking(Arguments::Text(r#"{"city": "Paris"}"#), Context::new())?;
    println!("{}", output.as_text());
    let service = WeatherService::new("k-123");
    println!(
        "{}",
        ToolExt::call_blocking(
            &service,
            Arguments::Text(r#"{"city": "Oslo"}"#),
            Context::new()
        )?
        .as_text()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use serde_json::json;
    use toolsmith::{Tool, ToolAnnotations, testing};

    use super::*;

    #[test]
    fn envelopes_match_golden_in_every_dialect() {
        let service = WeatherService::new("key");
        testing::assert_envelopes_golden(
            &[&WeatherLookup, &service],
            "tests/golden/weather_lookup",
        );
    }

    #[test]
    fn schema_matches_golden() {
        testing::assert_schema_golden(&WeatherLookup, "tests/golden/weather_lookup.json");
    }

    #[test]
    fn name_is_the_snake_case_function_name_and_description_the_doc_comment() {
        assert_eq!(WeatherLookup.name(), "weather_lookup");
        assert_eq!(
            WeatherLookup.description(),
            "Looks up the current weather for a city."
        );
    }

    #[test]
    fn optional_parameter_may_be_left_out() {
        assert_eq!(
            testing::call_text(&WeatherLookup, json!({"city": "Paris", "units": "kelvin"}))
                .unwrap(),
            "Sunny in Paris, 21 degrees kelvin"
        );
        assert_eq!(
            testing::call_text(&WeatherLookup, json!({"city": "Paris"})).unwrap(),
            "Sunny in Paris, 21 degrees celsius"
        );
    }

    #[test]
    fn missing_required_parameter_is_named() {
        let error = testing::call_text(&WeatherLookup, json!({"units": "kelvin"})).unwrap_err();
        assert!(error.contains("`city`: missing required field"), "{error}");
    }

    #[test]
    fn annotations_come_from_the_attribute() {
        assert_eq!(
            WeatherLookup.annotations(),
            ToolAnnotations {
                read_only: Some(true),
                open_world: Some(true),
                ..ToolAnnotations::default()
            }
        );
    }

    #[test]
    fn a_tool_with_state_is_its_type_and_uses_its_instance() {
        let service = WeatherService::new("key");
        assert_eq!(service.name(), "weather_service");
        assert_eq!(
            service.description(),
            "Looks up the weather with the service's key."
        );
        assert_eq!(
            testing::call_text(&service, json!({"city": "Oslo"})).unwrap(),
            "signed request for Oslo"
        );
        let schema =
            toolsmith::parameters_schema(service.parameters(), toolsmith::Dialect::JsonSchema)
                .unwrap();
        assert_eq!(
            schema["properties"]["city"]["description"],
            "The city, as its name in English."
        );
    }

    #[test]
    fn both_tools_are_in_the_global_registry() {
        let registry = toolsmith::registry().unwrap();
        assert!(registry.get("weather_lookup").is_some());
        let service = registry
            .get("weather_service")
            .expect("built with its constructor");
        assert_eq!(
            testing::call_text(service.as_ref(), json!({"city": "Rome"})).unwrap(),
            "unsigned request for Rome"
        );
    }
}
