//! The proc-macros of toolsmith: `#[derive(ToolType)]`, `#[tool]` and `#[toolset]`. Use them
//! through the `toolsmith` crate, which documents them and re-exports them.
//!
//! This crate only reads Rust syntax and writes Rust syntax: everything the generated code does at
//! run time lives in `toolsmith::__private`, the only paths it names (besides `core` and `std`),
//! so a user needs no direct dependency on serde, inventory or the types crate. It must never hold
//! logic that could live in a normal crate.

use proc_macro::TokenStream;
use syn::parse::Parser;

mod attrs;
mod derive;
mod text;
mod tool;

use attrs::{OptionsFor, ToolOptions};

/// Describes a struct or enum as a toolsmith `Type`, following its serde attributes.
///
/// See the `toolsmith` crate's documentation of `ToolType`.
#[proc_macro_derive(ToolType, attributes(serde))]
pub fn derive_tool_type(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    derive::expand(input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Makes a function (or the one method of an impl block) a tool.
///
/// See the `toolsmith` crate's documentation of `tool`.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item = proc_macro2::TokenStream::from(item);
    let result = match syn::parse2::<syn::Item>(item.clone()) {
        Ok(syn::Item::Fn(function)) => {
            parse_options(attr, OptionsFor::Tool).and_then(|o| tool::expand_fn(o, function))
        }
        Ok(syn::Item::Impl(block)) => parse_options(attr, OptionsFor::StatefulTool)
            .and_then(|o| tool::expand_stateful(o, block)),
        Ok(other) => Err(syn::Error::new_spanned(
            other,
            "#[tool] goes on a function, on a method inside a #[toolset] impl block, or on an \
             impl block with one method",
        )),
        Err(error) => Err(error),
    };
    result.unwrap_or_else(|e| with_item(e, item)).into()
}

/// Makes the `#[tool]` methods of an impl block tools that share one instance.
///
/// See the `toolsmith` crate's documentation of `toolset`.
#[proc_macro_attribute]
pub fn toolset(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item = proc_macro2::TokenStream::from(item);
    let result = match syn::parse2::<syn::Item>(item.clone()) {
        Ok(syn::Item::Impl(block)) => {
            parse_options(attr, OptionsFor::Toolset).and_then(|o| tool::expand_toolset(o, block))
        }
        Ok(other) => Err(syn::Error::new_spanned(
            other,
            "#[toolset] goes on an impl block whose #[tool] methods become the tools",
        )),
        Err(error) => Err(error),
    };
    result
        .unwrap_or_else(|e| with_item(e, tool::strip_tool_attributes(item)))
        .into()
}

fn parse_options(attr: TokenStream, context: OptionsFor) -> syn::Result<ToolOptions> {
    (|input: syn::parse::ParseStream<'_>| ToolOptions::parse(input, context)).parse(attr)
}

/// The error, and the item unchanged, so one mistake does not cascade into "not found" errors.
fn with_item(error: syn::Error, item: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    let error = error.into_compile_error();
    quote::quote! { #error #item }
}
