use std::rc::Rc;

/// Counts, holding an `Rc` across an await.
#[toolsmith::tool]
async fn count(n: u32) -> u32 {
    let shared = Rc::new(n);
    std::future::ready(()).await;
    *shared
}

fn main() {}
