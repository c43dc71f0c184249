//! Typed questions: elicitation forms generated from Rust types, for
//!
//! The design notes are on [`Elicited`](crate::Elicited).

use std::any::TypeId;

use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::JsonSchema;
use serde_json::{Map, Value};

type Object = Map<String, Value>;

/// The schema generator of every schema made from a Rust type: JSON Schema 2020-12, as
/// schemars generates it for deserializing, with only standard `format`s
/// ([`StandardFormats`]). A typed tool's `inputSchema` and a form's `requestedSchema` both come
/// from it.
pub(crate) fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .for_deserialize()
        .with_transform(StandardFormats)
        .into_generator()
}

/// The `format`s JSON Schema 2020-12 defines (section 7.3 of its validation vocabulary).
const STANDARD_FORMATS: [&str; 19] = [
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// A schemars transform that drops every `format` JSON Schema 2020-12 does not define, such as
/// the `uint`, `int64` or `double` schemars gives Rust's number types: a client's validator
/// (ajv, which the TypeScript SDK uses) warns about each unknown one, and the bounds they stand
/// for are in the schema anyway (`minimum: 0` for unsigned types).
#[derive(Debug, Clone, Copy)]
pub(crate) struct StandardFormats;

impl schemars::transform::Transform for StandardFormats {
    fn transform(&mut self, schema: &mut schemars::Schema) {
        let standard = schema
            .get("format")
            .and_then(Value::as_str)
            .is_none_or(|format| STANDARD_FORMATS.contains(&format));
        if !standard {
            schema.remove("format");
        }
        schemars::transform::transform_subschemas(self, schema);
    }
}

/// A user's answer to a typed question ([`ToolContext::elicit_as`](crate::ToolContext::elicit_as)):
/// the schema's `ElicitResult` with its `content` deserialized.
///
/// # Forms from Rust types
///
/// Typed questions: elicitation forms generated from Rust types, for
/// [`ToolContext::elicit_as`](crate::ToolContext::elicit_as).
///
/// A tool declares each type it asks with [`Tool::asks`](crate::Tool::asks); the declaration
/// generates the form's `requestedSchema` from the type (schemars, with the generator settings
/// of [`Tool::typed`](crate::Tool::typed)'s `inputSchema`) and refuses, with a panic naming the
/// tool, the type and the property, a type the form cannot carry. So a type outside the subset
/// stops the server at start-up, when the tool is built, never a call.
///
/// MCP 2026-07-28 limits a form to a flat object of primitive properties
/// (<https://modelcontextprotocol.io/specification/2026-07-28/client/elicitation>, "Requested
/// Schema"; the schema's `ElicitRequestFormParams.requestedSchema` and
/// `PrimitiveSchemaDefinition`). The form type is a struct with named fields, each one of:
///
/// | field | form property |
/// |---|---|
/// | `String`, `char` (`#[schemars(length(min = …, max = …))]`, `#[schemars(email)]`, `#[schemars(url)]`) | `{"type": "string"}` with `minLength`, `maxLength`, and `format` when it is `date`, `date-time`, `email` or `uri` |
/// | an integer type (`#[schemars(range(min = …, max = …))]`) | `{"type": "integer"}` with `minimum`, `maximum` (the type's own bounds for `u8`, `i16`, …) |
/// | `f32`, `f64` | `{"type": "number"}` with `minimum`, `maximum` |
/// | `bool` | `{"type": "boolean"}` |
/// | an enum of unit variants | a single select: `{"type": "string", "enum": [...]}`, or `"oneOf": [{"const", "title"}, ...]` when a variant has a doc comment or a `#[schemars(title = …)]` (its title, else its doc comment, labels it; a variant with neither is labelled by its value) |
/// | `Vec`, `HashSet`, `BTreeSet` of such an enum (`#[schemars(length(min = …, max = …))]`) | a multi select: `{"type": "array", "items": {"type": "string", "enum": [...]}}` or `"items": {"anyOf": [{"const", "title"}, ...]}`, with `minItems`, `maxItems` |
/// | `Option` of any of these | the same property, not in `required` |
///
/// A field's doc comment becomes its `description` and `#[schemars(title = …)]` its `title`; a
/// `#[serde(default …)]` value its `default` (schemars writes one only for a type that is also
/// `Serialize`). serde's renames apply. Options keep the enum's order, except that schemars
/// lists the variants without a doc comment or title of an enum where others have one first:
/// label every variant, or none, to keep the declared order.
///
/// Left out of the form, because they only annotate or the type checks them itself: `$schema`,
/// the type's `title` and `description` (the question's `message` says what the form is for),
/// `"additionalProperties": false` (keys the form does not name are dropped from an answer
/// before it is deserialized), the `format` of numbers (`uint8`, `double`), string formats the
/// specification does not list (`uuid`, `ipv4`: deserializing the type still checks them),
/// `uniqueItems` (a set takes a repeated value once), a `null` default, and `examples`,
/// `deprecated`, `readOnly`, `writeOnly`, `$comment`.
///
/// Refused: nested objects (a struct field, a map), arrays of anything but a string enum
/// (`Vec<String>`, a `Vec` of structs), enums with data and other unions (`oneOf`/`anyOf` of
/// several schemas), unit and `serde_json::Value` fields, a type that is not a struct with
/// named fields (or that takes keys it does not name, such as a flattened map), and any
/// keyword the form does not allow (`pattern`, `exclusiveMinimum`, `multipleOf`, …; the page's
/// string example shows a `pattern`, but the schema's `StringSchema` has none).
///
/// Properties appear in the form in the order of the JSON object that carries them, which here
/// is by name (this workspace's `serde_json` keeps keys sorted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicited<T> {
    /// The user submitted the form: its content, checked against the form and deserialized.
    Accept(T),
    /// The user explicitly declined: never consent.
    Decline,
    /// The user dismissed the question without choosing: never consent.
    Cancel,
}

