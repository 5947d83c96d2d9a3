//! The tokens: consts, constructors, decoders, generation and trait impls. Bodies are
//! one-line calls into `::typed_snowflake::__private`, where the logic is unit-tested.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::DeriveInput;
use syn::spanned::Spanned;

use crate::ast::{self, Inner};
use crate::attr;
use snowflake_layout::{FieldOrder, Layout, TickUnit, format_rfc3339};

use crate::ctxt::Ctxt;
use crate::valid;

pub fn derive(input: &DeriveInput) -> TokenStream {
    let cx = Ctxt::default();
    let attrs = attr::parse(&cx, &input.attrs);
    let inner = ast::inner_type(&cx, input);
    let layout = valid::check(&cx, &input.ident, &attrs.layout, inner);
    if !attrs.decode_only {
        valid::check_dates(&cx, &attrs.layout, layout.as_ref());
    }
    // After a mistake (reported) the expansion is still emitted, with a placeholder layout
    // that fits either field, so the mistake does not cascade into errors at every use.
    let spec = layout.unwrap_or(PLACEHOLDER);
    let krate = attrs.krate.unwrap_or_else(|| syn::parse_quote!(::typed_snowflake));
    // A prefix that was refused (reported) still makes a prefixed type, so its `FromStr`
    // error type does not change under the caller's code.
    let text = match &attrs.prefix {
        Some(value) => Text::Prefixed {
            prefix: value.value.clone().unwrap_or_else(|| "invalid".to_owned()),
            accept_decimal: attrs.accept_decimal.is_some(),
        },
        None => Text::Decimal,
    };
    let expansion = inner.map(|inner| expand(input, inner, &spec, &krate, attrs.decode_only, &text));
    let errors = cx.into_error().map(|e| e.to_compile_error());
    quote! {
        #errors
        #expansion
    }
}

const PLACEHOLDER: Layout = match Layout::new(41, 10, 12, 0) {
    Ok(layout) => layout,
    Err(_) => panic!("the placeholder layout is valid"),
};

/// The type's text form: decimal digits, or `prefix_` and 13 base32 characters.
enum Text {
    Decimal,
    Prefixed { prefix: String, accept_decimal: bool },
}

