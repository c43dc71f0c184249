//! The fields of an elicitation form, read from its `requestedSchema`: a flat object of
//! strings, numbers, integers, booleans, single-choice enums (`enum`, with legacy
//! `enumNames`, or `oneOf` of `{const, title}`) and multi-choice arrays (`items.enum` or
//! `items.anyOf`). Source: MCP 2026-07-28 elicitation, "Requested Schema"
//! (<https://modelcontextprotocol.io/specification/2026-07-28/client/elicitation>).

use std::fmt;

use serde_json::Value;
use tasks_core::JsonObject;

use crate::text::clean;

/// One question of the form.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Field {
    /// The property name (the key of the answer).
    pub(crate) name: String,
    /// What to show: the `title`, else the name.
    pub(crate) label: String,
    /// The `description`, if any.
    pub(crate) help: Option<String>,
    /// Listed in `required`.
    pub(crate) required: bool,
    /// The `default`, if any.
    pub(crate) default: Option<Value>,
    /// How to ask.
    pub(crate) kind: FieldKind,
}

/// How a field is asked.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FieldKind {
    /// Free text.
    Text,
    /// A whole number, within the bounds if given.
    Integer,
    /// A number, within the bounds if given.
    Number,
    /// Yes or no.
    Boolean,
    /// One of the choices.
    Choice(Vec<Choice>),
    /// Any of the choices.
    Choices(Vec<Choice>),
    /// Something a flat form cannot ask (a nested object, an array without choices, choices
    /// that are not strings): the reason.
    Unsupported(&'static str),
}

/// One allowed value and its title.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Choice {
    pub(crate) value: String,
    pub(crate) title: String,
}

impl fmt::Display for Choice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.title == self.value {
            f.write_str(&self.title)
        } else {
            write!(f, "{} ({})", self.title, clean(&self.value))
        }
    }
}

/// The choices of a schema: `enum` (titled by `enumNames` when given), or `oneOf`/`anyOf`
/// of `{const, title}`.
fn choices(schema: &Value) -> Option<Vec<Choice>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let names = schema.get("enumNames").and_then(Value::as_array);
        return Some(
            values
                .iter()
                .enumerate()
                .filter_map(|(i, value)| {
                    let value = value.as_str()?.to_owned();
                    let title = names
                        .and_then(|n| n.get(i))
                        .and_then(Value::as_str)
                        .map_or_else(|| clean(&value).into_owned(), |t| clean(t).into_owned());
                    Some(Choice { value, title })
                })
                .collect(),
        );
    }
    let options = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array)?;
    Some(
        options
            .iter()
            .filter_map(|option| {
                let value = option.get("const")?.as_str()?.to_owned();
                let title = option
                    .get("title")
                    .and_then(Value::as_str)
                    .map_or_else(|| clean(&value).into_owned(), |t| clean(t).into_owned());
                Some(Choice { value, title })
            })
            .collect(),
    )
}

/// Why the form cannot be asked here, if it cannot: a field of an [`FieldKind::Unsupported`]
/// kind, or a required field it does not describe.
pub(crate) fn unanswerable(requested_schema: &JsonObject, fields: &[Field]) -> Option<String> {
    if let Some(field) = fields.iter().find_map(|f| match f.kind {
        FieldKind::Unsupported(reason) => Some((f, reason)),
        _ => None,
    }) {
        return Some(format!("{} is {}", field.0.label, field.1));
    }
    let described = |name: &str| fields.iter().any(|f| f.name == name);
    let required = requested_schema.get("required");
    match required {
        None => None,
        Some(Value::Array(names)) => names
            .iter()
            .find(|name| !name.as_str().is_some_and(described))
            .map(|name| {
                format!(
                    "it requires {} but does not describe it",
                    clean(&name.to_string())
                )
            }),
        Some(_) => Some("its required list is not a list".into()),
    }
}

