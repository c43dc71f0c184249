//! Tool arguments from the command line: `key=value` coerced by the tool's `inputSchema`,
//! `key:=json` taken as raw JSON, and a whole `--args '{…}'` object underneath; prompt
//! arguments (strings) the same way, checked against the prompt's argument list.

use serde_json::{json, Number, Value};
use tasks_core::JsonObject;

/// The JSON type a property declares (the first non-`null` one of a type list).
fn declared_type<'a>(schema: &'a JsonObject, key: &str) -> Option<&'a str> {
    let property = schema.get("properties")?.get(key)?;
    match property.get("type")? {
        Value::String(name) => Some(name),
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .find(|n| *n != "null"),
        _ => None,
    }
}

/// Reads `value` as the type `key` declares.
fn coerce(schema: &JsonObject, key: &str, value: &str) -> Result<Value, String> {
    let expect = |what: &str| format!("{key} must be {what} (got {value:?})");
    match declared_type(schema, key) {
        Some("integer") => value
            .trim()
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| expect("an integer")),
        Some("number") => {
            let trimmed = value.trim();
            if let Ok(whole) = trimmed.parse::<i64>() {
                return Ok(Value::from(whole));
            }
            trimmed
                .parse::<f64>()
                .ok()
                .and_then(Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| expect("a number"))
        }
        Some("boolean") => match value.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "y" | "1" | "on" => Ok(Value::Bool(true)),
            "false" | "no" | "n" | "0" | "off" => Ok(Value::Bool(false)),
            _ => Err(expect("true or false")),
        },
        Some(kind @ ("array" | "object")) => serde_json::from_str(value)
            .ok()
            .filter(|parsed: &Value| {
                if kind == "array" {
                    parsed.is_array()
                } else {
                    parsed.is_object()
                }
            })
            .ok_or_else(|| format!("{key} must be a JSON {kind}: write {key}:='<json>'")),
        _ => Ok(Value::String(value.to_owned())),
    }
}

/// Refuses `key` when the schema lists its properties, `key` is none of them, and the schema
/// does not take other keys (`additionalProperties` absent or `false`): a typo such as
/// `secnds=5` would otherwise reach the tool, which ignores it or refuses it.
fn check_known(schema: &JsonObject, key: &str, owner: &str) -> Result<(), String> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    let open = matches!(
        schema.get("additionalProperties"),
        Some(Value::Bool(true) | Value::Object(_))
    );
    if open || properties.contains_key(key) {
        return Ok(());
    }
    let known: Vec<&str> = properties.keys().map(String::as_str).collect();
    Err(if known.is_empty() {
        format!("unknown argument {key}: the {owner} takes none")
    } else {
        format!(
            "unknown argument {key}: the {owner} takes {}",
            known.join(", ")
        )
    })
}

/// The arguments object: `base` (from `--args`, a JSON object), then each `pair` in order
/// (a later one replaces an earlier one).
///
/// # Errors
/// A message naming the argument: a pair without `=`, an empty key, a key the schema does not
/// have ([`check_known`]), JSON that does not parse, or a value that is not of the declared
/// type.
pub(crate) fn arguments(
    base: Option<&str>,
    pairs: &[String],
    schema: &JsonObject,
) -> Result<JsonObject, String> {
    parse(base, pairs, schema, "tool")
}

/// The arguments of a prompt taking `names` (every value a string) from `key=value` pairs;
/// `required` names those it must have.
///
/// # Errors
/// As [`arguments`]; also a `key:=json` value that is not a JSON string, and a required
/// argument left out.
pub(crate) fn prompt_arguments(
    pairs: &[String],
    names: &[(&str, bool)],
) -> Result<JsonObject, String> {
    let properties: JsonObject = names
        .iter()
        .map(|(name, _)| ((*name).to_owned(), json!({"type": "string"})))
        .collect();
    let schema = json!({"type": "object", "properties": properties});
    let schema = schema.as_object().cloned().unwrap_or_default();
    let arguments = parse(None, pairs, &schema, "prompt")?;
    if let Some((name, _)) = arguments.iter().find(|(_, value)| !value.is_string()) {
        return Err(format!(
            "{name}: prompt arguments are text; write {name}=value"
        ));
    }
    let missing: Vec<&str> = names
        .iter()
        .filter(|(name, required)| *required && !arguments.contains_key(*name))
        .map(|(name, _)| *name)
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "the prompt needs {}: write {}",
            missing.join(", "),
            missing
                .iter()
                .map(|name| format!("{name}=…"))
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    Ok(arguments)
}

