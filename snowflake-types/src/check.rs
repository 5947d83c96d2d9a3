//! The start-up check: [`Registry::check`] resolves the worker ID, builds the generator of
//! every ID type it is given, and reports every problem at once in a [`CheckError`].

use std::fmt;

use crate::error::{Chain, GenerateError};
use crate::generator::Generator;
use crate::id::{self, SnowflakeId};
use crate::layout::Layout;
use crate::registry::{GeneratorSlot, Registry};

/// The ID types a [`Registry::check`] covers: one type implementing [`SnowflakeId`], or a
/// tuple of up to 12 of them (tuples nest, for more).
///
/// ```
/// use typed_snowflake::{IdTypes, SnowflakeId};
///
/// #[derive(SnowflakeId)]
/// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
/// struct OrderId(i64);
///
/// #[derive(SnowflakeId)]
/// #[layout(time = 41, worker = 10, seq = 12, epoch = "2020-01-01")]
/// struct CustomerId(i64);
///
/// fn types<T: IdTypes>() {}
/// types::<OrderId>();
/// types::<(OrderId, CustomerId)>();
/// types::<((OrderId,), CustomerId)>();
/// ```
pub trait IdTypes {
    /// Appends the types, in order.
    #[doc(hidden)]
    fn collect(into: &mut Vec<IdType>);
}

/// One ID type to check: what the registry needs to build its generator.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct IdType {
    layout: Layout,
    name: &'static str,
    slot: &'static GeneratorSlot,
    /// Builds the type's generator (keyed by its path; a decode-only type has none).
    generator: fn() -> Result<&'static Generator, GenerateError>,
}

impl<T: SnowflakeId> IdTypes for T {
    fn collect(into: &mut Vec<IdType>) {
        into.push(IdType {
            layout: T::LAYOUT,
            name: T::NAME,
            slot: T::generator_slot(),
            generator: id::generator_of::<T>,
        });
    }
}

macro_rules! tuples {
    ($($name:ident)+) => {
        impl<$($name: IdTypes),+> IdTypes for ($($name,)+) {
            fn collect(into: &mut Vec<IdType>) {
                $($name::collect(into);)+
            }
        }
    };
}
tuples!(A);
tuples!(A B);
tuples!(A B C);
tuples!(A B C D);
tuples!(A B C D E);
tuples!(A B C D E F);
tuples!(A B C D E F G);
tuples!(A B C D E F G H);
tuples!(A B C D E F G H I);
tuples!(A B C D E F G H I J);
tuples!(A B C D E F G H I J K);
tuples!(A B C D E F G H I J K L);

/// One problem the start-up check found.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Problem {
    /// The ID type it concerns; `None` for the configuration every type shares (the worker
    /// source, the environment, the lease, a failed `install()`).
    pub type_name: Option<&'static str>,
    /// What is wrong.
    pub error: GenerateError,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The causes too, each once (an I/O error's message, say): the report is read by a
        // person.
        let error = Chain(&self.error);
        match self.type_name {
            Some(name) => write!(f, "{name}: {error}"),
            None => write!(f, "configuration: {error}"),
        }
    }
}

/// Everything the start-up check found wrong, one [`Problem`] per line of its `Display`:
///
/// ```text
/// the start-up check found 2 problems:
///   - OrderId: worker ID 40 does not fit OrderId, whose layout holds 0..=31
///   - CustomerId: high-water file /var/lib/shop/shop.CustomerId-40.hwm: cannot be read: Is a directory (os error 21)
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckError {
    problems: Vec<Problem>,
}

impl CheckError {
    /// The problems, configuration first, then the types in the order they were given.
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.problems.len() {
            1 => f.write_str("the start-up check found a problem")?,
            n => write!(f, "the start-up check found {n} problems")?,
        }
        f.write_str(":")?;
        for problem in &self.problems {
            write!(f, "\n  - {problem}")?;
        }
        Ok(())
    }
}

impl std::error::Error for CheckError {}

impl Registry {
    /// The start-up check: call it once at start, after [`install()`](crate::RegistryBuilder::install)
    /// (or instead of it, to check the defaults), with every ID type the process generates.
    ///
    /// It fixes the configuration (resolving the worker ID, acquiring the lease the
    /// environment asks for), builds each type's generator (checking the worker ID against
    /// the type's worker field, reading its high-water file) and reads each one's clock
    /// against its layout, so that the first request does none of it. Every problem is
    /// reported at once in a [`CheckError`]: a worker ID too wide for a type, an environment
    /// value that is not a worker ID (`SNOWFLAKE_WORKER_ID=abc`), a lease that could not be
    /// acquired, an unreadable or corrupt high-water file, a clock before a type's epoch or
    /// past the end of its time field. A configuration that cannot be resolved is one
    /// problem for every type, reported once.
    ///
    /// Without `install()` first, the check takes the defaults, as a first generation
    /// would: `install()` is refused from then on. When no worker ID is configured and the
    /// environment leases one, the lease covers the narrowest worker field of the types
    /// given, so that every one of them fits; a `SNOWFLAKE_WORKER_SPACE` wider than that
    /// field is a configuration problem naming its value, the type and the field, found
    /// before anything is leased. A check that fails releases the lease it acquired from the
    /// environment (generation then fails with [`FenceReason::Released`](crate::FenceReason::Released));
    /// a lease the application installed stays the application's to release.
    ///
    /// ```
    /// use typed_snowflake::{Registry, SnowflakeId};
    ///
    /// #[derive(SnowflakeId)]
    /// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    /// struct OrderId(i64);
    ///
    /// #[derive(SnowflakeId)]
    /// #[layout(time = 41, worker = 10, seq = 12, epoch = "2020-01-01")]
    /// struct CustomerId(i64);
    ///
    /// Registry::builder().worker_id(7).install()?;
    /// Registry::check::<(OrderId, CustomerId)>()?;
    /// assert_eq!(OrderId::generate().worker(), 7);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn check<Types: IdTypes>() -> Result<(), CheckError> {
        let mut types = Vec::new();
        Types::collect(&mut types);
        // The same type twice is checked once.
        let mut seen: Vec<&'static GeneratorSlot> = Vec::with_capacity(types.len());
        types.retain(|t| {
            let first = !seen.iter().any(|slot| std::ptr::eq(*slot, t.slot));
            seen.push(t.slot);
            first
        });
        let Some(narrowest) = types.iter().min_by_key(|t| t.layout.max_worker()) else {
            return Ok(());
        };
        if let Err(error) = crate::registry::fix_config(&narrowest.layout, narrowest.name) {
            return Err(CheckError { problems: vec![Problem { type_name: None, error }] });
        }
        let mut problems = Vec::new();
        for t in types {
            let checked = (t.generator)().and_then(|generator| generator.check_clock());
            if let Err(error) = checked {
                problems.push(Problem { type_name: Some(t.name), error });
            }
        }
        if problems.is_empty() {
            return Ok(());
        }
        // The process will not serve: a lease the check took from the environment is freed
        // now rather than held for a TTL.
        crate::registry::release_lease_from_environment();
        Err(CheckError { problems })
    }
}