/// The form's fields, in property order.
pub(crate) fn fields(requested_schema: &JsonObject) -> Vec<Field> {
    let required: Vec<&str> = requested_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = requested_schema
        .get("properties")
        .and_then(Value::as_object)
    else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, schema)| {
            let kind = match schema.get("type").and_then(Value::as_str) {
                Some("boolean") => FieldKind::Boolean,
                Some("integer") => FieldKind::Integer,
                Some("number") => FieldKind::Number,
                Some("object") => FieldKind::Unsupported("a nested object"),
                Some("array") => match schema.get("items").and_then(choices) {
                    Some(options) if !options.is_empty() => FieldKind::Choices(options),
                    _ => FieldKind::Unsupported("a list without string choices"),
                },
                _ => match choices(schema) {
                    None => FieldKind::Text,
                    Some(options) if options.is_empty() => {
                        FieldKind::Unsupported("choices that are not strings")
                    }
                    Some(options) => FieldKind::Choice(options),
                },
            };
            Field {
                name: name.clone(),
                label: clean(schema.get("title").and_then(Value::as_str).unwrap_or(name))
                    .into_owned(),
                help: schema
                    .get("description")
                    .and_then(Value::as_str)
                    .map(|help| clean(help).into_owned()),
                required: required.contains(&name.as_str()),
                default: schema.get("default").cloned(),
                kind,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_field_kind_is_read() {
        let schema = json!({"type": "object", "required": ["confirm", "color"], "properties": {
            "confirm": {"type": "boolean", "title": "Delete it?", "default": false},
            "color": {"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"]},
            "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l"}]},
            "tags": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}},
            "age": {"type": "integer", "description": "In years"},
            "ratio": {"type": "number"},
            "name": {"type": "string"},
        }});
        let fields = fields(schema.as_object().expect("object"));
        let kinds: Vec<(&str, &FieldKind, bool)> = fields
            .iter()
            .map(|f| (f.name.as_str(), &f.kind, f.required))
            .collect();
        let choice = |value: &str, title: &str| Choice {
            value: value.into(),
            title: title.into(),
        };
        assert_eq!(
            kinds,
            [
                ("age", &FieldKind::Integer, false),
                (
                    "color",
                    &FieldKind::Choice(vec![choice("r", "Red"), choice("g", "Green")]),
                    true
                ),
                ("confirm", &FieldKind::Boolean, true),
                ("name", &FieldKind::Text, false),
                ("ratio", &FieldKind::Number, false),
                (
                    "size",
                    &FieldKind::Choice(vec![choice("s", "Small"), choice("l", "l")]),
                    false
                ),
                ("tags", &FieldKind::Choices(vec![choice("a", "A")]), false),
            ]
        );
        assert_eq!(fields[2].label, "Delete it?");
        assert_eq!(fields[2].default, Some(json!(false)));
        assert_eq!(fields[0].help.as_deref(), Some("In years"));
        assert_eq!(choice("s", "Small").to_string(), "Small (s)");
        assert_eq!(choice("l", "l").to_string(), "l");
        assert_eq!(
            unanswerable(schema.as_object().expect("object"), &fields),
            None
        );
    }

    #[test]
    fn forms_that_cannot_be_asked_say_why() {
        for (schema, reason) in [
            (
                json!({"properties": {}, "required": ["x"]}),
                "it requires \"x\" but does not describe it",
            ),
            (
                json!({"properties": {"o": {"type": "object"}}}),
                "o is a nested object",
            ),
            (
                json!({"properties": {"l": {"type": "array"}}}),
                "l is a list without string choices",
            ),
            (
                json!({"properties": {"e": {"type": "string", "enum": [1, 2]}}}),
                "e is choices that are not strings",
            ),
            (
                json!({"properties": {}, "required": 5}),
                "its required list is not a list",
            ),
        ] {
            let schema = schema.as_object().cloned().expect("object");
            assert_eq!(
                unanswerable(&schema, &fields(&schema)).as_deref(),
                Some(reason)
            );
        }
    }
}
