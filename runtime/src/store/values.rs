//! Values bound to queries: [`Arg`], [`Nullable`] and the columns both backends type alike.

use anyhow::Result;
use sqlx::any::{AnyArguments, AnyTypeInfo};
use sqlx::encode::{Encode, IsNull};
use sqlx::error::BoxDynError;
use sqlx::types::Type;
use sqlx::{Any, Database};

/// Where a query's arguments are encoded.
pub(super) type ArgumentBuffer = <Any as Database>::ArgumentBuffer;

/// An optional value to bind: the value, or SQL `NULL` typed like the value (see the module
/// documentation). `query.bind(Nullable(input.bid_amount))`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Nullable<T>(pub Option<T>);

/// A type whose values a column holds, and how its NULL is typed on the wire.
pub trait Column: Type<Any> {
    /// Encodes the value.
    fn encode_value(&self, buf: &mut ArgumentBuffer) -> Result<IsNull, BoxDynError>;
    /// Encodes SQL `NULL` with the type the values are sent with.
    fn encode_null(buf: &mut ArgumentBuffer) -> Result<IsNull, BoxDynError>;
}

/// Types whose `None` sqlx already sends with the type of their values.
macro_rules! column_typed_by_sqlx {
    ($($t:ty),*) => {$(
        impl Column for $t {
            fn encode_value(&self, buf: &mut ArgumentBuffer) -> Result<IsNull, BoxDynError> {
                Encode::<Any>::encode_by_ref(self, buf)
            }
            fn encode_null(buf: &mut ArgumentBuffer) -> Result<IsNull, BoxDynError> {
                Encode::<Any>::encode_by_ref(&None::<$t>, buf)
            }
        }
    )*};
}

column_typed_by_sqlx!(i64, String, &str);

impl Column for f64 {
    fn encode_value(&self, buf: &mut ArgumentBuffer) -> Result<IsNull, BoxDynError> {
        Encode::<Any>::encode_by_ref(self, buf)
    }
    /// sqlx 0.9's `Any` driver swaps the two float NULL kinds when it hands arguments to the
    /// backend (launchbadge/sqlx#4284): the NULL of an `f32` goes out as the `f64` NULL
    /// (`DOUBLE PRECISION`), the one an `f64` value has. `typed_nulls` in
    /// `tests/tests/every_operation.rs` checks this against PostgreSQL, so an sqlx that fixes the
    /// swap fails it instead of bringing the defect back.
    fn encode_null(buf: &mut ArgumentBuffer) -> Result<IsNull, BoxDynError> {
        Encode::<Any>::encode_by_ref(&None::<f32>, buf)
    }
}

impl<T: Column> Type<Any> for Nullable<T> {
    fn type_info() -> AnyTypeInfo {
        T::type_info()
    }
}

impl<T: Column> Encode<'_, Any> for Nullable<T> {
    fn encode_by_ref(&self, buf: &mut ArgumentBuffer) -> Result<IsNull, BoxDynError> {
        match &self.0 {
            Some(v) => v.encode_value(buf),
            None => T::encode_null(buf),
        }
    }
}

/// A value bound to a query whose filter is built at run time (see [`Store::page`]).
#[derive(Debug, Clone)]
pub enum Arg {
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Real(f64),
    /// Text, or SQL `NULL`.
    Text(Option<String>),
}

impl Arg {
    /// A text value (never `NULL`).
    pub fn text(value: impl Into<String>) -> Arg {
        Arg::Text(Some(value.into()))
    }
}

/// `sql` with `args` bound, `$1` first.
pub fn query<'q>(sql: &'static str, args: &'q [Arg]) -> sqlx::query::Query<'q, Any, AnyArguments> {
    bind_all(sqlx::query(sqlx::AssertSqlSafe(sql)), args)
}

/// Binds `args` to `q` in order (a `NULL` text as a typed `NULL`).
pub(crate) fn bind_all<'q>(
    mut q: sqlx::query::Query<'q, Any, AnyArguments>,
    args: impl IntoIterator<Item = &'q Arg>,
) -> sqlx::query::Query<'q, Any, AnyArguments> {
    for a in args {
        q = match a {
            Arg::Int(i) => q.bind(*i),
            Arg::Real(f) => q.bind(*f),
            Arg::Text(t) => q.bind(Nullable(t.as_deref())),
        };
    }
    q
}
