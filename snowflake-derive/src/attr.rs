//! Parses `#[layout(...)]` and `#[snowflake(...)]`, keeping each value's tokens so errors
//! point at them. Each bad value is reported and parsing goes on with the next key.

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::parse::ParseStream;
use syn::{Attribute, Lit, LitStr};

use snowflake_layout::rules::{EPOCH_EXPECTED, Given, ORDER_EXPECTED, Spelling, UNIT_EXPECTED};
use snowflake_layout::{EpochError, FieldOrder, KEYS as LAYOUT_KEYS, Preset, TickUnit, parse_epoch};

use crate::ctxt::Ctxt;

pub const SNOWFLAKE_KEYS: &str = "crate, decode_only, prefix, accept_decimal";

/// A value as written: its tokens (for spans) and its meaning, when it had one.
pub struct Value<T> {
    pub tokens: TokenStream,
    pub value: Option<T>,
}

#[derive(Default)]
pub struct LayoutAttr {
    /// The whole attribute, for errors about the layout as a whole.
    pub attr: Option<TokenStream>,
    /// Whether the attribute parsed to its end. After a syntax error the keys that follow
    /// it were never read, so they must not be reported as missing.
    pub complete: bool,
    pub time: Option<Value<u32>>,
    pub worker: Option<Value<u32>>,
    pub datacenter: Option<Value<u32>>,
    pub machine: Option<Value<u32>>,
    pub seq: Option<Value<u32>>,
    pub epoch: Option<Value<i64>>,
    pub unit: Option<Value<TickUnit>>,
    pub order: Option<Value<FieldOrder>>,
    pub preset: Option<Value<&'static Preset>>,
    /// Whether the layout was given in the text form (`#[layout("time=42,…")]`): messages
    /// then spell keys as the text form does.
    pub text_form: bool,
}

pub struct Attrs {
    pub layout: LayoutAttr,
    pub krate: Option<syn::Path>,
    /// `#[snowflake(decode_only)]`: a type that decodes IDs of a scheme (perhaps one whose
    /// time field has run out) and never generates.
    pub decode_only: bool,
    /// `#[snowflake(prefix = "ord")]`: the checked prefix of the text form.
    pub prefix: Option<Value<String>>,
    /// `#[snowflake(accept_decimal)]`: a prefixed type that also reads bare decimal text.
    pub accept_decimal: Option<syn::Path>,
}

pub fn parse(cx: &Ctxt, attrs: &[Attribute]) -> Attrs {
    let mut layout = LayoutAttr::default();
    let mut krate = None;
    let mut decode_only = false;
    let mut prefix: Option<Value<String>> = None;
    let mut accept_decimal: Option<syn::Path> = None;
    for attr in attrs {
        if attr.path().is_ident("layout") {
            if layout.attr.is_some() {
                cx.error_spanned(attr, "duplicate #[layout] attribute; declare every width in one #[layout(...)]");
                continue;
            }
            layout.attr = Some(attr.to_token_stream());
            // The text form in a string: what `--layout`, `/v1/types` and `T::LAYOUT` print.
            if let Ok(text) = attr.parse_args::<LitStr>() {
                parse_layout_text(cx, &mut layout, &text);
                continue;
            }
            match attr.parse_nested_meta(|meta| parse_layout_key(cx, &mut layout, &meta.path, meta.input)) {
                Ok(()) => layout.complete = true,
                Err(e) => cx.push(e),
            }
        } else if attr.path().is_ident("snowflake") {
            let result = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("crate") {
                    let lit: LitStr = meta.value()?.parse()?;
                    if krate.is_some() {
                        cx.error_spanned(&meta.path, "duplicate key `crate`");
                    }
                    match lit.parse::<syn::Path>() {
                        Ok(path) => krate = Some(path),
                        Err(_) => cx.error_spanned(&lit, "expected a path, e.g. `crate = \"::typed_snowflake\"`"),
                    }
                    Ok(())
                } else if meta.path.is_ident("decode_only") {
                    if decode_only {
                        cx.error_spanned(&meta.path, "duplicate key `decode_only`");
                    }
                    if !meta.input.is_empty() && !meta.input.peek(syn::Token![,]) {
                        cx.error_spanned(&meta.path, "`decode_only` takes no value: write `#[snowflake(decode_only)]`");
                        skip_value(meta.input)?;
                    }
                    decode_only = true;
                    Ok(())
                } else if meta.path.is_ident("prefix") {
                    let tokens = take_value(meta.input, "prefix")?;
                    let value = prefix_value(cx, &tokens);
                    if prefix.is_some() {
                        cx.error_spanned(&meta.path, "duplicate key `prefix`");
                    } else {
                        prefix = Some(Value { tokens, value });
                    }
                    Ok(())
                } else if meta.path.is_ident("accept_decimal") {
                    if accept_decimal.is_some() {
                        cx.error_spanned(&meta.path, "duplicate key `accept_decimal`");
                    }
                    if !meta.input.is_empty() && !meta.input.peek(syn::Token![,]) {
                        cx.error_spanned(
                            &meta.path,
                            "`accept_decimal` takes no value: write `#[snowflake(prefix = \"ord\", accept_decimal)]`",
                        );
                        skip_value(meta.input)?;
                    }
                    accept_decimal = Some(meta.path.clone());
                    Ok(())
                } else {
                    let key = meta.path.to_token_stream().to_string().replace(' ', "");
                    cx.error_spanned(
                        &meta.path,
                        format!("unknown key `{key}` in #[snowflake]; the known keys are: {SNOWFLAKE_KEYS}"),
                    );
                    skip_value(meta.input)
                }
            });
            if let Err(e) = result {
                cx.push(e);
            }
        }
    }
    if let (Some(path), None) = (&accept_decimal, &prefix) {
        cx.error_spanned(
            path,
            "`accept_decimal` is for a prefixed type moving from decimal text: add `prefix = \"...\"`, or remove it \
             (a type without a prefix reads decimal text already)",
        );
    }
    Attrs { layout, krate, decode_only, prefix, accept_decimal }
}