fn doc(text: String) -> TokenStream {
    quote!(#[doc = #text])
}

fn expand(
    input: &DeriveInput,
    inner: Inner,
    spec: &Layout,
    krate: &syn::Path,
    decode_only: bool,
    text: &Text,
) -> TokenStream {
    let ident = &input.ident;
    let name = ident.to_string();
    let p = quote!(#krate::__private);
    let (time, worker, datacenter, seq) =
        (spec.time_bits(), spec.worker_bits(), spec.datacenter_bits(), spec.seq_bits());
    let (epoch_ms, unit, split) = (spec.epoch_ms(), spec.unit(), spec.is_split());
    let unit_variant = format_ident!(
        "{}",
        match unit {
            TickUnit::Millis => "Millis",
            TickUnit::TenMillis => "TenMillis",
            TickUnit::Seconds => "Seconds",
        }
    );
    let order_variant = format_ident!(
        "{}",
        match spec.order() {
            FieldOrder::WorkerAboveSeq => "WorkerAboveSeq",
            FieldOrder::SeqAboveWorker => "SeqAboveWorker",
        }
    );
    // Primitive type names by absolute path: a caller may declare a type named `u64` or `str`.
    let (i64, u64, u32, usize, f64, str) = (
        quote!(::core::primitive::i64),
        quote!(::core::primitive::u64),
        quote!(::core::primitive::u32),
        quote!(::core::primitive::usize),
        quote!(::core::primitive::f64),
        quote!(::core::primitive::str),
    );
    let (from_raw, to_raw, inner_ty) = match inner {
        Inner::I64 => (quote!(#p::raw_to_i64), quote!(#p::raw_from_i64), &i64),
        Inner::U64 => (quote!(#p::raw_to_u64), quote!(#p::raw_from_u64), &u64),
    };
    let unit_ms = unit.as_millis();
    let machine = worker - datacenter;

    let d_time = doc(format!("Width of the time field: {time} bits of {unit_ms} ms ticks."));
    let d_worker = doc(format!("Width of the node field: {worker} bits."));
    let d_seq = doc(format!("Width of the sequence field: {seq} bits."));
    let d_epoch = doc(format!("The epoch, in Unix milliseconds: {epoch_ms} ({}).", format_rfc3339(epoch_ms)));
    let last_ms = spec.max_timestamp_ms();
    let runs_out = format_rfc3339(last_ms);
    let d_max_timestamp = doc(format!("The last Unix millisecond the time field can hold: {last_ms} ({runs_out})."));
    let d_impl = doc(format!(
        "Layout: {time} bits of {unit_ms} ms ticks from {}, {worker} node bits, {seq} sequence bits. \
         The time field runs out on {runs_out}{}.",
        format_rfc3339(epoch_ms),
        if decode_only { "; this type only decodes (`#[snowflake(decode_only)]`) and has no generator" } else { "" },
    ));
    let d_text = match text {
        Text::Decimal => doc("Text form: decimal digits.".to_owned()),
        Text::Prefixed { prefix, .. } => doc(format!(
            "Text form (`Display`, `FromStr`, serde): `{prefix}_` and 13 lowercase base32 characters, \
             sorting as the IDs do; stored as the integer."
        )),
    };

    let split_items = split.then(|| {
        quote! {
            /// Width of the datacenter half of the node field.
            pub const DATACENTER_BITS: #u32 = #datacenter;
            /// Width of the machine half of the node field.
            pub const MACHINE_BITS: #u32 = #machine;
            /// Largest datacenter value.
            pub const MAX_DATACENTER: #u64 = (1u64 << #datacenter) - 1;
            /// Largest machine value.
            pub const MAX_MACHINE: #u64 = (1u64 << #machine) - 1;

            /// Encodes an ID from Unix milliseconds, the datacenter and machine halves of the
            /// node field, and a sequence number; a part out of range is an error.
            pub fn from_node_parts(
                unix_ms: #i64,
                datacenter: #u64,
                machine: #u64,
                seq: #u64,
            ) -> #p::Result<Self, #p::LayoutError> {
                #p::from_node_parts::<Self>(unix_ms, datacenter, machine, seq)
            }

            /// The datacenter half of the node field.
            pub const fn datacenter(&self) -> #u64 {
                self.worker() >> #machine
            }

            /// The machine half of the node field.
            pub const fn machine(&self) -> #u64 {
                self.worker() & Self::MAX_MACHINE
            }
        }
    });

    // A decode-only type has no generator: no inherent generation methods (nor the async
    // ones of feature `tokio`), and the trait's generation methods return
    // `GenerateError::DecodeOnly`.
    let generation_async = (!decode_only).then(|| quote!(#p::impl_tokio!(#ident);));
    let generation = (!decode_only).then(|| {
        quote! {
            /// The next ID from this type's generator. Panics only where
            /// [`Self::try_generate`] returns an error, with that error's message.
            #[inline]
            #[track_caller]
            pub fn generate() -> Self {
                #p::generate::<Self>()
            }

            /// The next ID from this type's generator, or why there is none (clock,
            /// worker ID, exhausted time field, high-water file).
            #[inline]
            pub fn try_generate() -> #p::Result<Self, #p::GenerateError> {
                #p::try_generate::<Self>()
            }

            /// `n` IDs in increasing order, taking a run of sequence numbers per atomic
            /// update; more than the registry's batch limit (default 100 000) is an
            /// immediate error.
            pub fn generate_batch(n: #usize) -> #p::Result<#p::Vec<Self>, #p::GenerateError> {
                #p::generate_batch::<Self>(n)
            }
        }
    });

    // A time field wider than 53 bits cannot give every tick its own score.
    let score_at = (time <= 53).then(|| {
        quote! {
            /// The Redis score of [`Self::first_at`]`(unix_ms)`: `ZRANGEBYSCORE key
            /// score_at(t0) (score_at(t1)` selects exactly the IDs from `t0` up to `t1`.
            pub const fn score_at(unix_ms: #i64) -> #f64 {
                #p::score_of(&Self::LAYOUT, Self::LAYOUT.first_at(unix_ms))
            }
        }
    });

    // The field really is the integer the derive read it as (a caller's own `struct i64`
    // is not): a type error here points at the field.
    let field_span = match &input.data {
        syn::Data::Struct(data) => data.fields.iter().next().map_or_else(Span::call_site, |f| f.ty.span()),
        _ => Span::call_site(),
    };
    let field_check = quote_spanned! {field_span=>
        const _: () = {
            let _ = |id: #ident| -> #inner_ty { id.0 };
        };
    };

    // `TryFrom<u64>` only for `u64` fields: beside `TryFrom<i64>` it would leave an untyped
    // literal (`OrderId::try_from(5)`) without an inferable type.
    let try_from_u64 = (inner == Inner::U64).then(|| {
        quote! {
            #[automatically_derived]
            impl #p::TryFrom<#u64> for #ident {
                type Error = #p::LayoutError;
                #[inline]
                fn try_from(raw: #u64) -> #p::Result<Self, #p::LayoutError> {
                    <Self as #p::SnowflakeId>::from_u64(raw)
                }
            }
        }
    });

    let text_items = text_items(ident, &p, text);
    let (trait_prefix, trait_accepts_decimal) = match text {
        Text::Decimal => (quote!(::core::option::Option::None), false),
        Text::Prefixed { prefix, accept_decimal } => (quote!(::core::option::Option::Some(#prefix)), *accept_decimal),
    };
    // A prefixed type's text is written into a buffer of exactly its length: the prefix, `_`
    // and 13 characters.
    let with_text = match text {
        Text::Decimal => quote!(),
        Text::Prefixed { prefix, .. } => {
            let len = prefix.len() + 14;
            quote! {
                #[inline]
                fn with_text<R>(&self, write: impl ::core::ops::FnOnce(&#str) -> R) -> R {
                    #p::prefixed_text::<#len, R>(#prefix, <Self as #p::SnowflakeId>::to_raw(self), write)
                }
            }
        }
    };

    quote! {
        #d_impl
        #[doc = ""]
        #d_text
        #[automatically_derived]
        impl #ident {
            #d_time
            pub const TIME_BITS: #u32 = #time;
            #d_worker
            pub const WORKER_BITS: #u32 = #worker;
            #d_seq
            pub const SEQ_BITS: #u32 = #seq;
            #d_epoch
            pub const EPOCH_MS: #i64 = #epoch_ms;
            /// The layout, as one value.
            pub const LAYOUT: #p::Layout =
                #p::Layout::build_or_panic(#time, #worker, #datacenter, #seq, #epoch_ms, #p::TickUnit::#unit_variant)
                    .with_order(#p::FieldOrder::#order_variant);
            /// Position of the lowest time bit.
            pub const TIME_SHIFT: #u32 = Self::LAYOUT.time_shift();
            /// Position of the lowest node bit.
            pub const WORKER_SHIFT: #u32 = Self::LAYOUT.worker_shift();
            /// Selects the time field in place.
            pub const TIME_MASK: #i64 = Self::LAYOUT.time_mask();
            /// Selects the node field in place: `(id.get() & WORKER_MASK) >> WORKER_SHIFT == id.worker()`.
            pub const WORKER_MASK: #i64 = Self::LAYOUT.worker_mask();
            /// Selects the sequence field.
            pub const SEQ_MASK: #i64 = Self::LAYOUT.seq_mask();
            /// Largest node value.
            pub const MAX_WORKER: #u64 = Self::LAYOUT.max_worker();
            /// Largest sequence value.
            pub const MAX_SEQ: #u64 = Self::LAYOUT.max_seq();
            #d_max_timestamp
            pub const MAX_TIMESTAMP_MS: #i64 = Self::LAYOUT.max_timestamp_ms();

            #split_items

            #generation

            /// Encodes an ID from Unix milliseconds, a node value and a sequence number; a
            /// part out of range (a time before the epoch or past `MAX_TIMESTAMP_MS`, a
            /// worker or sequence too wide) is an error.
            pub fn from_parts(unix_ms: #i64, worker: #u64, seq: #u64) -> #p::Result<Self, #p::LayoutError> {
                #p::from_parts::<Self>(unix_ms, worker, seq)
            }

            /// The raw value as an `i64`: non-negative for layouts of at most 63 bits; a 64-bit
            /// layout's IDs at or above 2^63 keep their bits and read as negative.
            pub const fn get(&self) -> #i64 {
                #to_raw(self.0)
            }

            /// Unix milliseconds at the start of the ID's tick.
            pub const fn timestamp_ms(&self) -> #i64 {
                Self::LAYOUT.timestamp_ms_of(self.get())
            }

            /// The node field (datacenter and machine together, for a split layout).
            pub const fn worker(&self) -> #u64 {
                Self::LAYOUT.worker_of(self.get())
            }

            /// The sequence number within the tick.
            pub const fn sequence(&self) -> #u64 {
                Self::LAYOUT.sequence_of(self.get())
            }

            /// Every field, decoded.
            pub const fn parts(&self) -> #p::Parts {
                Self::LAYOUT.parts_of(self.get())
            }

            /// The instant the ID's tick starts.
            pub fn timestamp(&self) -> #p::SystemTime {
                #p::system_time_of(self.timestamp_ms())
            }

            /// The smallest ID of the tick holding `at` (Unix milliseconds as an `i64`, a
            /// `SystemTime`, or a date type of an enabled feature), saturating at the
            /// layout's first and last tick: the lower bound of `WHERE id BETWEEN`.
            pub fn first_at(at: impl #p::IntoUnixMs) -> Self {
                Self(#from_raw(Self::LAYOUT.first_at(#p::IntoUnixMs::into_unix_ms(at))))
            }

            /// The largest ID of the tick holding `at`, saturating like
            /// [`Self::first_at`]: the upper bound of `WHERE id BETWEEN`.
            pub fn last_at(at: impl #p::IntoUnixMs) -> Self {
                Self(#from_raw(Self::LAYOUT.last_at(#p::IntoUnixMs::into_unix_ms(at))))
            }

            /// An exact, order-preserving Redis sorted-set score: the ID's top 53 used bits.
            pub const fn redis_score(&self) -> #f64 {
                #p::score_of(&Self::LAYOUT, self.get())
            }

            #score_at

            /// The ID as a zero-padded 19-digit decimal: the sorted-set member that keeps
            /// exact ID order among equal scores.
            pub fn redis_member(&self) -> #p::String {
                #p::member_of(self.get())
            }
        }

        #[automatically_derived]
        impl #p::SnowflakeId for #ident {
            const LAYOUT: #p::Layout = Self::LAYOUT;
            const NAME: &'static #str = #name;
            const PATH: &'static #str = ::core::concat!(::core::module_path!(), "::", #name);
            const DECODE_ONLY: ::core::primitive::bool = #decode_only;
            const PREFIX: ::core::option::Option<&'static #str> = #trait_prefix;
            const ACCEPTS_DECIMAL: ::core::primitive::bool = #trait_accepts_decimal;

            #[inline]
            fn to_raw(&self) -> #i64 {
                self.get()
            }

            #[inline]
            fn from_raw_unchecked(raw: #i64) -> Self {
                Self(#from_raw(raw))
            }

            #[inline]
            fn generator_slot() -> &'static #p::GeneratorSlot {
                static SLOT: #p::GeneratorSlot = #p::GeneratorSlot::new();
                &SLOT
            }

            #with_text
        }

        #[automatically_derived]
        impl #p::From<#ident> for #i64 {
            #[inline]
            fn from(id: #ident) -> #i64 {
                id.get()
            }
        }

        #[automatically_derived]
        impl #p::From<#ident> for #u64 {
            #[inline]
            fn from(id: #ident) -> #u64 {
                #p::raw_to_u64(id.get())
            }
        }

        #[automatically_derived]
        impl #p::TryFrom<#i64> for #ident {
            type Error = #p::LayoutError;
            #[inline]
            fn try_from(raw: #i64) -> #p::Result<Self, #p::LayoutError> {
                <Self as #p::SnowflakeId>::from_raw(raw)
            }
        }

        #try_from_u64

        #[automatically_derived]
        impl #p::Display for #ident {
            fn fmt(&self, f: &mut #p::Formatter<'_>) -> #p::FmtResult {
                #p::fmt(self, f)
            }
        }

        #text_items

        #p::impl_integrations!(#ident);
        #generation_async

        #field_check
    }
}

