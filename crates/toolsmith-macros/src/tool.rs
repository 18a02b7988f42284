//! `#[tool]` and `#[toolset]`: a tool per function, its parameters from the signature.

use std::collections::HashMap;

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{FnArg, Ident, ImplItem, ImplItemFn, ItemFn, ItemImpl, Pat, ReturnType, Signature, Type};

use crate::attrs::{OptionsFor, ParamOptions, ToolOptions};
use crate::text::{
    argument_docs, description, doc_prose, doc_text, humanize, pascal_case, snake_case, unraw,
};

/// How the tool's function is reached from its instance.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Receiver {
    /// `fn f(&self, ..)`: called on the shared instance.
    Ref,
    /// `fn f(..)` in an impl block: `Self::f(..)`.
    Associated,
    /// A free function.
    Free,
}

/// One parameter of a tool function.
struct Param {
    ident: Ident,
    /// The name the model sends (serde's spelling of the identifier).
    name: String,
    /// The type the arguments struct holds (owned).
    stored: Type,
    /// For a `&T` parameter, the `T` it borrows from the stored value.
    borrowed: Option<Type>,
    description: Option<String>,
    default: Option<syn::Expr>,
}

/// One argument the tool function is called with.
#[derive(Clone, Copy)]
enum Input {
    /// `params[i]`.
    Param(usize),
    /// The call's `&Context`.
    Context,
}

/// Whether `ty` is `&Context` (however the path to it is written): the call's context, not a
/// parameter.
fn is_context(ty: &Type) -> bool {
    let Type::Reference(reference) = ty else {
        return false;
    };
    let Type::Path(path) = reference.elem.as_ref() else {
        return false;
    };
    reference.mutability.is_none()
        && path.qself.is_none()
        && path
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "Context" && s.arguments.is_none())
}

/// Everything needed to generate one tool.
struct ToolFn {
    ident: Ident,
    receiver: Receiver,
    /// Whether the function is `async`.
    asyncness: bool,
    params: Vec<Param>,
    /// The function's arguments in order: a parameter (by index) or the call's context.
    inputs: Vec<Input>,
    output: Type,
    name: String,
    description: String,
    options: ToolOptions,
    span: Span,
}