/// `prefix = "ord"`: a string that passes the TypeID rule (`snowflake_layout::check_prefix`).
fn prefix_value(cx: &Ctxt, tokens: &TokenStream) -> Option<String> {
    let Literal::Str(lit) = literal(tokens) else {
        cx.error_spanned(tokens, "expected `prefix = \"ord\"`: a string of lowercase ASCII letters and `_`");
        return None;
    };
    let text = lit.value();
    match snowflake_layout::check_prefix(&text) {
        Ok(()) => Some(text),
        Err(e) => {
            cx.error_spanned(&lit, format!("invalid prefix {text:?}: {e}"));
            None
        }
    }
}

/// `#[layout("time=42,worker=5,seq=16,epoch=2021-05-05")]`: the layout in the text form of
/// `Layout`'s `FromStr` and `Display`, read by the same parser, each key's value stored with
/// the string's tokens (errors point at the string). A key the parser refuses is reported
/// with its message, and no key is then reported missing.
fn parse_layout_text(cx: &Ctxt, layout: &mut LayoutAttr, text: &LitStr) {
    layout.text_form = true;
    let keys = match snowflake_layout::parse_keys(&text.value()) {
        Ok(keys) => keys,
        Err(e) => {
            cx.error_spanned(text, format!("{e}; e.g. #[layout(\"time=42,worker=5,seq=16,epoch=2021-05-05\")]"));
            return;
        }
    };
    let tokens = text.to_token_stream();
    fn slot<T: Copy>(given: Given<T>, tokens: &TokenStream) -> Option<Value<T>> {
        given.is_given().then(|| Value { tokens: tokens.clone(), value: given.value() })
    }
    layout.time = slot(keys.time, &tokens);
    layout.worker = slot(keys.worker, &tokens);
    layout.datacenter = slot(keys.datacenter, &tokens);
    layout.machine = slot(keys.machine, &tokens);
    layout.seq = slot(keys.seq, &tokens);
    layout.epoch = slot(keys.epoch, &tokens);
    layout.unit = slot(keys.unit, &tokens);
    layout.order = slot(keys.order, &tokens);
    layout.preset = slot(keys.preset, &tokens);
    layout.complete = keys.complete;
}

/// An example of a key with a value, for messages.
fn example(key: &str) -> String {
    match key {
        "time" => "time = 41".to_owned(),
        "worker" => "worker = 10".to_owned(),
        "datacenter" => "datacenter = 5".to_owned(),
        "machine" => "machine = 5".to_owned(),
        "seq" | "sequence" => "seq = 12".to_owned(),
        "epoch" => "epoch = \"2024-01-01\"".to_owned(),
        "unit" => "unit = \"1ms\"".to_owned(),
        "order" => "order = \"time-seq-worker\"".to_owned(),
        "preset" => "preset = \"twitter\"".to_owned(),
        "crate" => "crate = \"::typed_snowflake\"".to_owned(),
        "prefix" => "prefix = \"ord\"".to_owned(),
        other => format!("{other} = ..."),
    }
}

