//! The result types of `index.d.ts` (`Hit`, `Stats`, `AskResult`, …), written from the Rust types
//! the worker serializes: each derives [`schemars::JsonSchema`] natively, so its JSON Schema (serde's
//! field names, which fields are skipped when empty, `null` for `None`, its doc comments) is
//! read here and rendered as TypeScript. A field the page adds in JavaScript is named in [`INDEX_ROOTS`]. `static.d.ts`'s
//! `Manifest` is written the same way from [`crate::snapshot::Manifest`].
//!
//! The rendering covers the schema forms these types produce: objects (interfaces, or inline
//! object types), `$ref`, `anyOf`/`oneOf` (unions), string `enum`/`const` (string literal unions),
//! arrays (`T[]`, a tuple for `prefixItems` or a fixed length up to 4), maps
//! (`Record<string, T>`), numbers of every width (`number`) and an empty schema (`unknown`).
use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{Map, Value};

use crate::snapshot::loader;

/// A member the page adds to a Rust result type in JavaScript: name, TypeScript type, meaning.
type Extra = (&'static str, &'static str, &'static str);

/// One result type of the page's API: its schema, and members the page adds.
struct Root {
    add: fn(&mut SchemaGenerator),
    extra: (&'static str, &'static [Extra]),
}

fn root<T: schemars::JsonSchema>(g: &mut SchemaGenerator) {
    g.subschema_for::<T>();
}

/// The result types the page's methods resolve to, and what the page adds to them.
const INDEX_ROOTS: &[Root] = &[
    Root { add: root::<crate::types::Hit>, extra: ("", &[]) },
    Root {
        add: root::<crate::types::Stats>,
        extra: ("Stats", &[("wasmMemoryBytes", "number", "The worker's wasm linear memory, in bytes (every loaded index lives there).")]),
    },
    Root { add: root::<crate::engine::SealReport>, extra: ("", &[]) },
    Root {
        add: root::<crate::types::AddReport>,
        extra: (
            "AddReport",
            &[(
                "persisted",
                "boolean | null",
                "Whether the origin's storage is persistent (`navigator.storage.persist()`, asked after the first add that stores something); null where the browser has no Storage API.",
            )],
        ),
    },
    Root { add: root::<crate::types::RemoveReport>, extra: ("", &[]) },
    Root { add: root::<crate::schema::DocumentRecord>, extra: ("", &[]) },
    Root { add: root::<crate::schema::ChunkRecord>, extra: ("", &[]) },
    Root { add: root::<crate::types::MemoryEntry>, extra: ("", &[]) },
    Root { add: root::<crate::schema::TraceRecord>, extra: ("", &[]) },
    Root { add: root::<crate::types::ProgressEvent>, extra: ("", &[]) },
    Root { add: root::<crate::ask::TraceEvent>, extra: ("", &[]) },
    Root { add: root::<crate::ask::Trajectory>, extra: ("", &[]) },
    Root { add: root::<crate::ask::pipeline::PipelineResult>, extra: ("", &[]) },
    Root { add: root::<crate::ask::ingest::EnrichReport>, extra: ("", &[]) },
    Root { add: root::<crate::graph::GraphSearch>, extra: ("", &[]) },
    Root { add: root::<crate::graph::MindMap>, extra: ("", &[]) },
    Root { add: root::<crate::embed::EmbedderInfo>, extra: ("", &[]) },
    Root { add: root::<crate::embed::gpu::KernelTimes>, extra: ("", &[]) },
];

/// What `webrag/static` reads of a snapshot.
const STATIC_ROOTS: &[Root] = &[Root { add: root::<crate::snapshot::Manifest>, extra: ("", &[]) }];

/// `index.d.ts`'s result types and the types they name, as TypeScript declarations, by name.
pub fn result_types() -> String {
    declarations(INDEX_ROOTS)
}

/// `static.d.ts`'s `Manifest` and the types it names.
pub fn manifest_types() -> String {
    declarations(STATIC_ROOTS)
}

/// What `webrag/static`'s methods resolve to, and the values of its options that take one of a few.
const LOADER_ROOTS: &[Root] = &[
    Root { add: root::<loader::StaticHit>, extra: ("", &[]) },
    Root { add: root::<loader::StaticGraphHit>, extra: ("", &[]) },
    Root { add: root::<loader::Fragment>, extra: ("", &[]) },
    Root { add: root::<loader::Excerpt>, extra: ("", &[]) },
    Root { add: root::<loader::StaticResult>, extra: ("", &[]) },
    Root { add: root::<loader::StaticMode>, extra: ("", &[]) },
    Root { add: root::<loader::StaticGrouping>, extra: ("", &[]) },
];

/// `static.d.ts`'s result types and the option values' unions.
pub fn loader_types() -> String {
    declarations(LOADER_ROOTS)
}

/// The values of a string enum, in declaration order (serde's names).
pub fn choices<T: schemars::JsonSchema>() -> Vec<String> {
    let schema = SchemaSettings::draft2020_12().for_serialize().into_generator().into_root_schema_for::<T>();
    string_variants(&schema.to_value()).unwrap_or_default().into_iter().map(|(v, _)| v).collect()
}

fn declarations(roots: &[Root]) -> String {
    let mut g = SchemaSettings::draft2020_12().for_serialize().into_generator();
    for r in roots {
        (r.add)(&mut g);
    }
    let defs = g.take_definitions(true);
    let mut names: Vec<&String> = defs.keys().collect();
    names.sort();
    let mut out = String::new();
    for name in names {
        let extra = roots.iter().find(|r| r.extra.0 == name).map(|r| r.extra.1).unwrap_or(&[]);
        declaration(name, &defs[name], extra, &mut out);
    }
    out
}

fn declaration(name: &str, schema: &Value, extra: &[Extra], out: &mut String) {
    comment(description(schema), "", out);
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        out.push_str(&format!("export interface {name} {{\n"));
        members(schema, props, "  ", out);
        for (field, ts, doc) in extra {
            comment(Some(doc), "  ", out);
            out.push_str(&format!("  {field}: {ts};\n"));
        }
        out.push_str("}\n");
    } else if let Some(variants) = string_variants(schema) {
        out.push_str(&format!("export type {name} =\n"));
        for (value, doc) in variants {
            comment(doc, "  ", out);
            out.push_str(&format!("  | '{value}'\n"));
        }
        out.pop();
        out.push_str(";\n");
    } else {
        out.push_str(&format!("export type {name} = {};\n", ts(schema, "")));
    }
}