impl<T> Elicited<T> {
    /// The accepted content, or `None` for a decline or cancel.
    pub fn accepted(self) -> Option<T> {
        match self {
            Elicited::Accept(content) => Some(content),
            Elicited::Decline | Elicited::Cancel => None,
        }
    }
}

/// The string formats a form may name (the schema's `StringSchema.format`).
const STRING_FORMATS: [&str; 4] = ["date", "date-time", "email", "uri"];

/// Annotations a form does not carry; they constrain nothing, so they are left out.
const ANNOTATIONS: [&str; 5] = [
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// How deep `$ref`s may chain before a schema counts as one that refers to itself.
const MAX_REFERENCES: usize = 16;

/// What every refusal of a property's kind ends with.
const ONE_PROPERTY: &str = "a form property is a string, number, integer, boolean or string enum";

/// The refusal of a union (`keyword` is `oneOf`, `anyOf` or `allOf`).
fn union(keyword: &str) -> String {
    format!(
        "is one of several schemas (`{keyword}`, an enum with data or an untagged union); \
         {ONE_PROPERTY}"
    )
}

/// The refusal of a schema that takes anything (`true`, `{}`: `serde_json::Value`).
fn any_value() -> String {
    format!("takes any JSON value; {ONE_PROPERTY}")
}

/// The form types a tool declared ([`Tool::asks`](crate::Tool::asks)) and their forms.
#[derive(Debug, Clone, Default)]
pub(crate) struct Forms {
    declared: Vec<(TypeId, Value)>,
}

impl Forms {
    /// Declares `T` for the tool named `tool`.
    ///
    /// # Panics
    /// When `T` is outside the form subset (see [`Elicited`], "Forms from Rust types"), with
    /// `form type <T> of tool <tool> is not an MCP elicitation form: <reason> (…)`.
    pub(crate) fn declare<T: JsonSchema + 'static>(&mut self, tool: &str) {
        let form = form_schema::<T>().unwrap_or_else(|reason| {
            panic!(
                "form type {} of tool {tool} is not an MCP elicitation form: {reason} (a form is \
                 a flat struct of string, number, integer, boolean and string enum fields: \
                 https://modelcontextprotocol.io/specification/2026-07-28/client/elicitation)",
                std::any::type_name::<T>()
            )
        });
        let id = TypeId::of::<T>();
        self.declared.retain(|(declared, _)| *declared != id);
        self.declared.push((id, form));
    }

    /// The form of `T`, if the tool declared it.
    pub(crate) fn get<T: 'static>(&self) -> Option<&Value> {
        let id = TypeId::of::<T>();
        self.declared
            .iter()
            .find_map(|(declared, form)| (*declared == id).then_some(form))
    }
}

