//! The options of every component, each defined once. A numeric option is a [`Range`]: its serde
//! name, its default and the values it accepts; a component's `Default` reads its defaults from
//! its ranges and its `validate` checks values against them. Every option, numeric or not, is
//! also a [`Doc`] row of its component's `DOCS` table (its TypeScript type, default, what it
//! accepts and what it does), from which `webrag surface` generates the option tables of
//! docs/api.md and the option interfaces of `index.d.ts` ([`Doc::markdown_rows`],
//! [`Doc::typescript_members`]); `tests/surface.rs` fails when the committed files are stale or a
//! serde field has no row. Options that are not a plain number in a fixed range (booleans, enums,
//! ranges that depend on another option) are checked by their component.
use crate::error::InputError;

/// One numeric option.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    /// The serde (camelCase) name, as in the page's options object.
    pub name: &'static str,
    /// The default.
    pub default: f64,
    /// The smallest accepted value.
    pub min: f64,
    /// The largest accepted value.
    pub max: f64,
}

impl Range {
    /// An option `name` with `default` that accepts `min..=max`.
    pub const fn new(name: &'static str, default: f64, min: f64, max: f64) -> Self {
        Range { name, default, min, max }
    }

    /// Checks `value`; `prefix` is the option's group as the error names it (`"graph."`).
    ///
    /// Errors: [`InputError::InvalidOption`] naming `{prefix}{name}`, with `"{value} is outside
    /// {min}..={max}"` (NaN is outside every range).
    pub fn check(&self, prefix: &str, value: f64) -> Result<(), InputError> {
        if (self.min..=self.max).contains(&value) {
            Ok(())
        } else {
            Err(InputError::InvalidOption {
                name: format!("{prefix}{}", self.name),
                reason: format!("{value} is outside {}..={}", self.min, self.max),
            })
        }
    }

    /// The default as a count.
    pub const fn count(&self) -> usize {
        self.default as usize
    }

    /// The default as an `f32`.
    pub const fn real(&self) -> f32 {
        self.default as f32
    }
}

/// Checks every `(range, value)` pair in order; the first value out of range is the error.
///
/// Errors: [`InputError::InvalidOption`] (see [`Range::check`]).
pub fn check_all(prefix: &str, pairs: &[(Range, f64)]) -> Result<(), InputError> {
    pairs.iter().try_for_each(|(r, v)| r.check(prefix, *v))
}

/// One option as the docs state it: a row of docs/api.md's table for its group, and a member of
/// the TypeScript interface for it.
#[derive(Debug, Clone, Copy)]
pub struct Doc {
    /// The serde (camelCase) name.
    pub name: &'static str,
    /// Its type, default and accepted values.
    pub value: Value,
    /// What it does, as a phrase in Markdown (the table's last column; the TypeScript comment
    /// capitalises it and ends it with a full stop).
    pub doc: &'static str,
}