/// Consumes `= value` up to the next top-level comma.
fn take_value(input: ParseStream, key: &str) -> syn::Result<TokenStream> {
    input.parse::<syn::Token![=]>()?;
    let tokens = input.step(|cursor| {
        let mut rest = *cursor;
        let mut out = TokenStream::new();
        while let Some((tt, next)) = rest.token_tree() {
            if let TokenTree::Punct(p) = &tt
                && p.as_char() == ','
            {
                break;
            }
            out.extend([tt]);
            rest = next;
        }
        Ok((out, rest))
    })?;
    if tokens.is_empty() {
        return Err(input.error(format!("expected a value after `{key} =`, e.g. `{}`", example(key))));
    }
    Ok(tokens)
}

fn skip_value(input: ParseStream) -> syn::Result<()> {
    if input.peek(syn::Token![=]) {
        take_value(input, "")?;
    } else if input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in input);
        content.parse::<TokenStream>()?;
    }
    Ok(())
}

/// What a value's tokens say: an integer (possibly negated), a string, or something else.
enum Literal {
    Int { negative: bool, lit: syn::LitInt },
    Str(LitStr),
    Other,
}

fn literal(tokens: &TokenStream) -> Literal {
    let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
    let (negative, lit) = match trees.as_slice() {
        [TokenTree::Literal(lit)] => (false, lit.clone()),
        [TokenTree::Punct(minus), TokenTree::Literal(lit)] if minus.as_char() == '-' => (true, lit.clone()),
        // A value from a macro_rules expansion arrives wrapped in an invisible group.
        [TokenTree::Group(group)] if group.delimiter() == proc_macro2::Delimiter::None => {
            return literal(&group.stream());
        }
        _ => return Literal::Other,
    };
    match Lit::new(lit) {
        Lit::Int(lit) => Literal::Int { negative, lit },
        Lit::Str(lit) if !negative => Literal::Str(lit),
        _ => Literal::Other,
    }
}

fn parse_layout_key(cx: &Ctxt, layout: &mut LayoutAttr, path: &syn::Path, input: ParseStream) -> syn::Result<()> {
    let key = path.to_token_stream().to_string().replace(' ', "");
    if !input.peek(syn::Token![=]) {
        cx.error_spanned(path, format!("expected `{key} = value`, e.g. `{}`", example(&key)));
        // The key was given, only badly: it is not also missing.
        let tokens = path.to_token_stream();
        let slot = match key.as_str() {
            "time" => &mut layout.time,
            "worker" => &mut layout.worker,
            "datacenter" => &mut layout.datacenter,
            "machine" => &mut layout.machine,
            "seq" | "sequence" => &mut layout.seq,
            "epoch" => {
                store(&mut layout.epoch, None, &tokens);
                return skip_value(input);
            }
            "unit" => {
                store(&mut layout.unit, None, &tokens);
                return skip_value(input);
            }
            "order" => {
                store(&mut layout.order, None, &tokens);
                return skip_value(input);
            }
            "preset" => {
                store(&mut layout.preset, None, &tokens);
                return skip_value(input);
            }
            _ => return skip_value(input),
        };
        store(slot, None, &tokens);
        return skip_value(input);
    }
    let tokens = take_value(input, &key)?;
    let duplicate = match key.as_str() {
        "time" => store(&mut layout.time, width(cx, &key, &tokens), &tokens),
        "worker" => store(&mut layout.worker, width(cx, &key, &tokens), &tokens),
        "datacenter" => store(&mut layout.datacenter, width(cx, &key, &tokens), &tokens),
        "machine" => store(&mut layout.machine, width(cx, &key, &tokens), &tokens),
        "seq" => store(&mut layout.seq, width(cx, &key, &tokens), &tokens),
        "epoch" => store(&mut layout.epoch, epoch_value(cx, &tokens), &tokens),
        "unit" => store(&mut layout.unit, unit_value(cx, &tokens), &tokens),
        "order" => store(&mut layout.order, order_value(cx, &tokens), &tokens),
        "preset" => store(&mut layout.preset, preset_value(cx, &tokens), &tokens),
        "sequence" => {
            cx.error_spanned(path, "unknown key `sequence` in #[layout]; the sequence width is written `seq = N`");
            // Read it as `seq`, so the width is still checked and `seq` is not reported missing.
            store(&mut layout.seq, width(cx, "seq", &tokens), &tokens)
        }
        _ => {
            cx.error_spanned(path, format!("unknown key `{key}` in #[layout]; the known keys are: {LAYOUT_KEYS}"));
            false
        }
    };
    if duplicate {
        cx.error_spanned(path, format!("duplicate key `{key}` in #[layout]; give each key once"));
    }
    Ok(())
}