/// [`arguments`] of a tool or (`owner`) a prompt.
fn parse(
    base: Option<&str>,
    pairs: &[String],
    schema: &JsonObject,
    owner: &str,
) -> Result<JsonObject, String> {
    let mut arguments = match base {
        None => JsonObject::new(),
        Some(text) => match serde_json::from_str(text) {
            Ok(Value::Object(object)) => object,
            _ => return Err("--args must be a JSON object, e.g. --args '{\"seconds\": 5}'".into()),
        },
    };
    for pair in pairs {
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| format!("{pair:?}: write key=value or key:=json"))?;
        let (name, raw) = match key.strip_suffix(':') {
            Some(name) => (name, true),
            None => (key, false),
        };
        if name.is_empty() {
            return Err(format!("{pair:?}: the argument name is empty"));
        }
        check_known(schema, name, owner)?;
        let value = if raw {
            serde_json::from_str(value)
                .map_err(|_| format!("{name}:= needs JSON (got {value:?})"))?
        } else {
            coerce(schema, name, value)?
        };
        arguments.insert(name.to_owned(), value);
    }
    Ok(arguments)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_arguments_are_text_and_checked_against_the_prompt() {
        let names = [("arg1", true), ("mood", false)];
        let run = |pairs: &[&str]| {
            let pairs: Vec<String> = pairs.iter().map(|p| (*p).to_owned()).collect();
            prompt_arguments(&pairs, &names).map(Value::Object)
        };
        assert_eq!(
            run(&["arg1=60", "mood=a=b"]),
            Ok(json!({"arg1": "60", "mood": "a=b"}))
        );
        assert_eq!(run(&["arg1:=\"x\""]), Ok(json!({"arg1": "x"})));
        for (pairs, expected) in [
            (
                &["arg1=x", "nmae=y"][..],
                "unknown argument nmae: the prompt takes arg1, mood",
            ),
            (&["mood=x"][..], "the prompt needs arg1: write arg1=…"),
            (
                &["arg1:=5"][..],
                "arg1: prompt arguments are text; write arg1=value",
            ),
            (&["arg1"][..], "\"arg1\": write key=value or key:=json"),
        ] {
            assert_eq!(run(pairs), Err(expected.to_owned()), "{pairs:?}");
        }
        assert_eq!(
            prompt_arguments(&["x=1".to_owned()], &[]),
            Err("unknown argument x: the prompt takes none".to_owned())
        );
    }

    fn schema() -> JsonObject {
        json!({"type": "object", "properties": {
            "seconds": {"type": "number"},
            "count": {"type": ["integer", "null"]},
            "dry": {"type": "boolean"},
            "label": {"type": "string"},
            "tags": {"type": "array"},
        }})
        .as_object()
        .cloned()
        .expect("object")
    }

    fn run(base: Option<&str>, pairs: &[&str]) -> Result<Value, String> {
        let pairs: Vec<String> = pairs.iter().map(|p| (*p).to_owned()).collect();
        arguments(base, &pairs, &schema()).map(Value::Object)
    }

    #[test]
    fn values_take_the_declared_type() {
        assert_eq!(
            run(None, &["seconds=60", "count=3", "dry=yes", "label=60"]),
            Ok(json!({"seconds": 60, "count": 3, "dry": true, "label": "60"}))
        );
        assert_eq!(run(None, &["seconds=1.5"]), Ok(json!({"seconds": 1.5})));
        assert_eq!(
            run(None, &["label=a=b", "tags:=[1, \"x\"]"]),
            Ok(json!({"label": "a=b", "tags": [1, "x"]}))
        );
    }

    #[test]
    fn raw_json_and_a_base_object_combine() {
        assert_eq!(
            run(
                Some(r#"{"seconds": 5, "label": "x"}"#),
                &["seconds=6", "label:=null"]
            ),
            Ok(json!({"seconds": 6, "label": null}))
        );
    }

    #[test]
    fn mistakes_are_named() {
        for (pairs, expected) in [
            (
                &["seconds=soon"][..],
                "seconds must be a number (got \"soon\")",
            ),
            (&["count=1.5"][..], "count must be an integer (got \"1.5\")"),
            (
                &["dry=maybe"][..],
                "dry must be true or false (got \"maybe\")",
            ),
            (
                &["tags=a,b"][..],
                "tags must be a JSON array: write tags:='<json>'",
            ),
            (
                &["seconds"][..],
                "\"seconds\": write key=value or key:=json",
            ),
            (&["tags:={"][..], "tags:= needs JSON (got \"{\")"),
            (&["=1"][..], "\"=1\": the argument name is empty"),
        ] {
            assert_eq!(run(None, pairs), Err(expected.to_owned()), "{pairs:?}");
        }
        assert!(run(Some("[1]"), &[]).is_err());
    }

    #[test]
    fn a_key_the_schema_does_not_have_is_refused_unless_it_takes_others() {
        let unknown = "unknown argument secnds: the tool takes count, dry, label, seconds, tags";
        assert_eq!(run(None, &["secnds=5"]), Err(unknown.to_owned()));
        assert_eq!(run(None, &["secnds:=5"]), Err(unknown.to_owned()));
        let open = |extra: Value| {
            let mut schema = schema();
            schema.insert("additionalProperties".into(), extra);
            arguments(None, &["other=7".to_owned()], &schema).map(Value::Object)
        };
        assert_eq!(open(json!(true)), Ok(json!({"other": "7"})));
        assert_eq!(open(json!({"type": "string"})), Ok(json!({"other": "7"})));
        assert_eq!(
            open(json!(false)),
            Err(
                "unknown argument other: the tool takes count, dry, label, seconds, tags"
                    .to_owned()
            )
        );
        // A schema without properties says nothing about keys.
        let bare = json!({"type": "object"})
            .as_object()
            .cloned()
            .expect("object");
        assert_eq!(
            arguments(None, &["x=1".to_owned()], &bare).map(Value::Object),
            Ok(json!({"x": "1"}))
        );
    }
}
