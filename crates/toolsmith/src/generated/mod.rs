//! What the macros' generated code calls. Not a public API: names and shapes change without
//! notice. Generated code names only `::toolsmith::__private` paths, so a user needs no direct
//! dependency on serde, inventory or the types crate.
//!
//! - `spec`: a tool known at compile time ([`ToolSpec`]), a toolset method as a tool
//!   ([`MethodTool`]), and the call into the argument path ([`arguments`]);
//! - `parameters`: the parameters type of a tool, field by field, and its defaults;
//! - `output`: how a return value becomes the tool's output (autoref probes);
//! - `registrable`: how the registry builds a toolset by itself.

mod output;
mod parameters;
mod registrable;
mod spec;

pub use std::borrow::{Borrow, ToOwned};
pub use std::sync::{Arc, OnceLock};

pub use inventory;
pub use serde;
pub use serde_json;
pub use toolsmith_types::{
    Arguments, Definitions, Describe, EnumType, EnumValue, EnumVariant, Field, Limits, PlainProbe,
    Policy, StructType, TaggedUnion, TaggedVariant, Type, TypeGraph, ViaNotPlain, ViaPlain,
    define_for,
};

pub use crate::registry::{Registration, RegistrationKind};
pub use crate::{Context, Tool, ToolAnnotations, ToolError, ToolFuture, ToolOutput, Toolset};

pub use output::{
    Failure, IntoText, Probe, Render, ToolReturn, ViaDescribed, ViaDescribedResult, ViaResult,
    ViaSerialize, ViaText,
};
pub use parameters::{DefaultValue, ViaOpaqueJson, ViaSerializeJson, field, parameters};
pub use registrable::Registrable;
pub use spec::{MethodTool, ToolSpec, arguments, called_name};