/// The members of an object schema, each with its comment; `?` where the field may be absent.
fn members(schema: &Value, props: &Map<String, Value>, indent: &str, out: &mut String) {
    let required: Vec<&str> =
        schema.get("required").and_then(Value::as_array).map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    for (field, s) in props {
        comment(description(s), indent, out);
        // A field serde skips when empty is absent, never `null`.
        let (optional, ty) = match required.contains(&field.as_str()) {
            true => ("", ts(s, indent)),
            false => ("?", without_null(ts(s, indent))),
        };
        out.push_str(&format!("{indent}{field}{optional}: {ty};\n"));
    }
}

/// A union of string literals (a unit-variant enum): each value with its doc.
fn string_variants(schema: &Value) -> Option<Vec<(String, Option<&str>)>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values.iter().map(|v| v.as_str().map(|s| (s.to_string(), None))).collect();
    }
    let arms = schema.get("oneOf").or_else(|| schema.get("anyOf"))?.as_array()?;
    let mut out = Vec::new();
    for arm in arms {
        if let Some(c) = arm.get("const").and_then(Value::as_str) {
            out.push((c.to_string(), description(arm)));
        } else if let Some(values) = arm.get("enum").and_then(Value::as_array) {
            for v in values {
                out.push((v.as_str()?.to_string(), description(arm)));
            }
        } else {
            return None;
        }
    }
    Some(out)
}

/// The TypeScript type of a schema; nested object types are written inline at `indent`.
fn ts(schema: &Value, indent: &str) -> String {
    let Some(obj) = schema.as_object() else {
        return "unknown".into();
    };
    if let Some(r) = obj.get("$ref").and_then(Value::as_str) {
        return r.rsplit('/').next().unwrap_or(r).to_string();
    }
    if let Some(c) = obj.get("const") {
        return literal(c);
    }
    if let Some(values) = obj.get("enum").and_then(Value::as_array) {
        return values.iter().map(literal).collect::<Vec<_>>().join(" | ");
    }
    if let Some(arms) = obj.get("anyOf").or_else(|| obj.get("oneOf")).and_then(Value::as_array) {
        return union(arms.iter().map(|a| ts(a, indent)));
    }
    match obj.get("type") {
        Some(Value::Array(types)) => union(types.iter().map(|t| {
            let mut one = obj.clone();
            one.insert("type".into(), t.clone());
            ts(&Value::Object(one), indent)
        })),
        Some(Value::String(t)) => match t.as_str() {
            "string" => "string".into(),
            "integer" | "number" => "number".into(),
            "boolean" => "boolean".into(),
            "null" => "null".into(),
            "array" => array(obj, indent),
            "object" => object(schema, indent),
            _ => "unknown".into(),
        },
        _ => "unknown".into(),
    }
}

/// A Rust path without its modules (`crate::a::Foo::bar` → `Foo::bar`, `crate::index::ann` →
/// `ann`); other code as it is.
fn unqualified(code: &str) -> &str {
    if code.contains(char::is_whitespace) || !code.contains("::") {
        return code;
    }
    let mut rest = code;
    while let Some((module, tail)) = rest.split_once("::") {
        if !module.starts_with(|c: char| c.is_ascii_lowercase()) {
            break;
        }
        rest = tail;
    }
    rest
}

