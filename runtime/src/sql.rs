//! Dynamic SQL for filters known only at run time: literal SQL pieces, `$N` placeholders
//! numbered as values are pushed, every value bound.

/// Dynamic SQL with `$N` placeholders and their values, for filters known only at run time.
#[derive(Debug, Default)]
pub struct Sql {
    /// The statement so far.
    pub text: String,
    /// Its values, `$1` first.
    pub args: Vec<Arg>,
}

/// A value bound to a placeholder: the store's one value type.
pub use crate::store::Arg;

impl Sql {
    /// A statement starting with `text` (which may hold `$N` placeholders of its own).
    pub fn new(text: &str) -> Sql {
        Sql { text: text.to_string(), args: Vec::new() }
    }

    /// Appends `text`, where `?` stands for the next value.
    pub fn push(&mut self, text: &str, value: Arg) -> &mut Sql {
        self.args.push(value);
        let n = self.args.len();
        self.text.push_str(&text.replacen('?', &format!("${n}"), 1));
        self
    }

    /// Appends `text` as it is.
    pub fn raw(&mut self, text: &str) -> &mut Sql {
        self.text.push_str(text);
        self
    }

    /// `column IN (…)` over `values`; an empty list matches nothing.
    pub fn push_in(&mut self, column: &str, values: &[String]) -> &mut Sql {
        if values.is_empty() {
            return self.raw(" 1 = 0");
        }
        self.raw(&format!(" {column} IN ("));
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                self.raw(", ");
            }
            self.push("?", Arg::text(v.as_str()));
        }
        self.raw(")")
    }

    /// The query with every value bound. The text is built only from this module's pieces and
    /// the caller's literal SQL; values are always bound, never spliced.
    pub fn query(&self) -> sqlx::query::Query<'_, sqlx::Any, sqlx::any::AnyArguments> {
        crate::store::bind_all(sqlx::query(sqlx::AssertSqlSafe(self.text.clone())), &self.args)
    }
}

/// `LIKE` pattern matching `text` anywhere, with `%`, `_` and `\` escaped (use `ESCAPE '\'`).
pub fn contains_pattern(text: &str) -> String {
    let escaped: String =
        text.chars().flat_map(|c| if matches!(c, '%' | '_' | '\\') { vec!['\\', c] } else { vec![c] }).collect();
    format!("%{}%", escaped.to_lowercase())
}