/// The form (`requestedSchema`) of `T`.
///
/// # Errors
/// Why `T` is outside the form subset, e.g. ``property `address` is an object; a form has no
/// nested objects``.
pub(crate) fn form_schema<T: JsonSchema>() -> Result<Value, String> {
    let schema = generator().into_root_schema_for::<T>().to_value();
    form_of(schema).map(Value::Object)
}

/// The form of a generated root schema (the module rules).
fn form_of(schema: Value) -> Result<Object, String> {
    const NOT_A_STRUCT: &str = "the form type must be a struct with named fields";
    let Value::Object(mut root) = schema else {
        return Err(format!("its schema is {schema}; {NOT_A_STRUCT}"));
    };
    let defs = match root.remove("$defs") {
        Some(Value::Object(defs)) => defs,
        _ => Object::new(),
    };
    match root.get("type") {
        Some(Value::String(kind)) if kind == "object" => {}
        Some(kind) => return Err(format!("its schema's type is {kind}; {NOT_A_STRUCT}")),
        None => return Err(format!("its schema has no type; {NOT_A_STRUCT}")),
    }
    let mut form = Object::new();
    form.insert("type".into(), Value::from("object"));
    let mut properties = Object::new();
    for (keyword, value) in root {
        match keyword.as_str() {
            "type" | "$schema" | "title" | "description" => {}
            "additionalProperties" if value == Value::Bool(false) => {}
            "additionalProperties" => {
                return Err(
                    "it takes keys it does not name (a map, or a flattened map); a form names \
                     each of its properties"
                        .to_owned(),
                )
            }
            "properties" => {
                let Value::Object(fields) = value else {
                    return Err(format!("its `properties` is not an object; {NOT_A_STRUCT}"));
                };
                for (name, schema) in fields {
                    let property = property(&schema, &defs)
                        .map_err(|reason| format!("property `{name}` {reason}"))?;
                    properties.insert(name, Value::Object(property));
                }
            }
            "required" => {
                form.insert(keyword, value);
            }
            _ if ANNOTATIONS.contains(&keyword.as_str()) => {}
            _ => return Err(format!("its top level has `{keyword}`; {NOT_A_STRUCT}")),
        }
    }
    form.insert("properties".into(), Value::Object(properties));
    Ok(form)
}

/// The kinds of property a form has.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    String,
    Integer,
    Number,
    Boolean,
}

/// One enum value a select offers, with its label if it has one.
struct Choice {
    value: String,
    label: Option<String>,
}

/// The form property of a field's schema.
fn property(schema: &Value, defs: &Object) -> Result<Object, String> {
    let mut schema = resolve(schema, defs, 0)?;
    if schema.get("default") == Some(&Value::Null) {
        schema.remove("default");
    }
    if let Some(choices) = choices(&schema, defs)? {
        return select(schema, &choices);
    }
    match schema.get("type") {
        Some(Value::String(kind)) => match kind.as_str() {
            "string" => primitive(schema, Kind::String),
            "integer" => primitive(schema, Kind::Integer),
            "number" => primitive(schema, Kind::Number),
            "boolean" => primitive(schema, Kind::Boolean),
            "array" => multi_select(schema, defs),
            "object" => Err("is an object; a form has no nested objects".to_owned()),
            "null" => Err(
                "is always null (a unit type); a form asks for strings, numbers, integers, \
                 booleans and string enums"
                    .to_owned(),
            ),
            other => Err(format!("has the unknown type {other:?}")),
        },
        Some(kinds) => Err(format!(
            "may be any of the types {kinds}; a form property has one type"
        )),
        None => Err(union_keyword(&schema).map_or_else(any_value, union)),
    }
}

