// A parameter's type must describe itself, or the model could not be told what to send.
#[derive(serde::Deserialize)]
struct Coordinates {
    latitude: f64,
    longitude: f64,
}

#[toolsmith::tool]
fn forecast(at: Coordinates) -> String {
    format!("{} {}", at.latitude, at.longitude)
}

fn main() {}