fn without_null(ty: String) -> String {
    match ty.strip_suffix(" | null") {
        Some(t) => t.to_string(),
        None => ty,
    }
}

fn union(arms: impl Iterator<Item = String>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for a in arms {
        if !seen.contains(&a) {
            seen.push(a);
        }
    }
    seen.join(" | ")
}

fn literal(v: &Value) -> String {
    match v {
        Value::String(s) => format!("'{s}'"),
        other => other.to_string(),
    }
}

fn array(obj: &Map<String, Value>, indent: &str) -> String {
    if let Some(items) = obj.get("prefixItems").and_then(Value::as_array) {
        return format!("[{}]", items.iter().map(|i| ts(i, indent)).collect::<Vec<_>>().join(", "));
    }
    let item = obj.get("items").map(|i| ts(i, indent)).unwrap_or_else(|| "unknown".into());
    let (min, max) = (obj.get("minItems").and_then(Value::as_u64), obj.get("maxItems").and_then(Value::as_u64));
    match (min, max) {
        (Some(n), Some(m)) if n == m && (1..=4).contains(&n) => format!("[{}]", vec![item; n as usize].join(", ")),
        _ if item.contains(' ') => format!("({item})[]"),
        _ => format!("{item}[]"),
    }
}

fn object(schema: &Value, indent: &str) -> String {
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        let inner = format!("{indent}  ");
        let mut out = String::from("{\n");
        members(schema, props, &inner, &mut out);
        out.push_str(indent);
        out.push('}');
        return out;
    }
    match schema.get("additionalProperties") {
        Some(v @ Value::Object(_)) => format!("Record<string, {}>", ts(v, indent)),
        _ => "Record<string, unknown>".into(),
    }
}

fn description(schema: &Value) -> Option<&str> {
    schema.get("description").and_then(Value::as_str).filter(|d| !d.is_empty())
}

/// A doc comment in the page's terms, wrapped at 100 columns: rustdoc's links (`` [`Foo`] ``,
/// `` [`Foo`](path) ``) as plain code spans without their module path (`` `crate::a::Foo` `` →
/// `` `Foo` ``), and `` `None` `` as `null`.
fn comment(doc: Option<&str>, indent: &str, out: &mut String) {
    let Some(doc) = doc else { return };
    let doc = doc.replace("`None`", "null");
    let mut text = String::new();
    let mut rest = doc.as_str();
    while let Some(i) = rest.find('`') {
        let open = if rest[..i].ends_with('[') { i - 1 } else { i };
        text.push_str(&rest[..open]);
        let Some(j) = rest[i + 1..].find('`') else {
            rest = &rest[open..];
            break;
        };
        let code = &rest[i + 1..i + 1 + j];
        text.push('`');
        text.push_str(unqualified(code));
        text.push('`');
        rest = &rest[i + j + 2..];
        if open == i {
            continue;
        }
        if let Some(after) = rest.strip_prefix(']') {
            rest = after;
            if rest.starts_with('(')
                && let Some(k) = rest.find(')')
            {
                rest = &rest[k + 1..];
            }
        }
    }
    text.push_str(rest);
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let one = format!("{indent}/** {text} */");
    if one.chars().count() <= 100 {
        out.push_str(&one);
        out.push('\n');
        return;
    }
    out.push_str(&format!("{indent}/**\n"));
    let mut line = format!("{indent} *");
    for word in text.split(' ') {
        if line.chars().count() + 1 + word.chars().count() > 100 && line.trim() != "*" {
            out.push_str(&line);
            out.push('\n');
            line = format!("{indent} *");
        }
        line.push(' ');
        line.push_str(word);
    }
    out.push_str(&line);
    out.push_str(&format!("\n{indent} */\n"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_paths_and_none_read_in_the_page_s_terms() {
        assert_eq!(unqualified("crate::a::Foo::bar"), "Foo::bar");
        assert_eq!(unqualified("crate::index::ann"), "ann");
        assert_eq!(unqualified("navigator.storage.persist()"), "navigator.storage.persist()");
        let mut out = String::new();
        comment(Some("See [`Hit::sections`] and [`x`](crate::y::X); `None` without."), "", &mut out);
        assert_eq!(out, "/** See `Hit::sections` and `x`; null without. */\n");
    }

    #[test]
    fn a_field_serde_skips_is_optional_and_never_null() {
        let types = result_types();
        assert!(types.contains("  atomic?: number;\n"), "{types}");
        assert!(types.contains("  bm25: number | null;\n"), "{types}");
        assert!(types.contains("export type Route =\n"), "{types}");
    }
}
