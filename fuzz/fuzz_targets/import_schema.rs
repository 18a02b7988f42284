//! Bytes read as a JSON Schema and imported, strictly and leniently. Nothing may panic, and a
//! schema that imports in either mode must import again strictly once emitted back as canonical
//! JSON Schema.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolsmith_types::{Dialect, ImportOptions, emit, import, import_with};

fuzz_target!(|data: &[u8]| {
    let Ok(schema) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let strict = import(&schema).ok();
    let lenient = import_with(&schema, &ImportOptions::lenient()).ok();
    for graph in strict.into_iter().chain(lenient.map(|imported| imported.graph)) {
        let Ok(emitted) = emit(&graph, Dialect::JsonSchema) else {
            continue;
        };
        if let Err(errors) = import(&emitted) {
            panic!(
                "the re-emission of an imported schema does not import\n\
                 schema: {schema}\nemitted: {emitted}\nerrors: {errors}"
            );
        }
    }
});
