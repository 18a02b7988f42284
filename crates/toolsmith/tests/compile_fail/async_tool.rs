// toolsmith pulls in no async runtime, so a tool cannot be async.
#[toolsmith::tool]
async fn fetch(url: String) -> String {
    url
}

fn main() {}
