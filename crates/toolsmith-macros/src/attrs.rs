//! Attribute reading: serde's (so the schema follows serde) and our own.

use syn::meta::ParseNestedMeta;
use syn::parse::ParseStream;
use syn::{Attribute, Expr, LitBool, LitStr, Path, Token};

use crate::text::RenameRule;

/// What serde's attributes on a container (struct or enum) say.
#[derive(Default)]
pub struct SerdeContainer {
    pub rename: Option<String>,
    pub rename_all: Option<RenameRule>,
    pub rename_all_fields: Option<RenameRule>,
    pub tag: Option<LitStr>,
    pub content: bool,
    pub untagged: bool,
    pub default: Option<SerdeDefault>,
    pub transparent: bool,
    /// `from = "T"` or `try_from = "T"`: serde reads a `T` and converts it.
    pub from: Option<syn::Type>,
}

/// What serde's attributes on a field or variant say.
#[derive(Default)]
pub struct SerdeItem {
    pub rename: Option<String>,
    pub rename_all: Option<RenameRule>,
    pub aliases: Vec<String>,
    pub default: Option<SerdeDefault>,
    pub skip: bool,
    pub flatten: bool,
    pub other: bool,
    /// A custom deserializer: the field's own type no longer says what it accepts.
    pub custom: Option<proc_macro2::Span>,
}

/// `#[serde(default)]` or `#[serde(default = "path")]`.
pub enum SerdeDefault {
    Trait,
    Path(Path),
}

pub fn serde_container(attrs: &[Attribute]) -> syn::Result<SerdeContainer> {
    let mut out = SerdeContainer::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                out.rename = deserialize_name(&meta)?;
            } else if meta.path.is_ident("rename_all") {
                out.rename_all = rename_rule(&meta)?;
            } else if meta.path.is_ident("rename_all_fields") {
                out.rename_all_fields = rename_rule(&meta)?;
            } else if meta.path.is_ident("tag") {
                out.tag = Some(meta.value()?.parse()?);
            } else if meta.path.is_ident("content") {
                out.content = true;
                skip_value(&meta)?;
            } else if meta.path.is_ident("untagged") {
                out.untagged = true;
            } else if meta.path.is_ident("transparent") {
                out.transparent = true;
            } else if meta.path.is_ident("from") || meta.path.is_ident("try_from") {
                out.from = Some(meta.value()?.parse::<LitStr>()?.parse()?);
            } else if meta.path.is_ident("default") {
                out.default = Some(serde_default(&meta)?);
            } else {
                skip_value(&meta)?;
            }
            Ok(())
        })?;
    }
    Ok(out)
}

pub fn serde_item(attrs: &[Attribute]) -> syn::Result<SerdeItem> {
    let mut out = SerdeItem::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| {
            let path = &meta.path;
            if path.is_ident("rename") {
                out.rename = deserialize_name(&meta)?;
            } else if path.is_ident("rename_all") {
                out.rename_all = rename_rule(&meta)?;
            } else if path.is_ident("alias") {
                out.aliases.push(meta.value()?.parse::<LitStr>()?.value());
            } else if path.is_ident("default") {
                out.default = Some(serde_default(&meta)?);
            } else if path.is_ident("skip") || path.is_ident("skip_deserializing") {
                out.skip = true;
            } else if path.is_ident("flatten") {
                out.flatten = true;
            } else if path.is_ident("other") {
                out.other = true;
            } else if path.is_ident("with") || path.is_ident("deserialize_with") {
                out.custom = Some(path_span(path));
                skip_value(&meta)?;
            } else {
                skip_value(&meta)?;
            }
            Ok(())
        })?;
    }
    Ok(out)
}

fn path_span(path: &Path) -> proc_macro2::Span {
    path.segments
        .first()
        .map(|s| s.ident.span())
        .unwrap_or_else(proc_macro2::Span::call_site)
}

/// `rename = "x"` or `rename(deserialize = "x", serialize = "y")`: the name serde reads.
fn deserialize_name(meta: &ParseNestedMeta<'_>) -> syn::Result<Option<String>> {
    if meta.input.peek(Token![=]) {
        return Ok(Some(meta.value()?.parse::<LitStr>()?.value()));
    }
    let mut name = None;
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("deserialize") {
            name = Some(inner.value()?.parse::<LitStr>()?.value());
        } else {
            skip_value(&inner)?;
        }
        Ok(())
    })?;
    Ok(name)
}

fn rename_rule(meta: &ParseNestedMeta<'_>) -> syn::Result<Option<RenameRule>> {
    let Some(rule) = deserialize_name(meta)? else {
        return Ok(None);
    };
    RenameRule::parse(&rule)
        .map(Some)
        .ok_or_else(|| meta.error(format!("unknown rename rule `{rule}`")))
}

fn serde_default(meta: &ParseNestedMeta<'_>) -> syn::Result<SerdeDefault> {
    if meta.input.peek(Token![=]) {
        let path: LitStr = meta.value()?.parse()?;
        Ok(SerdeDefault::Path(path.parse()?))
    } else {
        Ok(SerdeDefault::Trait)
    }
}