/// Stores a value unless the slot is taken; returns whether it was (a duplicate key).
fn store<T>(slot: &mut Option<Value<T>>, value: Option<T>, tokens: &TokenStream) -> bool {
    if slot.is_some() {
        return true;
    }
    *slot = Some(Value { tokens: tokens.clone(), value });
    false
}

fn width(cx: &Ctxt, key: &str, tokens: &TokenStream) -> Option<u32> {
    let Literal::Int { negative: false, lit } = literal(tokens) else {
        cx.error_spanned(
            tokens,
            format!("`{key}` is a width in bits: expected an integer from 0 to 64, e.g. `{key} = 12`"),
        );
        return None;
    };
    match lit.base10_parse::<u32>() {
        Ok(bits) if bits <= 64 => Some(bits),
        _ => {
            cx.error_spanned(
                &lit,
                format!("`{key} = {}` is wider than an ID: a width is at most 64 bits", lit.base10_digits()),
            );
            None
        }
    }
}

fn epoch_value(cx: &Ctxt, tokens: &TokenStream) -> Option<i64> {
    let expected = EPOCH_EXPECTED.get(Spelling::Attribute);
    // The rules are the text form's (`snowflake_layout::parse_epoch`): an integer is read as
    // its digits, a string as a date, an RFC 3339 instant or Unix milliseconds.
    let (text, span): (String, TokenStream) = match literal(tokens) {
        Literal::Int { negative, lit } => {
            if !matches!(lit.suffix(), "" | "i64" | "u64") {
                cx.error_spanned(&lit, "the epoch is Unix milliseconds: an integer without a suffix (or with i64)");
                return None;
            }
            match (negative, lit.base10_parse::<u64>()) {
                // `-0` is 0, the Unix epoch itself.
                (true, Ok(0)) => ("0".to_owned(), lit.to_token_stream()),
                (true, _) => (format!("-{}", lit.base10_digits()), tokens.clone()),
                (false, _) => (lit.base10_digits().to_owned(), lit.to_token_stream()),
            }
        }
        Literal::Str(lit) => {
            let text = lit.value();
            return match parse_epoch(&text) {
                Ok(ms) => Some(ms),
                // Text that is no epoch at all is followed by the forms an epoch may take.
                Err(EpochError::Unreadable { reason }) => {
                    cx.error_spanned(&lit, format!("{reason}; {expected}"));
                    None
                }
                Err(e) => {
                    cx.error_spanned(&lit, e);
                    None
                }
            };
        }
        Literal::Other => {
            cx.error_spanned(tokens, expected);
            return None;
        }
    };
    match parse_epoch(&text) {
        Ok(ms) => Some(ms),
        Err(e) => {
            cx.error_spanned(span, e);
            None
        }
    }
}

fn unit_value(cx: &Ctxt, tokens: &TokenStream) -> Option<TickUnit> {
    let unit = match literal(tokens) {
        Literal::Str(lit) => TickUnit::parse(&lit.value()),
        _ => None,
    };
    if unit.is_none() {
        cx.error_spanned(tokens, UNIT_EXPECTED.get(Spelling::Attribute));
    }
    unit
}

fn order_value(cx: &Ctxt, tokens: &TokenStream) -> Option<FieldOrder> {
    let order = match literal(tokens) {
        Literal::Str(lit) => FieldOrder::parse(&lit.value()),
        _ => None,
    };
    if order.is_none() {
        cx.error_spanned(tokens, ORDER_EXPECTED.get(Spelling::Attribute));
    }
    order
}

fn preset_value(cx: &Ctxt, tokens: &TokenStream) -> Option<&'static Preset> {
    let Literal::Str(lit) = literal(tokens) else {
        cx.error_spanned(
            tokens,
            format!("expected `preset = \"twitter\"`, a string; the presets are: {}", Preset::NAMES),
        );
        return None;
    };
    let preset = Preset::get(&lit.value());
    if preset.is_none() {
        cx.error_spanned(&lit, format!("unknown preset {:?}; the presets are: {}", lit.value(), Preset::NAMES));
    }
    preset
}