/// `FromStr`, and for a prefixed type its `PREFIX` const. `Debug` is the user's to derive
/// or write, as for every type: a prefix then drops into any derive list.
fn text_items(ident: &syn::Ident, p: &TokenStream, text: &Text) -> TokenStream {
    let str = quote!(::core::primitive::str);
    match text {
        Text::Decimal => quote! {
            #[automatically_derived]
            impl #p::FromStr for #ident {
                type Err = #p::ParseIdError;
                fn from_str(text: &#str) -> #p::Result<Self, #p::ParseIdError> {
                    <Self as #p::SnowflakeId>::parse_str(text)
                }
            }
        },
        Text::Prefixed { prefix, accept_decimal } => {
            let d_prefix = doc(format!(
                "The prefix of this type's text form: `{prefix}_` and 13 lowercase base32 characters{}.",
                if *accept_decimal { "; bare decimal text is read too (`accept_decimal`)" } else { "" }
            ));
            quote! {
                #[automatically_derived]
                impl #ident {
                    #d_prefix
                    pub const PREFIX: &'static #str = #prefix;
                }

                #[automatically_derived]
                impl #p::FromStr for #ident {
                    type Err = #p::PrefixedIdError;
                    fn from_str(text: &#str) -> #p::Result<Self, #p::PrefixedIdError> {
                        #p::parse_prefixed::<Self>(text)
                    }
                }
            }
        }
    }
}
