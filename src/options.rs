//! The numeric options of every component, each defined once as a [`Range`]: its serde name, its
//! default and the values it accepts. A component's `Default` reads its defaults from its ranges,
//! its `validate` checks values against them, and `tests/options_surface.rs` checks each range's
//! default and bounds against docs/api.md and the TypeScript types (`index.d.ts`). Options that
//! are not a plain number in a fixed range (booleans, enums, ranges that depend on another option)
//! are checked by their component.
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
}
