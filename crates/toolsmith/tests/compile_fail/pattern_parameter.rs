// The parameter's name is what the model sends, so a pattern has none to give.
#[toolsmith::tool]
fn distance((x, y): (f64, f64)) -> f64 {
    (x * x + y * y).sqrt()
}

fn main() {}