/// The union keyword a schema has, if any.
fn union_keyword(schema: &Object) -> Option<&'static str> {
    ["oneOf", "anyOf", "allOf"]
        .into_iter()
        .find(|keyword| schema.contains_key(*keyword))
}

/// Whether `schema` is `{"type": "null"}` (the `None` of an `Option`).
fn is_null(schema: &Value) -> bool {
    schema.get("type") == Some(&Value::from("null")) && schema.as_object().map(Map::len) == Some(1)
}

/// `schema` as one object: a `$ref` to `$defs` replaced by the definition (the schema's own
/// keywords win, as an annotation beside a reference does), and an `Option`'s `null` left out
/// (`"type": ["string", "null"]`, `"anyOf": [{…}, {"type": "null"}]`).
fn resolve(schema: &Value, defs: &Object, depth: usize) -> Result<Object, String> {
    if depth > MAX_REFERENCES {
        return Err("refers to itself; a form has no nested objects".to_owned());
    }
    let Value::Object(schema) = schema else {
        return Err(any_value());
    };
    let mut schema = schema.clone();
    let mut base = Object::new();
    if let Some(reference) = schema.remove("$ref") {
        let target = reference
            .as_str()
            .and_then(|r| r.strip_prefix("#/$defs/"))
            .and_then(|name| defs.get(name))
            .ok_or_else(|| format!("refers to a schema the form cannot include ({reference})"))?;
        base = resolve(target, defs, depth + 1)?;
    }
    for keyword in ["anyOf", "oneOf"] {
        let optional = match schema.get(keyword) {
            Some(Value::Array(alternatives)) if alternatives.len() == 2 => alternatives
                .iter()
                .position(is_null)
                .map(|null| alternatives[1 - null].clone()),
            _ => None,
        };
        if let Some(inner) = optional {
            schema.remove(keyword);
            for (k, v) in resolve(&inner, defs, depth + 1)? {
                base.insert(k, v);
            }
        }
    }
    if let Some(Value::Array(kinds)) = schema.get("type") {
        let mut kinds: Vec<Value> = kinds
            .iter()
            .filter(|kind| *kind != &Value::from("null"))
            .cloned()
            .collect();
        let kind = if kinds.len() == 1 {
            kinds.remove(0)
        } else {
            Value::Array(kinds)
        };
        schema.insert("type".into(), kind);
    }
    for (keyword, value) in schema {
        base.insert(keyword, value);
    }
    Ok(base)
}

/// The choices of an enum schema (`enum`, `const`, or a `oneOf`/`anyOf` of string constants),
/// or `None` when `schema` is not an enum.
///
/// # Errors
/// An enum whose values are not all strings, and a union that is not one of string constants.
fn choices(schema: &Object, defs: &Object) -> Result<Option<Vec<Choice>>, String> {
    const NOT_STRINGS: &str = "is an enum with values that are not strings; a form's enums are \
                               of strings";
    if let Some(values) = schema.get("enum") {
        let values = values.as_array().map(Vec::as_slice).unwrap_or_default();
        let choices = values
            .iter()
            .map(|value| {
                value.as_str().map(|value| Choice {
                    value: value.to_owned(),
                    label: None,
                })
            })
            .collect::<Option<Vec<_>>>()
            .ok_or(NOT_STRINGS)?;
        return Ok(Some(choices));
    }
    if let Some(value) = schema.get("const") {
        let value = value.as_str().ok_or(NOT_STRINGS)?;
        let choice = Choice {
            value: value.to_owned(),
            label: None,
        };
        return Ok(Some(vec![choice]));
    }
    let Some(keyword) = ["oneOf", "anyOf"]
        .into_iter()
        .find(|keyword| schema.contains_key(*keyword))
    else {
        return Ok(None);
    };
    let union = || union(keyword);
    let alternatives = schema[keyword].as_array().ok_or_else(union)?;
    let mut choices = Vec::with_capacity(alternatives.len());
    for alternative in alternatives {
        // A documented variant is `{"const", "description"}`; schemars groups the others in
        // one `{"enum": [...]}`.
        let alternative = resolve(alternative, defs, 1).map_err(|_| union())?;
        let only_annotated = alternative.keys().all(|k| {
            matches!(
                k.as_str(),
                "const" | "enum" | "type" | "title" | "description"
            ) || ANNOTATIONS.contains(&k.as_str())
        });
        let typed = alternative
            .get("type")
            .is_none_or(|kind| kind == &Value::from("string"));
        let values = match (alternative.get("const"), alternative.get("enum")) {
            (Some(value), None) => vec![value],
            (None, Some(Value::Array(values))) => values.iter().collect(),
            _ => return Err(union()),
        };
        if !only_annotated || !typed || !values.iter().all(|v| v.is_string()) {
            return Err(union());
        }
        let label = ["title", "description"]
            .into_iter()
            .find_map(|k| alternative.get(k).and_then(Value::as_str))
            .filter(|_| values.len() == 1)
            .map(str::to_owned);
        choices.extend(
            values
                .into_iter()
                .filter_map(Value::as_str)
                .map(|value| Choice {
                    value: value.to_owned(),
                    label: label.clone(),
                }),
        );
    }
    Ok(Some(choices))
}