/// Consumes whatever value an attribute key we do not read has: `= expr` or `(...)`.
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        content.parse::<proc_macro2::TokenStream>()?;
    }
    Ok(())
}

/// The options of `#[tool(...)]` and `#[toolset(...)]`.
#[derive(Default)]
pub struct ToolOptions {
    pub name: Option<LitStr>,
    pub description: Option<LitStr>,
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
    /// The tool is not run by an agent until a person approves the call.
    pub needs_approval: Option<bool>,
    pub constructor: Option<Path>,
    pub register: Option<bool>,
    /// The struct a free function becomes (default: its name in PascalCase).
    pub type_name: Option<syn::Ident>,
    /// The function stating the tool's argument limits: `fn() -> Limits` for a free function,
    /// `fn(&Self) -> Limits` for a tool or toolset with an instance.
    pub limits: Option<Path>,
}

/// Which keys an attribute accepts.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum OptionsFor {
    /// `#[tool]` on a free function or a toolset method.
    Tool,
    /// `#[tool]` on an impl block: a tool with state, which the registry constructs.
    StatefulTool,
    /// `#[toolset]`.
    Toolset,
}

impl ToolOptions {
    pub fn parse(input: ParseStream<'_>, context: OptionsFor) -> syn::Result<Self> {
        let mut out = ToolOptions::default();
        let parser = syn::meta::parser(|meta| out.read(meta, context));
        syn::parse::Parser::parse2(parser, input.parse()?)?;
        Ok(out)
    }

    pub fn from_attribute(attr: &Attribute, context: OptionsFor) -> syn::Result<Self> {
        let mut out = ToolOptions::default();
        if matches!(attr.meta, syn::Meta::List(_)) {
            attr.parse_nested_meta(|meta| out.read(meta, context))?;
        }
        Ok(out)
    }

    fn read(&mut self, meta: ParseNestedMeta<'_>, context: OptionsFor) -> syn::Result<()> {
        let key = meta
            .path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        let hints = context != OptionsFor::Toolset;
        let constructs = context != OptionsFor::Tool;
        match key.as_str() {
            "name" => self.name = Some(meta.value()?.parse()?),
            "description" if hints => self.description = Some(meta.value()?.parse()?),
            "read_only" if hints => self.read_only = Some(flag(&meta)?),
            "destructive" if hints => self.destructive = Some(flag(&meta)?),
            "idempotent" if hints => self.idempotent = Some(flag(&meta)?),
            "open_world" if hints => self.open_world = Some(flag(&meta)?),
            "needs_approval" if hints => self.needs_approval = Some(flag(&meta)?),
            "constructor" if constructs => self.constructor = Some(meta.value()?.parse()?),
            "register" if constructs => self.register = Some(flag(&meta)?),
            "limits" => self.limits = Some(meta.value()?.parse()?),
            "type_name" if context == OptionsFor::Tool => {
                self.type_name = Some(meta.value()?.parse::<LitStr>()?.parse()?);
            }
            _ => {
                let valid = match context {
                    OptionsFor::Tool => {
                        "name, description, read_only, destructive, idempotent, open_world, needs_approval, limits, type_name"
                    }
                    OptionsFor::StatefulTool => {
                        "name, description, read_only, destructive, idempotent, open_world, needs_approval, limits, constructor, register"
                    }
                    OptionsFor::Toolset => "name, limits, constructor, register",
                };
                let near = valid
                    .split(", ")
                    .map(|option| (strsim::jaro_winkler(&key, option), option))
                    .filter(|(score, _)| *score >= 0.8)
                    .max_by(|a, b| a.0.total_cmp(&b.0))
                    .map_or(String::new(), |(_, option)| {
                        format!(" (did you mean `{option}`?)")
                    });
                return Err(meta.error(format!("unknown option; valid options are: {valid}{near}")));
            }
        }
        Ok(())
    }
}

/// `key` alone is `true`; `key = true` or `key = false` says which.
fn flag(meta: &ParseNestedMeta<'_>) -> syn::Result<bool> {
    if meta.input.peek(Token![=]) {
        Ok(meta.value()?.parse::<LitBool>()?.value)
    } else {
        Ok(true)
    }
}

/// The options of `#[param(...)]` on a tool parameter.
#[derive(Default)]
pub struct ParamOptions {
    pub description: Option<LitStr>,
    pub default: Option<Expr>,
}

impl ParamOptions {
    pub fn from_attributes(attrs: &[Attribute]) -> syn::Result<Self> {
        let mut out = ParamOptions::default();
        for attr in attrs.iter().filter(|a| a.path().is_ident("param")) {
            attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("description") {
                    out.description = Some(meta.value()?.parse()?);
                } else if meta.path.is_ident("default") {
                    out.default = Some(meta.value()?.parse()?);
                } else {
                    return Err(
                        meta.error("unknown option; valid options are: description, default")
                    );
                }
                Ok(())
            })?;
        }
        Ok(out)
    }
}