/// `#[tool]` on a free function: the function stays, and a unit struct named after it in
/// PascalCase is the tool.
pub fn expand_fn(options: ToolOptions, mut item: ItemFn) -> syn::Result<TokenStream> {
    if let Some(FnArg::Receiver(receiver)) = item.sig.inputs.first() {
        return Err(syn::Error::new_spanned(
            receiver,
            "#[tool] on a method needs #[toolset] on its impl block (or put #[tool] on an impl \
             block of one method, for a single tool with state)",
        ));
    }
    let doc = doc_text(&item.attrs);
    let name = options
        .name
        .as_ref()
        .map_or_else(|| unraw(&item.sig.ident), |n| n.value());
    let fallback = format!("Tool: {name}");
    let tool = tool_fn(
        &mut item.sig,
        options,
        name,
        doc.as_deref(),
        fallback,
        false,
    )?;
    let vis = &item.vis;
    let holder = tool.options.type_name.clone().unwrap_or_else(|| {
        format_ident!(
            "{}",
            pascal_case(&unraw(&item.sig.ident)),
            span = item.sig.ident.span()
        )
    });
    let holder_doc = format!(
        "The `{}` tool: the function `{}` as a [`Tool`](::toolsmith::Tool).",
        tool.name, item.sig.ident
    );
    let spec = spec_items(&tool, &quote!(#holder));
    let spec_const = spec_const_ident(&tool.ident);
    let tool_impl = single_tool_impl(&quote!(#holder), &spec_const);
    let registration = registration(
        quote!(Tool),
        &tool.name,
        &quote!(#holder),
        quote! { ::core::option::Option::Some(::std::vec![
            ::toolsmith::__private::Arc::new(#holder) as ::toolsmith::__private::Arc<dyn ::toolsmith::__private::Tool>
        ]) },
    );
    Ok(quote! {
        #item

        #[doc = #holder_doc]
        #[derive(Debug, Clone, Copy, Default)]
        #vis struct #holder;

        const _: () = {
            impl #holder { #spec }
            #tool_impl
            #registration
        };
    })
}

/// `#[tool]` on an impl block of one method: a tool with state, the type itself the tool.
pub fn expand_stateful(options: ToolOptions, mut item: ItemImpl) -> syn::Result<TokenStream> {
    reject_generics(&item)?;
    let self_ty = item.self_ty.clone();
    let type_name = type_ident(&self_ty)?;
    let impl_doc = doc_text(&item.attrs);
    let mut methods = item.items.iter_mut().filter_map(|i| match i {
        ImplItem::Fn(f) => Some(f),
        _ => None,
    });
    let (Some(method), None) = (methods.next(), methods.next()) else {
        return Err(syn::Error::new(
            item.impl_token.span,
            "#[tool] on an impl block makes its one method the tool; this block needs exactly \
             one method (put helpers in another impl block, or use #[toolset] for several tools)",
        ));
    };
    let doc = doc_text(&method.attrs).or(impl_doc);
    let name = options
        .name
        .as_ref()
        .map_or_else(|| snake_case(&type_name.to_string()), |n| n.value());
    let fallback = format!("Tool: {name}");
    let constructor = options.constructor.clone();
    let register = options.register.unwrap_or(true);
    let tool = tool_fn(
        &mut method.sig,
        options,
        name,
        doc.as_deref(),
        fallback,
        true,
    )?;
    let spec = spec_items(&tool, &quote!(Self));
    let spec_const = spec_const_ident(&tool.ident);
    let tool_impl = single_tool_impl(&quote!(#self_ty), &spec_const);
    let build = construct(&self_ty, constructor.as_ref(), |instance| {
        quote! { ::std::vec![
            ::toolsmith::__private::Arc::new(#instance) as ::toolsmith::__private::Arc<dyn ::toolsmith::__private::Tool>
        ] }
    });
    let registration =
        register.then(|| registration(quote!(Tool), &tool.name, &quote!(#self_ty), build));
    Ok(quote! {
        #item

        const _: () = {
            impl #self_ty { #spec }
            #tool_impl
            #registration
        };
    })
}

/// `#[toolset]` on an impl block: each `#[tool]` method a tool, all sharing one instance.
pub fn expand_toolset(options: ToolOptions, mut item: ItemImpl) -> syn::Result<TokenStream> {
    reject_generics(&item)?;
    let self_ty = item.self_ty.clone();
    let type_name = type_ident(&self_ty)?.to_string();
    let toolset_name = options.name.as_ref().map_or_else(
        || {
            snake_case(
                type_name
                    .strip_suffix("Toolset")
                    .filter(|s| !s.is_empty())
                    .unwrap_or(&type_name),
            )
        },
        |n| n.value(),
    );
    let options_limits = options.limits.clone();
    let mut tools = Vec::new();
    let mut seen: HashMap<String, Span> = HashMap::new();
    for impl_item in &mut item.items {
        let ImplItem::Fn(method) = impl_item else {
            continue;
        };
        let Some(mut options) = take_tool_attribute(method)? else {
            continue;
        };
        // The toolset's statement of limits holds for each tool that states none of its own.
        if options.limits.is_none() {
            options.limits.clone_from(&options_limits);
        }
        if let Some(type_name) = &options.type_name {
            return Err(syn::Error::new(
                type_name.span(),
                "`type_name` names the struct a free function becomes; a toolset's methods are \
                 tools of the toolset's own type",
            ));
        }
        let method_name = unraw(&method.sig.ident);
        let name = options
            .name
            .as_ref()
            .map_or_else(|| format!("{toolset_name}_{method_name}"), |n| n.value());
        let span = options
            .name
            .as_ref()
            .map_or(method.sig.ident.span(), |n| n.span());
        if let Some(first) = seen.insert(name.clone(), span) {
            let mut error = syn::Error::new(
                span,
                format!(
                    "two tools in toolset `{toolset_name}` are named `{name}`; a model could not tell them apart"
                ),
            );
            error.combine(syn::Error::new(
                first,
                format!("`{name}` is first used here"),
            ));
            return Err(error);
        }
        let doc = doc_text(&method.attrs);
        let fallback = format!("{} operation", humanize(&method_name));
        tools.push(tool_fn(
            &mut method.sig,
            options,
            name,
            doc.as_deref(),
            fallback,
            true,
        )?);
    }
    if tools.is_empty() {
        return Err(syn::Error::new(
            item.impl_token.span,
            "this toolset exposes no tools: mark the methods to expose with #[tool]",
        ));
    }
    let specs: Vec<TokenStream> = tools.iter().map(|t| spec_items(t, &quote!(Self))).collect();
    let spec_consts: Vec<Ident> = tools.iter().map(|t| spec_const_ident(&t.ident)).collect();
    let build = construct(&self_ty, options.constructor.as_ref(), |instance| {
        quote! { <#self_ty as ::toolsmith::__private::Toolset>::into_tools(#instance) }
    });
    let registration = options
        .register
        .unwrap_or(true)
        .then(|| registration(quote!(Toolset), &toolset_name, &quote!(#self_ty), build));
    Ok(quote! {
        #item

        const _: () = {
            impl #self_ty { #(#specs)* }

            impl ::toolsmith::__private::Toolset for #self_ty {
                const NAME: &'static str = #toolset_name;

                fn tools(
                    instance: ::toolsmith::__private::Arc<Self>,
                ) -> ::std::vec::Vec<::toolsmith::__private::Arc<dyn ::toolsmith::__private::Tool>> {
                    ::std::vec![#(
                        ::toolsmith::__private::MethodTool::shared(
                            ::toolsmith::__private::Arc::clone(&instance),
                            &<#self_ty>::#spec_consts,
                        )
                    ),*]
                }
            }

            #registration
        };
    })
}

/// Whether `attr` is `#[name]`, however it is spelled (`#[tool]`, `#[toolsmith::tool]`).
fn is_attribute(attr: &syn::Attribute, name: &str) -> bool {
    attr.path().segments.last().is_some_and(|s| s.ident == name)
}

fn reject_generics(item: &ItemImpl) -> syn::Result<()> {
    if let Some(param) = item.generics.params.first() {
        return Err(syn::Error::new(
            param.span(),
            "a toolset cannot be generic: the registry and the schema need one concrete type",
        ));
    }
    if let Some((_, path, _)) = &item.trait_ {
        return Err(syn::Error::new(
            path.span(),
            "put #[toolset] or #[tool] on an inherent impl block, not on a trait impl",
        ));
    }
    Ok(())
}

fn type_ident(ty: &Type) -> syn::Result<&Ident> {
    match ty {
        Type::Path(path) if path.qself.is_none() => path
            .path
            .segments
            .last()
            .map(|s| &s.ident)
            .ok_or_else(|| syn::Error::new(ty.span(), "expected a type name")),
        other => Err(syn::Error::new(
            other.span(),
            "expected the name of a struct or enum",
        )),
    }
}

/// Removes `#[tool]`/`#[tool(...)]` from a method, returning its options when it had one.
fn take_tool_attribute(method: &mut ImplItemFn) -> syn::Result<Option<ToolOptions>> {
    let Some(index) = method.attrs.iter().position(|a| is_attribute(a, "tool")) else {
        return Ok(None);
    };
    let attr = method.attrs.remove(index);
    if let Some(second) = method.attrs.iter().find(|a| is_attribute(a, "tool")) {
        return Err(syn::Error::new(
            second.span(),
            "a method takes one #[tool] attribute",
        ));
    }
    ToolOptions::from_attribute(&attr, OptionsFor::Tool).map(Some)
}

/// Reads a tool's signature (removing the parameter attributes it consumes).
fn tool_fn(
    sig: &mut Signature,
    options: ToolOptions,
    name: String,
    doc: Option<&str>,
    fallback_description: String,
    in_impl: bool,
) -> syn::Result<ToolFn> {
    check_signature(sig)?;
    let argument_docs: HashMap<String, String> = doc
        .map(argument_docs)
        .unwrap_or_default()
        .into_iter()
        .collect();
    let description = options
        .description
        .as_ref()
        .map(|d| d.value())
        .or_else(|| doc.and_then(description))
        .unwrap_or(fallback_description);
    let mut receiver = if in_impl {
        Receiver::Associated
    } else {
        Receiver::Free
    };
    let mut params = Vec::new();
    let mut inputs = Vec::new();
    let mut seen_context: Option<Span> = None;
    for input in &mut sig.inputs {
        match input {
            FnArg::Receiver(r) => {
                let problem = if r.colon_token.is_some() {
                    Some("a tool method takes `&self`, not a typed `self`")
                } else if r.reference.is_none() {
                    Some(
                        "a tool method takes `&self`, not `self`: the tools of a toolset share one instance, which no call may consume",
                    )
                } else if r.mutability.is_some() {
                    Some(
                        "a tool method takes `&self`, not `&mut self`: the tools of a toolset share one instance, so keep mutable state behind a Mutex or an atomic",
                    )
                } else {
                    None
                };
                if let Some(problem) = problem {
                    return Err(syn::Error::new_spanned(&*r, problem));
                }
                receiver = Receiver::Ref;
            }
            FnArg::Typed(typed) if is_context(&typed.ty) => {
                if let Some(attr) = typed
                    .attrs
                    .iter()
                    .find(|a| is_attribute(a, "param") || a.path().is_ident("doc"))
                {
                    return Err(syn::Error::new(
                        attr.span(),
                        "the `&Context` parameter is the call's context, not a parameter the \
                         model sends: it takes no #[param] or doc comment",
                    ));
                }
                if seen_context.replace(typed.span()).is_some() {
                    return Err(syn::Error::new(
                        typed.span(),
                        "a tool takes its `&Context` once",
                    ));
                }
                inputs.push(Input::Context);
            }
            FnArg::Typed(typed) => {
                let param_options = ParamOptions::from_attributes(&typed.attrs)?;
                let param_doc = doc_prose(&typed.attrs);
                typed
                    .attrs
                    .retain(|a| !is_attribute(a, "param") && !a.path().is_ident("doc"));
                let Pat::Ident(pat) = typed.pat.as_ref() else {
                    return Err(syn::Error::new(
                        typed.pat.span(),
                        "a tool parameter needs a plain name: the name is what the model sends",
                    ));
                };
                if pat.by_ref.is_some() || pat.subpat.is_some() {
                    return Err(syn::Error::new(
                        pat.span(),
                        "a tool parameter needs a plain name",
                    ));
                }
                let ident = pat.ident.clone();
                let name = unraw(&ident);
                let (stored, borrowed) = match typed.ty.as_ref() {
                    Type::Reference(r) if r.mutability.is_some() => {
                        return Err(syn::Error::new_spanned(
                            r,
                            "a tool parameter cannot be `&mut`: arguments are values the model sent",
                        ));
                    }
                    Type::Reference(r) => {
                        let inner = erase_lifetimes((*r.elem).clone());
                        let stored: Type = syn::parse_quote_spanned! {r.elem.span()=>
                            <#inner as ::toolsmith::__private::ToOwned>::Owned
                        };
                        (stored, Some(inner))
                    }
                    other => (erase_lifetimes(other.clone()), None),
                };
                if let Some(nested) = nested_reference(&stored) {
                    return Err(syn::Error::new_spanned(
                        nested,
                        "a tool parameter cannot borrow inside its type: the tool owns what the \
                         model sent, so use an owned type (`Option<String>`, not `Option<&str>`)",
                    ));
                }
                let description = param_options
                    .description
                    .map(|d| d.value())
                    .or(param_doc)
                    .or_else(|| argument_docs.get(&name).cloned());
                inputs.push(Input::Param(params.len()));
                params.push(Param {
                    ident,
                    name,
                    stored,
                    borrowed,
                    description,
                    default: param_options.default,
                });
            }
        }
    }
    let output = match &sig.output {
        ReturnType::Default => syn::parse_quote!(()),
        ReturnType::Type(_, ty) => erase_lifetimes((**ty).clone()),
    };
    Ok(ToolFn {
        ident: sig.ident.clone(),
        receiver,
        asyncness: sig.asyncness.is_some(),
        params,
        inputs,
        output,
        name,
        description,
        options,
        span: sig.ident.span(),
    })
}

fn check_signature(sig: &Signature) -> syn::Result<()> {
    if let Some(param) = sig
        .generics
        .params
        .iter()
        .find(|p| !matches!(p, syn::GenericParam::Lifetime(_)))
    {
        return Err(syn::Error::new(
            param.span(),
            "a tool function cannot be generic: its schema needs concrete types",
        ));
    }
    if let Some(variadic) = &sig.variadic {
        return Err(syn::Error::new(
            variadic.span(),
            "a tool function cannot be variadic",
        ));
    }
    if let ReturnType::Type(_, ty) = &sig.output
        && let Type::ImplTrait(t) = ty.as_ref()
    {
        return Err(syn::Error::new(
            t.span(),
            "a tool cannot return `impl Trait`: name the type, so its output can be described",
        ));
    }
    Ok(())
}

/// The first reference inside `ty` (a top-level `&T` has already been made owned).
fn nested_reference(ty: &Type) -> Option<syn::TypeReference> {
    struct Finder(Option<syn::TypeReference>);
    impl<'ast> syn::visit::Visit<'ast> for Finder {
        fn visit_type_reference(&mut self, reference: &'ast syn::TypeReference) {
            if self.0.is_none() {
                self.0 = Some(reference.clone());
            }
        }
    }
    let mut finder = Finder(None);
    syn::visit::Visit::visit_type(&mut finder, ty);
    finder.0
}

/// Every lifetime in `ty` as `'_` (inferred), so the type can be named inside a function body.
fn erase_lifetimes(mut ty: Type) -> Type {
    struct Eraser;
    impl VisitMut for Eraser {
        fn visit_lifetime_mut(&mut self, lifetime: &mut syn::Lifetime) {
            if lifetime.ident != "static" {
                *lifetime = syn::Lifetime::new("'_", lifetime.span());
            }
        }
    }
    Eraser.visit_type_mut(&mut ty);
    ty
}

/// The hidden constant holding a method's spec: named after the method exactly (two methods
/// differ in name, so two constants do too).
fn spec_const_ident(method: &Ident) -> Ident {
    format_ident!("__toolsmith_tool_{}", unraw(method))
}

/// The hidden associated items of one tool: parameters, output, invoke, and its spec.
fn spec_items(tool: &ToolFn, self_ty: &TokenStream) -> TokenStream {
    let method = &tool.ident;
    let parameters_fn = format_ident!("__toolsmith_{}_parameters", unraw(method));
    let output_fn = format_ident!("__toolsmith_{}_output", unraw(method));
    let invoke_fn = format_ident!("__toolsmith_{}_invoke", unraw(method));
    let limits_fn = format_ident!("__toolsmith_{}_limits", unraw(method));
    let spec_const = spec_const_ident(method);
    let name = &tool.name;
    let description = &tool.description;
    let output = &tool.output;

    let fields = tool.params.iter().map(|p| {
        let name = &p.name;
        let stored = &p.stored;
        let description = match &p.description {
            Some(d) => quote! { ::core::option::Option::Some(#d) },
            None => quote! { ::core::option::Option::None },
        };
        let default = crate::derive::default_json(
            p.default
                .as_ref()
                .map(|expr| quote_spanned! {expr.span()=> &{ let __v: #stored = #expr; __v } }),
        );
        quote_spanned! {stored.span()=>
            ::toolsmith::__private::field(
                #name,
                <#stored as ::toolsmith::__private::Describe>::describe(defs),
                <#stored as ::toolsmith::__private::Describe>::OPTIONAL,
                #description,
                #default,
            )
        }
    });
    // A parameter with a default reads it through serde too, so a default coercion cannot write
    // (its type is not `Serialize`) is still filled in.
    let mut default_fns = Vec::new();
    let struct_fields: Vec<TokenStream> = tool
        .params
        .iter()
        .map(|p| {
            let (ident, stored) = (&p.ident, &p.stored);
            match &p.default {
                Some(expr) => {
                    let function = format_ident!("__toolsmith_default_{}", unraw(ident));
                    let path = function.to_string();
                    default_fns.push(quote_spanned! {expr.span()=>
                        fn #function() -> #stored { #expr }
                    });
                    quote! { #[serde(default = #path)] #ident: #stored }
                }
                None => quote! { #ident: #stored },
            }
        })
        .collect();
    // Whether every parameter is `Plain` with no default: then clean arguments are read by
    // serde alone (see `__private::arguments`).
    let plain_params = tool.params.iter().map(|p| {
        let stored = &p.stored;
        if p.default.is_some() {
            quote! { false }
        } else {
            quote! { (&&::toolsmith::__private::PlainProbe::<#stored>::new()).plain() }
        }
    });
    let plain = quote! {{
        #[allow(unused_imports)]
        use ::toolsmith::__private::{ViaNotPlain as _, ViaPlain as _};
        true #(&& #plain_params)*
    }};
    let arguments = tool.inputs.iter().map(|input| match *input {
        Input::Context => quote! { &__toolsmith_context },
        Input::Param(index) => {
            let p = &tool.params[index];
            let ident = &p.ident;
            match &p.borrowed {
                Some(inner) => {
                    quote! { ::toolsmith::__private::Borrow::<#inner>::borrow(&__toolsmith_parsed.#ident) }
                }
                None => quote! { __toolsmith_parsed.#ident },
            }
        }
    });
    let call = match tool.receiver {
        Receiver::Ref => quote! { __toolsmith_this.#method(#(#arguments),*) },
        Receiver::Associated => quote! { <#self_ty>::#method(#(#arguments),*) },
        Receiver::Free => quote! { #method(#(#arguments),*) },
    };
    let annotation = |value: Option<bool>| match value {
        Some(v) => quote! { ::core::option::Option::Some(#v) },
        None => quote! { ::core::option::Option::None },
    };
    let read_only = annotation(tool.options.read_only);
    let destructive = annotation(tool.options.destructive);
    let idempotent = annotation(tool.options.idempotent);
    let open_world = annotation(tool.options.open_world);
    let needs_approval = tool.options.needs_approval.unwrap_or(false);
    let via = quote! {
        #[allow(unused_imports)]
        use ::toolsmith::__private::{
            ViaDescribed as _, ViaDescribedResult as _, ViaResult as _, ViaSerialize as _, ViaText as _,
        };
    };
    // Spanned at the return type, so "a tool cannot return `X`" points at `X`.
    let probe = quote_spanned! {output.span()=>
        (&&&&&::toolsmith::__private::Probe::<#output>::new()).kind()
    };
    // The statement of limits: a `fn() -> Limits` for a free function, else a `fn(&Self) ->
    // Limits` (a method, so the statement can follow the instance), checked at its path.
    let (limits_item, limits) = match &tool.options.limits {
        Some(path) => {
            let stated = if tool.receiver == Receiver::Free {
                quote_spanned! {path.span()=> {
                    let __toolsmith_stated: fn() -> ::toolsmith::__private::Limits = #path;
                    __toolsmith_stated()
                }}
            } else {
                quote_spanned! {path.span()=> {
                    let __toolsmith_stated: fn(&Self) -> ::toolsmith::__private::Limits = #path;
                    __toolsmith_stated(__toolsmith_this)
                }}
            };
            (
                quote! {
                    #[doc(hidden)]
                    fn #limits_fn(__toolsmith_this: &Self) -> ::toolsmith::__private::Limits {
                        let _ = __toolsmith_this;
                        #stated
                    }
                },
                quote! { ::core::option::Option::Some(Self::#limits_fn) },
            )
        }
        None => (quote! {}, quote! { ::core::option::Option::None }),
    };
    // Fields, not bindings: a parameter named like the function must not shadow it.
    let read = quote! {
        ::toolsmith::__private::arguments::<__ToolsmithArguments>(
            ::toolsmith::__private::called_name(&__toolsmith_context, #name),
            Self::#parameters_fn(),
            __toolsmith_arguments,
            __toolsmith_context.policy(),
            #plain,
        )
    };
    let render = quote! {
        #via
        #probe
            .render(
                ::toolsmith::__private::called_name(&__toolsmith_context, #name),
                __toolsmith_value,
            )
            .map(|output| output.with_repairs(__toolsmith_repairs))
    };
    let blocking = !tool.asyncness;
    let body = if tool.asyncness {
        quote! {
            let (__toolsmith_parsed, __toolsmith_repairs): (__ToolsmithArguments, _) = match #read {
                ::core::result::Result::Ok(read) => read,
                ::core::result::Result::Err(error) => {
                    return ::toolsmith::__private::ToolFuture::ready(::core::result::Result::Err(error));
                }
            };
            ::toolsmith::__private::ToolFuture::new(async move {
                let __toolsmith_context = __toolsmith_context;
                let __toolsmith_value: #output = #call.await;
                #render
            })
        }
    } else {
        quote! {
            ::toolsmith::__private::ToolFuture::ready((|| -> ::core::result::Result<
                ::toolsmith::__private::ToolOutput,
                ::toolsmith::__private::ToolError,
            > {
                let (__toolsmith_parsed, __toolsmith_repairs): (__ToolsmithArguments, _) = #read?;
                let __toolsmith_value: #output = #call;
                #render
            })())
        }
    };
    let span = tool.span;
    quote_spanned! {span=>
        #limits_item

        #[doc(hidden)]
        fn #parameters_fn() -> &'static ::toolsmith::__private::TypeGraph {
            static GRAPH: ::toolsmith::__private::OnceLock<::toolsmith::__private::TypeGraph> =
                ::toolsmith::__private::OnceLock::new();
            GRAPH.get_or_init(|| ::toolsmith::__private::parameters(|defs| {
                let _ = &defs;
                ::std::vec![#(#fields),*]
            }))
        }

        #[doc(hidden)]
        fn #output_fn() -> ::core::option::Option<&'static ::toolsmith::__private::TypeGraph> {
            static GRAPH: ::toolsmith::__private::OnceLock<::core::option::Option<::toolsmith::__private::TypeGraph>> =
                ::toolsmith::__private::OnceLock::new();
            GRAPH.get_or_init(|| {
                #via
                #probe.output()
            }).as_ref()
        }

        #[doc(hidden)]
        #[allow(clippy::needless_borrow, clippy::redundant_closure_call)]
        fn #invoke_fn<'__toolsmith>(
            __toolsmith_this: &'__toolsmith Self,
            __toolsmith_arguments: ::toolsmith::__private::Arguments<'__toolsmith>,
            __toolsmith_context: ::toolsmith::__private::Context,
        ) -> ::toolsmith::__private::ToolFuture<'__toolsmith> {
            #[derive(::toolsmith::__private::serde::Deserialize)]
            #[serde(crate = "::toolsmith::__private::serde", deny_unknown_fields)]
            #[allow(non_camel_case_types, non_snake_case)]
            struct __ToolsmithArguments { #(#struct_fields),* }
            #(#default_fns)*
            let _ = __toolsmith_this;
            #body
        }

        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        const #spec_const: ::toolsmith::__private::ToolSpec<Self> = ::toolsmith::__private::ToolSpec {
            name: #name,
            description: #description,
            parameters: Self::#parameters_fn,
            output: Self::#output_fn,
            annotations: ::toolsmith::__private::ToolAnnotations {
                read_only: #read_only,
                destructive: #destructive,
                idempotent: #idempotent,
                open_world: #open_world,
            },
            limits: #limits,
            blocking: #blocking,
            needs_approval: #needs_approval,
            invoke: Self::#invoke_fn,
        };
    }
}

/// `impl Tool` for a type that is one tool, through its spec.
fn single_tool_impl(self_ty: &TokenStream, spec: &Ident) -> TokenStream {
    quote! {
        impl ::toolsmith::__private::Tool for #self_ty {
            fn name(&self) -> &str {
                <#self_ty>::#spec.name
            }
            fn description(&self) -> &str {
                <#self_ty>::#spec.description
            }
            fn parameters(&self) -> &::toolsmith::__private::TypeGraph {
                (<#self_ty>::#spec.parameters)()
            }
            fn output(&self) -> ::core::option::Option<&::toolsmith::__private::TypeGraph> {
                (<#self_ty>::#spec.output)()
            }
            fn annotations(&self) -> ::toolsmith::__private::ToolAnnotations {
                <#self_ty>::#spec.annotations
            }
            fn limits(&self) -> ::core::option::Option<::toolsmith::__private::Limits> {
                <#self_ty>::#spec.limits(self)
            }
            fn is_blocking(&self) -> bool {
                <#self_ty>::#spec.blocking
            }
            fn needs_approval(&self) -> bool {
                <#self_ty>::#spec.needs_approval
            }
            fn call<'__toolsmith>(
                &'__toolsmith self,
                arguments: ::toolsmith::__private::Arguments<'__toolsmith>,
                context: ::toolsmith::__private::Context,
            ) -> ::toolsmith::__private::ToolFuture<'__toolsmith> {
                <#self_ty>::#spec.call(self, arguments, context)
            }
        }
    }
}

/// The registry's way to build an instance: the named constructor, else `Default`. A type with
/// neither is a compile error at the type, unless the block says `register = false` (then
/// nothing is registered and this is not called).
fn construct(
    self_ty: &Type,
    constructor: Option<&syn::Path>,
    tools: impl FnOnce(TokenStream) -> TokenStream,
) -> TokenStream {
    let tools = tools(quote! { instance });
    let instance = match constructor {
        Some(path) => quote! { #path() },
        None => quote_spanned! {self_ty.span()=>
            <#self_ty as ::toolsmith::__private::Registrable>::build()
        },
    };
    quote! {{
        let instance: #self_ty = #instance;
        ::core::option::Option::Some(#tools)
    }}
}

fn registration(
    kind: TokenStream,
    name: &str,
    self_ty: &TokenStream,
    build: TokenStream,
) -> TokenStream {
    quote! {
        fn __toolsmith_build() -> ::core::option::Option<
            ::std::vec::Vec<::toolsmith::__private::Arc<dyn ::toolsmith::__private::Tool>>,
        > {
            #build
        }
        ::toolsmith::__private::inventory::submit! {
            ::toolsmith::__private::Registration::new(
                ::toolsmith::__private::RegistrationKind::#kind,
                #name,
                ::core::concat!(::core::module_path!(), "::", ::core::stringify!(#self_ty)),
                __toolsmith_build,
            )
        }
    }
}

/// The impl block as written, minus the attributes `#[toolset]` would have consumed, so that one
/// mistake is reported once instead of cascading into "cannot find attribute" errors.
pub fn strip_tool_attributes(item: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    let Ok(mut block) = syn::parse2::<ItemImpl>(item.clone()) else {
        return item;
    };
    for impl_item in &mut block.items {
        if let ImplItem::Fn(method) = impl_item {
            method.attrs.retain(|a| !is_attribute(a, "tool"));
            for input in &mut method.sig.inputs {
                if let FnArg::Typed(typed) = input {
                    typed
                        .attrs
                        .retain(|a| !is_attribute(a, "param") && !a.path().is_ident("doc"));
                }
            }
        }
    }
    quote! { #block }
}