/// The options of a select: `{"enum": [...]}` when no choice has a label, else
/// `[{"const", "title"}, ...]` (a choice without a label is labelled by its value).
fn options(choices: &[Choice]) -> (bool, Value) {
    if choices.iter().all(|choice| choice.label.is_none()) {
        let values = choices.iter().map(|c| Value::from(c.value.as_str()));
        return (false, Value::Array(values.collect()));
    }
    let titled = choices.iter().map(|choice| {
        let mut option = Object::new();
        option.insert("const".into(), Value::from(choice.value.as_str()));
        let title = choice.label.as_deref().unwrap_or(&choice.value);
        option.insert("title".into(), Value::from(title));
        Value::Object(option)
    });
    (true, Value::Array(titled.collect()))
}

/// Copies the annotations every property may have (`title`, `description`) into `property`;
/// answers whether `keyword` was one of them or one left out.
fn common(keyword: &str, value: &Value, property: &mut Object) -> Result<bool, String> {
    match keyword {
        "title" | "description" => {
            if !value.is_string() {
                return Err(format!("has a `{keyword}` that is not a string"));
            }
            property.insert(keyword.to_owned(), value.clone());
            Ok(true)
        }
        _ => Ok(ANNOTATIONS.contains(&keyword)),
    }
}

fn not_allowed(keyword: &str) -> String {
    format!("has `{keyword}`, which a form does not allow")
}

/// A single select: `{"type": "string", "enum"|"oneOf", title?, description?, default?}`.
fn select(schema: Object, choices: &[Choice]) -> Result<Object, String> {
    let mut property = Object::new();
    property.insert("type".into(), Value::from("string"));
    let (titled, values) = options(choices);
    property.insert(if titled { "oneOf" } else { "enum" }.into(), values);
    for (keyword, value) in schema {
        if common(&keyword, &value, &mut property)? {
            continue;
        }
        match keyword.as_str() {
            "enum" | "const" | "oneOf" | "anyOf" => {}
            "type" if value == "string" => {}
            "default" => {
                let known = value
                    .as_str()
                    .is_some_and(|v| choices.iter().any(|c| c.value == v));
                if !known {
                    return Err("has a default that is not one of its values".to_owned());
                }
                property.insert(keyword, value);
            }
            _ => return Err(not_allowed(&keyword)),
        }
    }
    Ok(property)
}

/// A string, number, integer or boolean property.
fn primitive(schema: Object, kind: Kind) -> Result<Object, String> {
    let mut property = Object::new();
    for (keyword, value) in schema {
        if common(&keyword, &value, &mut property)? {
            continue;
        }
        match (keyword.as_str(), kind) {
            ("type", _) => {}
            ("default", _) => {
                let (fits, what) = match kind {
                    Kind::String => (value.is_string(), "a string"),
                    Kind::Integer => (value.is_i64() || value.is_u64(), "an integer"),
                    Kind::Number => (value.is_number(), "a number"),
                    Kind::Boolean => (value.is_boolean(), "a boolean"),
                };
                if !fits {
                    return Err(format!("has a default that is not {what}"));
                }
            }
            ("minLength" | "maxLength", Kind::String) if value.is_u64() => {}
            ("minimum" | "maximum", Kind::Integer | Kind::Number) if value.is_number() => {}
            ("format", Kind::String)
                if value.as_str().is_some_and(|f| STRING_FORMATS.contains(&f)) => {}
            // A string format the schema does not list (the type checks it when it
            // deserializes), or a number's `uint8`, `double`, …: left out.
            ("format", _) => continue,
            _ => return Err(not_allowed(&keyword)),
        }
        property.insert(keyword, value);
    }
    Ok(property)
}

