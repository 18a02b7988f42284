//! `#[derive(ToolType)]`: a `Describe` impl that follows the type's serde attributes.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, FieldsNamed, Ident};

use crate::attrs::{SerdeContainer, SerdeDefault, SerdeItem, serde_container, serde_item};
use crate::text::{RenameRule, description, doc_prose, doc_text, unraw};

pub fn expand(input: DeriveInput) -> syn::Result<TokenStream> {
    let container = serde_container(&input.attrs)?;
    let doc = doc_text(&input.attrs).and_then(|d| description(&d));
    let ident = &input.ident;
    let short = container
        .rename
        .clone()
        .unwrap_or_else(|| ident.to_string());
    let body = match &input.data {
        // serde reads the other type and converts: the model sends what that type describes.
        _ if container.from.is_some() => {
            let from = &container.from;
            quote! { <#from as ::toolsmith::__private::Describe>::describe(defs) }
        }
        Data::Struct(data) if container.transparent => {
            let fields = kept(&data.fields, |f| &f.attrs)?;
            let [(field, _)] = fields[..] else {
                return Err(syn::Error::new(
                    ident.span(),
                    "#[serde(transparent)] needs exactly one field that is not skipped",
                ));
            };
            let inner = &field.ty;
            quote! { <#inner as ::toolsmith::__private::Describe>::describe(defs) }
        }
        Data::Struct(data) => match &data.fields {
            Fields::Named(fields) => {
                let fields = struct_fields(fields, &container, container.rename_all)?;
                let description = option_str(doc.as_deref());
                let defaults = container_default(&container);
                named(quote! {
                    #defaults
                    let mut __s = ::toolsmith::__private::StructType::new(__name);
                    __s.description = #description;
                    __s.fields = ::std::vec![#(#fields),*];
                    ::toolsmith::__private::Type::Struct(__s)
                })
            }
            Fields::Unnamed(fields) if fields.unnamed.len() == 1 => {
                // A newtype reads as the value it wraps.
                let inner = &fields.unnamed[0].ty;
                quote! { <#inner as ::toolsmith::__private::Describe>::describe(defs) }
            }
            other => {
                return Err(syn::Error::new(
                    other.span(),
                    "ToolType describes structs with named fields and newtypes; a model sends \
                     objects, so name the fields",
                ));
            }
        },
        Data::Enum(data) => enum_body(ident, data, &container, doc.as_deref())?,
        Data::Union(u) => {
            return Err(syn::Error::new(
                u.union_token.span,
                "ToolType cannot describe a union; use an enum with #[serde(tag = \"_type\")]",
            ));
        }
    };
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let mut where_clause = where_clause.cloned();
    for param in input.generics.type_params() {
        let p = &param.ident;
        where_clause
            .get_or_insert_with(|| syn::parse_quote!(where))
            .predicates
            .push(syn::parse_quote!(#p: ::toolsmith::__private::Describe));
    }
    // Each instantiation of a generic type is its own definition, numbered after the first.
    let name = quote! { #short };
    Ok(quote! {
        #[automatically_derived]
        impl #impl_generics ::toolsmith::__private::Describe for #ident #ty_generics #where_clause {
            fn describe(defs: &mut ::toolsmith::__private::Definitions) -> ::toolsmith::__private::Type {
                #[allow(unused_variables)]
                let __name: &str = #name;
                #body
            }
        }
    })
}

/// The items (fields or variants) serde reads, each with its serde attributes: `skip`ped ones
/// left out.
fn kept<'a, T: 'a>(
    items: impl IntoIterator<Item = &'a T>,
    attrs: impl Fn(&T) -> &[syn::Attribute],
) -> syn::Result<Vec<(&'a T, SerdeItem)>> {
    let mut out = Vec::new();
    for item in items {
        let serde = serde_item(attrs(item))?;
        if !serde.skip {
            out.push((item, serde));
        }
    }
    Ok(out)
}

/// A named definition: built once, referred to everywhere (which is how recursion ends).
fn named(build: TokenStream) -> TokenStream {
    quote! {
        ::toolsmith::__private::define_for::<Self>(defs, __name, |defs| { #build })
    }
}

fn option_str(text: Option<&str>) -> TokenStream {
    match text {
        Some(text) => quote! { ::core::option::Option::Some(::std::string::String::from(#text)) },
        None => quote! { ::core::option::Option::None },
    }
}

fn option_ref(text: Option<&str>) -> TokenStream {
    match text {
        Some(text) => quote! { ::core::option::Option::Some(#text) },
        None => quote! { ::core::option::Option::None },
    }
}

/// `#[serde(default)]` on the container: every field defaults to `Self::default()`'s.
fn container_default(container: &SerdeContainer) -> TokenStream {
    match &container.default {
        Some(SerdeDefault::Trait) => {
            quote! { let __default: Self = ::core::default::Default::default(); }
        }
        Some(SerdeDefault::Path(path)) => quote! { let __default: Self = #path(); },
        None => TokenStream::new(),
    }
}

fn struct_fields(
    fields: &FieldsNamed,
    container: &SerdeContainer,
    rule: Option<RenameRule>,
) -> syn::Result<Vec<TokenStream>> {
    let mut out = Vec::new();
    for (field, serde) in kept(&fields.named, |f| &f.attrs)? {
        let Some(ident) = &field.ident else {
            continue;
        };
        check_field(&serde, ident)?;
        let name = field_name(ident, &serde, rule);
        let ty = &field.ty;
        let doc = doc_prose(&field.attrs);
        let description = option_ref(doc.as_deref());
        let value = match (&serde.default, &container.default) {
            (Some(SerdeDefault::Trait), _) => {
                Some(quote! { &<#ty as ::core::default::Default>::default() })
            }
            (Some(SerdeDefault::Path(path)), _) => {
                Some(quote! { &{ let __v: #ty = #path(); __v } })
            }
            (None, Some(_)) => Some(quote! { &__default.#ident }),
            (None, None) => None,
        };
        let default = default_json(value);
        let field = quote_spanned! {ty.span()=>
            ::toolsmith::__private::field(
                #name,
                <#ty as ::toolsmith::__private::Describe>::describe(defs),
                <#ty as ::toolsmith::__private::Describe>::OPTIONAL,
                #description,
                #default,
            )
        };
        // serde reads an alias as the field itself; coercion does too.
        let aliases = &serde.aliases;
        out.push(if aliases.is_empty() {
            field
        } else {
            quote! {{
                let mut __f = #field;
                __f.aliases = ::std::vec![#(::std::string::String::from(#aliases)),*];
                __f
            }}
        });
    }
    Ok(out)
}

/// `Some(json)` of a default value expression (`None` inside when its type is not `Serialize`),
/// or `None` when the field has no default.
pub fn default_json(value: Option<TokenStream>) -> TokenStream {
    match value {
        Some(value) => quote! {{
            #[allow(unused_imports)]
            use ::toolsmith::__private::{ViaOpaqueJson as _, ViaSerializeJson as _};
            ::core::option::Option::Some((&&::toolsmith::__private::DefaultValue(#value)).to_json())
        }},
        None => quote! { ::core::option::Option::None },
    }
}

fn check_field(serde: &SerdeItem, ident: &Ident) -> syn::Result<()> {
    if serde.flatten {
        return Err(syn::Error::new(
            ident.span(),
            "ToolType does not describe #[serde(flatten)]; declare the fields here",
        ));
    }
    if let Some(span) = serde.custom {
        return Err(syn::Error::new(
            span,
            "a field with a custom deserializer accepts what its type does not say; \
             implement `Describe` by hand for this type",
        ));
    }
    Ok(())
}

fn field_name(ident: &Ident, serde: &SerdeItem, rule: Option<RenameRule>) -> String {
    serde.rename.clone().unwrap_or_else(|| {
        let name = unraw(ident);
        rule.map_or(name.clone(), |rule| rule.field(&name))
    })
}

fn variant_name(ident: &Ident, serde: &SerdeItem, rule: Option<RenameRule>) -> String {
    serde.rename.clone().unwrap_or_else(|| {
        let name = unraw(ident);
        rule.map_or(name.clone(), |rule| rule.variant(&name))
    })
}

fn enum_body(
    ident: &Ident,
    data: &syn::DataEnum,
    container: &SerdeContainer,
    doc: Option<&str>,
) -> syn::Result<TokenStream> {
    let all_unit = data
        .variants
        .iter()
        .all(|v| matches!(v.fields, Fields::Unit));
    if data.variants.is_empty() {
        return Err(syn::Error::new(
            ident.span(),
            "an enum without variants has no value a model could send",
        ));
    }
    if container.untagged || container.content {
        return Err(syn::Error::new(
            ident.span(),
            "ToolType describes unit enums and enums tagged by `_type`; \
             use #[serde(tag = \"_type\")] without `content` or `untagged`",
        ));
    }
    let tag = container.tag.as_ref().map(|t| (t.value(), t.span()));
    match tag {
        None if all_unit => string_enum(data, container, doc),
        None => Err(syn::Error::new(
            ident.span(),
            "an enum with data is described as a union told apart by `_type`; \
             add #[serde(tag = \"_type\")] so serde reads what the schema says",
        )),
        Some((tag, span)) if tag != "_type" => Err(syn::Error::new(
            span,
            "the tag of a ToolType union is `_type`: #[serde(tag = \"_type\")]",
        )),
        Some(_) => tagged_enum(data, container, doc),
    }
}

fn string_enum(
    data: &syn::DataEnum,
    container: &SerdeContainer,
    doc: Option<&str>,
) -> syn::Result<TokenStream> {
    let mut variants = Vec::new();
    for (variant, serde) in kept(&data.variants, |v| &v.attrs)? {
        if serde.other {
            return Err(syn::Error::new(
                variant.ident.span(),
                "#[serde(other)] accepts any value, which an enum schema cannot say",
            ));
        }
        let value = variant_name(&variant.ident, &serde, container.rename_all);
        let aliases = &serde.aliases;
        let description = option_str(doc_prose(&variant.attrs).as_deref());
        variants.push(quote! {{
            let mut __v = ::toolsmith::__private::EnumVariant::new(
                ::toolsmith::__private::EnumValue::String(::std::string::String::from(#value)));
            __v.aliases = ::std::vec![#(::std::string::String::from(#aliases)),*];
            __v.description = #description;
            __v
        }});
    }
    let description = option_str(doc);
    Ok(named(quote! {
        let mut __e = ::toolsmith::__private::EnumType::strings(
            ::core::iter::empty::<&str>());
        __e.variants = ::std::vec![#(#variants),*];
        __e.description = #description;
        ::toolsmith::__private::Type::Enum(__e)
    }))
}

fn tagged_enum(
    data: &syn::DataEnum,
    container: &SerdeContainer,
    doc: Option<&str>,
) -> syn::Result<TokenStream> {
    let mut variants = Vec::new();
    for (variant, serde) in kept(&data.variants, |v| &v.attrs)? {
        let tag = variant_name(&variant.ident, &serde, container.rename_all);
        let variant_doc = option_str(
            doc_text(&variant.attrs)
                .and_then(|d| description(&d))
                .as_deref(),
        );
        let ty = match &variant.fields {
            Fields::Named(fields) => {
                let rule = serde.rename_all.or(container.rename_all_fields);
                let fields = struct_fields(fields, &SerdeContainer::default(), rule)?;
                quote! {{
                    let mut __s = ::toolsmith::__private::StructType::new(#tag);
                    __s.description = #variant_doc;
                    __s.fields = ::std::vec![#(#fields),*];
                    ::toolsmith::__private::Type::Struct(__s)
                }}
            }
            Fields::Unnamed(fields) if fields.unnamed.len() == 1 => {
                let inner = &fields.unnamed[0].ty;
                quote_spanned! {inner.span()=>
                    <#inner as ::toolsmith::__private::Describe>::describe(defs)
                }
            }
            Fields::Unit => quote! {{
                let mut __s = ::toolsmith::__private::StructType::new(#tag);
                __s.description = #variant_doc;
                ::toolsmith::__private::Type::Struct(__s)
            }},
            Fields::Unnamed(fields) => {
                return Err(syn::Error::new(
                    fields.span(),
                    "a variant of a `_type` union holds one struct or named fields",
                ));
            }
        };
        variants.push(quote! {
            ::toolsmith::__private::TaggedVariant { tag: ::std::string::String::from(#tag), ty: #ty }
        });
    }
    let description = option_str(doc);
    Ok(named(quote! {
        let mut __u = ::toolsmith::__private::TaggedUnion::new();
        __u.variants = ::std::vec![#(#variants),*];
        __u.description = #description;
        ::toolsmith::__private::Type::Tagged(__u)
    }))
}
