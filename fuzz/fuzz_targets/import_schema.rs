//! Bytes read as a JSON Schema and imported. Nothing may panic, and a schema that imports must
//! import again once emitted back as canonical JSON Schema.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolsmith_types::{Dialect, emit, import};

fuzz_target!(|data: &[u8]| {
    let Ok(schema) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let Ok(graph) = import(&schema) else {
        return;
    };
    let Ok(emitted) = emit(&graph, Dialect::JsonSchema) else {
        return;
    };
    if let Err(errors) = import(&emitted) {
        panic!(
            "the re-emission of an imported schema does not import\n\
             schema: {schema}\nemitted: {emitted}\nerrors: {errors}"
        );
    }
});