/// A multi select: an array of a string enum's values, with `minItems` and `maxItems`.
fn multi_select(schema: Object, defs: &Object) -> Result<Object, String> {
    const ONLY_SELECTS: &str = "a form's only arrays are multi selects, of string enum values";
    let items = schema
        .get("items")
        .ok_or_else(|| format!("is an array of any JSON values; {ONLY_SELECTS}"))?;
    let items = resolve(items, defs, 1)?;
    let Some(choices) = choices(&items, defs).ok().flatten() else {
        let what = match items.get("type").and_then(Value::as_str) {
            Some("object") => "objects",
            Some("array") => "arrays",
            Some("string") => "strings",
            Some("integer") => "integers",
            Some("number") => "numbers",
            Some("boolean") => "booleans",
            _ => "values of several kinds",
        };
        return Err(format!("is an array of {what}; {ONLY_SELECTS}"));
    };
    let mut property = Object::new();
    property.insert("type".into(), Value::from("array"));
    let (titled, values) = options(&choices);
    let mut item = Object::new();
    if titled {
        item.insert("anyOf".into(), values);
    } else {
        item.insert("type".into(), Value::from("string"));
        item.insert("enum".into(), values);
    }
    property.insert("items".into(), Value::Object(item));
    for (keyword, value) in schema {
        if common(&keyword, &value, &mut property)? {
            continue;
        }
        match keyword.as_str() {
            "type" | "items" | "uniqueItems" => {}
            "minItems" | "maxItems" if value.is_u64() => {
                property.insert(keyword, value);
            }
            "default" => {
                let known = value.as_array().is_some_and(|values| {
                    values.iter().all(|v| {
                        v.as_str()
                            .is_some_and(|v| choices.iter().any(|c| c.value == v))
                    })
                });
                if !known {
                    return Err("has a default that is not a list of its values".to_owned());
                }
                property.insert(keyword, value);
            }
            _ => return Err(not_allowed(&keyword)),
        }
    }
    Ok(property)
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeSet, HashMap, HashSet};
    use std::net::Ipv4Addr;

    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    /// The form rules of the 2026-07-28 schema, made strict (`tests/data`).
    fn spec_validator() -> jsonschema::Validator {
        let rules: Value =
            serde_json::from_str(include_str!("../tests/data/elicit-form-2026-07-28.json"))
                .expect("the rules are JSON");
        jsonschema::validator_for(&rules).expect("the rules are a JSON Schema")
    }

    /// The form of `T`, checked against the specification's rules.
    fn form<T: JsonSchema>() -> Value {
        let form = form_schema::<T>().expect("a form type");
        let errors: Vec<String> = spec_validator()
            .iter_errors(&form)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{form:#}: {errors:?}");
        form
    }

    fn refusal<T: JsonSchema>() -> String {
        form_schema::<T>().expect_err("not a form type")
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    #[allow(dead_code)]
    enum Size {
        Small,
        Large,
    }

    /// Which plan (this doc comment describes the type, not a field).
    #[derive(Deserialize, JsonSchema, PartialEq, Eq, PartialOrd, Ord)]
    #[allow(dead_code)]
    enum Plan {
        /// The free plan
        Free,
        #[schemars(title = "Pro plan")]
        Pro,
        Team,
    }

    fn five() -> u32 {
        5
    }

    /// The whole form: this doc comment is left out (the question's message says it).
    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Everything {
        /// Your name.
        #[schemars(length(min = 1, max = 40))]
        full_name: String,
        #[schemars(email)]
        email: Option<String>,
        #[schemars(extend("format" = "date"))]
        start: String,
        #[schemars(url)]
        site: Option<String>,
        /// A format forms do not list: left out, the type checks it.
        address: Option<Ipv4Addr>,
        #[schemars(title = "Age", range(min = 18, max = 130))]
        age: u8,
        ratio: f64,
        #[serde(default = "five")]
        copies: u32,
        #[serde(default)]
        agree: bool,
        initial: char,
        size: Size,
        /// Your plan.
        plan: Option<Plan>,
        #[schemars(length(min = 1, max = 2))]
        sizes: Vec<Size>,
        #[serde(default)]
        plans: BTreeSet<Plan>,
        #[schemars(extend("examples" = ["x"], "deprecated" = true))]
        old: Option<String>,
    }

    #[test]
    fn a_flat_struct_of_primitives_and_enums_is_a_form() {
        // schemars lists the variants without a doc comment or title first (see `Elicited`).
        let titled = json!([
            {"const": "Team", "title": "Team"},
            {"const": "Free", "title": "The free plan"},
            {"const": "Pro", "title": "Pro plan"},
        ]);
        assert_eq!(
            form::<Everything>(),
            json!({
                "type": "object",
                "properties": {
                    "fullName": {"type": "string", "description": "Your name.",
                                 "minLength": 1, "maxLength": 40},
                    "email": {"type": "string", "format": "email"},
                    "start": {"type": "string", "format": "date"},
                    "site": {"type": "string", "format": "uri"},
                    "address": {"type": "string",
                                "description": "A format forms do not list: left out, the type checks it."},
                    "age": {"type": "integer", "title": "Age", "minimum": 18, "maximum": 130},
                    "ratio": {"type": "number"},
                    "copies": {"type": "integer", "minimum": 0, "default": 5},
                    "agree": {"type": "boolean", "default": false},
                    "initial": {"type": "string", "minLength": 1, "maxLength": 1},
                    "size": {"type": "string", "enum": ["small", "large"]},
                    "plan": {"type": "string", "description": "Your plan.", "oneOf": titled},
                    "sizes": {"type": "array", "minItems": 1, "maxItems": 2,
                              "items": {"type": "string", "enum": ["small", "large"]}},
                    // No default: schemars writes one only for a type it can serialize.
                    "plans": {"type": "array", "items": {"anyOf": titled}},
                    "old": {"type": "string"},
                },
                "required": ["fullName", "start", "age", "ratio", "initial", "size", "sizes"],
            })
        );
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Confirm {
        confirm: bool,
    }

    #[derive(Deserialize, JsonSchema)]
    struct Nothing {}

    #[test]
    fn the_smallest_forms() {
        // The fixture's `confirm_delete` question, as it was written by hand.
        assert_eq!(
            form::<Confirm>(),
            json!({"type": "object", "properties": {"confirm": {"type": "boolean"}},
                   "required": ["confirm"]})
        );
        // A form without fields: accept or decline only.
        assert_eq!(
            form::<Nothing>(),
            json!({"type": "object", "properties": {}})
        );
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Address {
        street: String,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Nested {
        name: String,
        address: Address,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct OptionalNested {
        address: Option<Address>,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Objects {
        stops: Vec<Address>,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Strings {
        tags: HashSet<String>,
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(untagged)]
    #[allow(dead_code)]
    enum Either {
        Text(String),
        Place(Address),
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Untagged {
        target: Either,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    enum Shape {
        Circle { radius: f64 },
        Square(f64),
        Dot,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct WithData {
        shape: Shape,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Labels {
        labels: HashMap<String, String>,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Flattened {
        name: String,
        #[serde(flatten)]
        rest: HashMap<String, String>,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Unit {
        nothing: (),
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Anything {
        raw: Value,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Pattern {
        #[schemars(regex(pattern = "^[a-z]+$"))]
        code: String,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Exclusive {
        #[schemars(extend("exclusiveMinimum" = 0))]
        share: f64,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Pair(String, u8);

    #[derive(Deserialize, JsonSchema)]
    struct Marker;

    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    #[allow(dead_code)]
    enum Numbers {
        One,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct BadDefault {
        #[serde(default = "five")]
        #[schemars(extend("type" = "string"))]
        count: u32,
    }

    const FLAT: &str = "a form property is a string, number, integer, boolean or string enum";
    const SELECTS: &str = "a form's only arrays are multi selects, of string enum values";
    const STRUCT: &str = "the form type must be a struct with named fields";

    #[test]
    fn a_type_outside_the_form_subset_is_refused_with_the_reason() {
        let cases = [
            (
                refusal::<Nested>(),
                "property `address` is an object; a form has no nested objects".to_owned(),
            ),
            (
                refusal::<OptionalNested>(),
                "property `address` is an object; a form has no nested objects".to_owned(),
            ),
            (
                refusal::<Labels>(),
                "property `labels` is an object; a form has no nested objects".to_owned(),
            ),
            (
                refusal::<Objects>(),
                format!("property `stops` is an array of objects; {SELECTS}"),
            ),
            (
                refusal::<Strings>(),
                format!("property `tags` is an array of strings; {SELECTS}"),
            ),
            (
                refusal::<Untagged>(),
                format!(
                    "property `target` is one of several schemas (`anyOf`, an enum with data or \
                     an untagged union); {FLAT}"
                ),
            ),
            (
                refusal::<WithData>(),
                format!(
                    "property `shape` is one of several schemas (`oneOf`, an enum with data or \
                     an untagged union); {FLAT}"
                ),
            ),
            (
                refusal::<Unit>(),
                "property `nothing` is always null (a unit type); a form asks for strings, \
                 numbers, integers, booleans and string enums"
                    .to_owned(),
            ),
            (
                refusal::<Anything>(),
                format!("property `raw` takes any JSON value; {FLAT}"),
            ),
            (
                refusal::<Pattern>(),
                "property `code` has `pattern`, which a form does not allow".to_owned(),
            ),
            (
                refusal::<Exclusive>(),
                "property `share` has `exclusiveMinimum`, which a form does not allow".to_owned(),
            ),
            (
                refusal::<BadDefault>(),
                "property `count` has a default that is not a string".to_owned(),
            ),
            (
                refusal::<HashMap<String, String>>(),
                "it takes keys it does not name (a map, or a flattened map); a form names each \
                 of its properties"
                    .to_owned(),
            ),
            (
                refusal::<Flattened>(),
                "it takes keys it does not name (a map, or a flattened map); a form names each \
                 of its properties"
                    .to_owned(),
            ),
            (
                refusal::<Pair>(),
                format!("its schema's type is \"array\"; {STRUCT}"),
            ),
            (
                refusal::<Marker>(),
                format!("its schema's type is \"null\"; {STRUCT}"),
            ),
            (
                refusal::<Numbers>(),
                format!("its schema's type is \"string\"; {STRUCT}"),
            ),
            (
                refusal::<Shape>(),
                format!("its schema has no type; {STRUCT}"),
            ),
            (
                refusal::<Value>(),
                format!("its schema has no type; {STRUCT}"),
            ),
        ];
        for (refused, expected) in cases {
            assert_eq!(refused, expected);
        }
    }

    #[test]
    #[should_panic(
        expected = "form type tasks_runtime::form::tests::Nested of tool book_trip is not an MCP \
                    elicitation form: property `address` is an object; a form has no nested \
                    objects (a form is a flat struct of string, number, integer, boolean and \
                    string enum fields: \
                    https://modelcontextprotocol.io/specification/2026-07-28/client/elicitation)"
    )]
    fn declaring_a_type_outside_the_subset_panics_naming_tool_type_and_property() {
        Forms::default().declare::<Nested>("book_trip");
    }

    #[test]
    fn declared_forms_are_found_by_type() {
        let mut forms = Forms::default();
        assert!(forms.get::<Confirm>().is_none());
        forms.declare::<Confirm>("t");
        forms.declare::<Everything>("t");
        forms.declare::<Confirm>("t");
        assert_eq!(forms.declared.len(), 2, "declaring twice keeps one");
        assert_eq!(forms.get::<Confirm>(), Some(&form::<Confirm>()));
        assert!(forms.get::<Nothing>().is_none());
    }
}