/// An option's type, default and accepted values.
#[derive(Debug, Clone, Copy)]
pub enum Value {
    /// A number in a fixed range; default and range from the [`Range`].
    Number(Range),
    /// A number in a fixed range whose default is decided at run time, stated in words.
    NumberDefault(Range, &'static str),
    /// A boolean with its default.
    Flag(bool),
    /// Anything else: its TypeScript type, its default (`"required"`: a required member) and
    /// what it accepts, as the docs state them (Markdown).
    Other {
        /// The TypeScript type.
        ts: &'static str,
        /// The default, or `"required"`.
        default: &'static str,
        /// What it accepts.
        accepts: &'static str,
    },
    /// Options of their own, rows `name.member` of the same table and an inline object type.
    Group(&'static [Doc]),
    /// Options with a table of their own, typed by the named interface.
    Table {
        /// The TypeScript interface.
        ts: &'static str,
        /// Where the table is (`"below"`).
        default: &'static str,
    },
}

/// `x` as the docs write a number: integers with thousands separators, others as Rust prints them.
pub fn number(x: f64, separators: bool) -> String {
    if x.fract() != 0.0 || !separators || x.abs() < 10_000.0 {
        return x.to_string();
    }
    let digits = (x.abs() as u64).to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if x < 0.0 { format!("-{out}") } else { out }
}

impl Doc {
    /// An option `name` holding `value` that does `doc`.
    pub const fn new(name: &'static str, value: Value, doc: &'static str) -> Self {
        Doc { name, value, doc }
    }

    /// The docs' default column.
    fn default_text(&self, md: bool) -> String {
        match self.value {
            Value::Number(r) => number(r.default, md),
            Value::NumberDefault(_, d) | Value::Other { default: d, .. } | Value::Table { default: d, .. } => d.to_string(),
            Value::Flag(b) if md => format!("`{b}`"),
            Value::Flag(b) => b.to_string(),
            Value::Group(_) => String::new(),
        }
    }

    /// The docs' accepts column.
    fn accepts_text(&self, md: bool) -> String {
        match self.value {
            Value::Number(r) | Value::NumberDefault(r, _) => format!("{}..={}", number(r.min, md), number(r.max, md)),
            Value::Other { accepts, .. } => accepts.to_string(),
            Value::Flag(_) | Value::Group(_) | Value::Table { .. } => String::new(),
        }
    }

    /// The rows of docs/api.md's table for `docs` (`| \`name\` | default | accepts | meaning |`), a
    /// group's row followed by its members' as `name.member`; `prefix` is the group's path below the table.
    pub fn markdown_rows(docs: &[Doc], prefix: &str, out: &mut String) {
        for d in docs {
            let path = format!("{prefix}{}", d.name);
            match d.value {
                Value::Group(members) => {
                    out.push_str(&markdown_row(&[&format!("`{path}`"), "", "", d.doc]));
                    Doc::markdown_rows(members, &format!("{path}."), out)
                }
                _ => out.push_str(&markdown_row(&[&format!("`{path}`"), &d.default_text(true), &d.accepts_text(true), d.doc])),
            }
        }
    }

    /// The members of the TypeScript interface for `docs`, each after its doc comment (which
    /// states the default and the range), indented by `indent`.
    pub fn typescript_members(docs: &[Doc], indent: &str, out: &mut String) {
        for d in docs {
            let mut comment = capitalised(d.doc);
            if !comment.is_empty() && !comment.ends_with('.') {
                comment.push('.');
            }
            let (mut default, accepts) = (d.default_text(false), d.accepts_text(false));
            if default.replace(',', "").parse::<f64>().is_ok() {
                default = default.replace(',', ""); // a number in words, as the code writes it
            }
            if !default.is_empty() && default != "required" && !matches!(d.value, Value::Table { .. }) {
                comment.push_str(&format!(" Default {default}"));
                comment.push_str(if matches!(d.value, Value::Number(_) | Value::NumberDefault(..)) { "; " } else { "." });
            }
            if matches!(d.value, Value::Number(_) | Value::NumberDefault(..)) {
                comment.push_str(&format!("{accepts}."));
            }
            let optional = if default == "required" { "" } else { "?" };
            let comment = comment.replace("*/", "* /");
            match d.value {
                Value::Group(members) => {
                    out.push_str(&format!("{indent}/** {comment} */\n{indent}{}{optional}: {{\n", d.name));
                    Doc::typescript_members(members, &format!("{indent}  "), out);
                    out.push_str(&format!("{indent}}};\n"));
                }
                _ => {
                    let ts = match d.value {
                        Value::Number(_) | Value::NumberDefault(..) => "number",
                        Value::Flag(_) => "boolean",
                        Value::Other { ts, .. } | Value::Table { ts, .. } => ts,
                        Value::Group(_) => unreachable!("handled above"),
                    };
                    out.push_str(&format!("{indent}/** {comment} */ {}{optional}: {ts};\n", d.name));
                }
            }
        }
    }

    /// Every option of `docs` with its dotted path below them (`pgr.anchors`), groups' members
    /// included, tables left out.
    pub fn paths(docs: &[Doc], prefix: &str, out: &mut Vec<(String, Doc)>) {
        for d in docs {
            let path = format!("{prefix}{}", d.name);
            if let Value::Group(members) = d.value {
                Doc::paths(members, &format!("{path}."), out);
            }
            out.push((path, *d));
        }
    }
}

/// One Markdown table row of `cells` (an empty cell as `| |`), with its line end.
pub fn markdown_row(cells: &[&str]) -> String {
    let mut out = String::from("|");
    for c in cells {
        out.push_str(if c.is_empty() { " |" } else { " " });
        if !c.is_empty() {
            out.push_str(c);
            out.push_str(" |");
        }
    }
    out.push('\n');
    out
}

/// `s` with its first character upper-case.
pub fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_check_and_name_the_option() {
        let r = Range::new("rrfK", 60.0, 1.0, 1000.0);
        assert!(r.check("", 1.0).is_ok() && r.check("", 1000.0).is_ok());
        let e = r.check("graph.", 0.5).unwrap_err();
        assert_eq!(e, InputError::InvalidOption { name: "graph.rrfK".into(), reason: "0.5 is outside 1..=1000".into() });
        assert!(r.check("", f64::NAN).is_err());
        assert_eq!((r.count(), r.real()), (60, 60.0));
    }

    #[test]
    fn numbers_read_as_the_docs_write_them() {
        assert_eq!((number(8_388_608.0, true), number(8_388_608.0, false)), ("8,388,608".into(), "8388608".into()));
        assert_eq!((number(4096.0, true), number(0.25, true), number(10_000.0, true)), ("4096".into(), "0.25".into(), "10,000".into()));
    }

    #[test]
    fn a_doc_renders_as_a_table_row_and_a_typescript_member() {
        const INNER: &[Doc] = &[Doc::new("on", Value::Flag(true), "turns it on")];
        let docs = [
            Doc::new("k", Value::Number(Range::new("k", 10.0, 1.0, 1000.0)), "hits returned"),
            Doc::new("url", Value::Other { ts: "string", default: "required", accepts: "`http://`" }, "where"),
            Doc::new("inner", Value::Group(INNER), "inner options"),
        ];
        let mut md = String::new();
        Doc::markdown_rows(&docs, "", &mut md);
        assert_eq!(
            md,
            "| `k` | 10 | 1..=1000 | hits returned |\n| `url` | required | `http://` | where |\n| `inner` | | | inner options |\n| `inner.on` | `true` | | turns it on |\n"
        );
        let mut ts = String::new();
        Doc::typescript_members(&docs, "  ", &mut ts);
        assert_eq!(
            ts,
            "  /** Hits returned. Default 10; 1..=1000. */ k?: number;\n  /** Where. */ url: string;\n  /** Inner options. */\n  inner?: {\n    /** Turns it on. Default true. */ on?: boolean;\n  };\n"
        );
    }
}
