//! What a tool answers: a `CallToolResult` (MCP 2026-07-28 tools, "Tool Result":
//!
//! The design notes are on [`IntoToolResult`](crate::IntoToolResult).

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};
use tasks_core::JsonObject;

use crate::error::ToolError;

/// A `CallToolResult` with one text block: `{"content":[{"type":"text","text":…}],"isError":false}`
/// (<https://modelcontextprotocol.io/specification/2026-07-28/server/tools>).
pub fn text_result(text: impl Into<String>) -> Value {
    json!({"content": [{"type": "text", "text": text.into()}], "isError": false})
}

/// The `CallToolResult` of a tool's own failure, with one text block:
/// `{"content":[{"type":"text","text":…}],"isError":true}`. The model sees the text and may
/// try again differently; a task returning it ends `completed`, not `failed`
/// (<https://modelcontextprotocol.io/specification/2026-07-28/server/tools>, "Error
/// Handling"). `Err(ToolError::tool(text))` answers the same.
pub fn error_result(text: impl Into<String>) -> Value {
    Value::Object(error_object(text.into()))
}

/// [`error_result`] as an object.
pub(crate) fn error_object(text: String) -> JsonObject {
    tasks_core::plan::tool_error_result(text)
}

/// A structured result of type `T`: the `CallToolResult` carries the value as
/// `structuredContent` and, for clients that read only `content`, its compact JSON text as
/// one text block (the tools page: "a tool that returns structured content SHOULD also return
/// the serialized JSON in a TextContent block"). A [`Tool::typed`](crate::Tool::typed) tool
/// answering `Json<T>` lists the JSON Schema 2020-12 of `T` (as schemars generates it for
/// serializing) as its `outputSchema`, which the value conforms to.
///
/// ```
/// use schemars::JsonSchema;
/// use serde::Serialize;
/// use tasks_runtime::{IntoToolResult, Json};
///
/// #[derive(Serialize, JsonSchema)]
/// struct Stats {
///     words: usize,
/// }
///
/// let result = Json(Stats { words: 3 }).into_tool_result().unwrap();
/// assert_eq!(result["structuredContent"], serde_json::json!({"words": 3}));
/// assert_eq!(result["content"][0]["text"], "{\"words\":3}");
/// assert_eq!(Json::<Stats>::output_schema().unwrap()["required"], serde_json::json!(["words"]));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Json<T>(pub T);

/// A value a tool can answer with: what it becomes on the wire, and the `outputSchema` it
/// declares. Implemented for a whole `CallToolResult` ([`Value`], taken as it is), text
/// (`String`, `&str`: one text block), [`Json<T>`] (structured content), and `Result`s of
/// these whose error is a [`ToolError`] (or converts into one).
///
/// # Tool results
///
/// What a tool answers: a `CallToolResult` (MCP 2026-07-28 tools, "Tool Result":
/// <https://modelcontextprotocol.io/specification/2026-07-28/server/tools>), built from plain
/// text, a JSON value, or a typed, structured value ([`Json`]) whose JSON Schema the tool
/// lists as its `outputSchema` ("Output Schema" and "Structured Content" there).
///
/// A [`Tool::typed`](crate::Tool::typed) handler returns any [`IntoToolResult`]; a task's
/// stored result has the same shape as the synchronous one.
pub trait IntoToolResult {
    /// The `CallToolResult` object.
    ///
    /// # Errors
    /// A [`ToolError`] the value stands for, or -32603 when a [`Json`] value cannot be
    /// serialized (a map with non-string keys, a failing `Serialize` impl).
    fn into_tool_result(self) -> Result<Value, ToolError>;

    /// The `outputSchema` a tool answering this type lists, if any.
    fn output_schema() -> Option<JsonObject> {
        None
    }
}

impl IntoToolResult for Value {
    fn into_tool_result(self) -> Result<Value, ToolError> {
        Ok(self)
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<Value, ToolError> {
        Ok(text_result(self))
    }
}

impl IntoToolResult for &str {
    fn into_tool_result(self) -> Result<Value, ToolError> {
        Ok(text_result(self))
    }
}

impl<T: Serialize + JsonSchema> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> Result<Value, ToolError> {
        let internal = |_| ToolError::rpc(-32603, "Tool result could not be serialized");
        let structured = serde_json::to_value(&self.0).map_err(internal)?;
        let text = serde_json::to_string(&structured).map_err(internal)?;
        Ok(json!({
            "content": [{"type": "text", "text": text}],
            "structuredContent": structured,
            "isError": false,
        }))
    }

    fn output_schema() -> Option<JsonObject> {
        let mut schema = SchemaSettings::draft2020_12()
            .for_serialize()
            .with_transform(crate::form::StandardFormats)
            .into_generator()
            .into_root_schema_for::<T>();
        if schema.get("title").and_then(Value::as_str) == Some(&*T::schema_name()) {
            schema.remove("title");
        }
        match schema.to_value() {
            Value::Object(schema) => Some(schema),
            // `true`/`false` schemas: say "an object of any shape" rather than nothing.
            _ => Some(JsonObject::new()),
        }
    }
}

impl<R: IntoToolResult, E: Into<ToolError>> IntoToolResult for Result<R, E> {
    fn into_tool_result(self) -> Result<Value, ToolError> {
        self.map_err(Into::into)?.into_tool_result()
    }

    fn output_schema() -> Option<JsonObject> {
        R::output_schema()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, JsonSchema)]
    struct Point {
        /// Across.
        x: i32,
        y: Option<i32>,
    }

    #[test]
    fn text_and_values_keep_their_shapes() {
        assert_eq!("hi".into_tool_result().unwrap(), text_result("hi"));
        assert_eq!(
            String::from("hi").into_tool_result().unwrap(),
            text_result("hi")
        );
        let whole = json!({"content": [], "isError": true});
        assert_eq!(whole.clone().into_tool_result().unwrap(), whole);
        assert_eq!(<Value as IntoToolResult>::output_schema(), None);
        assert_eq!(<String as IntoToolResult>::output_schema(), None);
    }

    #[test]
    fn json_is_structured_content_with_a_text_copy_and_a_schema() {
        let result = Json(Point { x: 1, y: None }).into_tool_result().unwrap();
        assert_eq!(
            result,
            json!({"content": [{"type": "text", "text": "{\"x\":1,\"y\":null}"}],
                   "structuredContent": {"x": 1, "y": null}, "isError": false})
        );
        let schema = Json::<Point>::output_schema().unwrap();
        assert_eq!(schema["type"], json!("object"));
        assert_eq!(schema["required"], json!(["x", "y"]));
        assert_eq!(schema["properties"]["x"]["description"], json!("Across."));
        assert_eq!(schema.get("title"), None);
        // Any JSON value may be structured content (2026-07-28), a list too.
        let list = Json(vec![1, 2]).into_tool_result().unwrap();
        assert_eq!(list["structuredContent"], json!([1, 2]));
        assert_eq!(
            Json::<Vec<i32>>::output_schema().unwrap()["type"],
            json!("array")
        );
    }

    /// Counts and an address, with the formats schemars gives them.
    #[derive(Serialize, JsonSchema)]
    struct Counted {
        /// Nested, so the transform reaches subschemas.
        inner: Vec<Inner>,
        #[schemars(email)]
        contact: String,
    }

    #[derive(Serialize, JsonSchema)]
    struct Inner {
        words: usize,
        ratio: f64,
        big: i64,
    }

    #[test]
    fn schemas_keep_only_standard_formats_and_unsigned_bounds() {
        let schema = Value::Object(Json::<Counted>::output_schema().unwrap());
        let text = schema.to_string();
        for format in ["uint", "double", "int64"] {
            assert!(
                !text.contains(&format!("\"{format}\"")),
                "{format} left: {text}"
            );
        }
        assert_eq!(schema["properties"]["contact"]["format"], json!("email"));
        let inner = &schema["$defs"]["Inner"]["properties"];
        assert_eq!(inner["words"], json!({"type": "integer", "minimum": 0}));
        assert_eq!(inner["ratio"], json!({"type": "number"}));
    }

    #[test]
    fn results_carry_their_errors_and_their_schema() {
        let failed: Result<Json<Point>, ToolError> = Err(ToolError::tool("no point"));
        assert_eq!(failed.into_tool_result(), Err(ToolError::tool("no point")));
        assert_eq!(
            <Result<Json<Point>, ToolError> as IntoToolResult>::output_schema(),
            Json::<Point>::output_schema()
        );
        let io: Result<String, std::io::Error> = Err(std::io::Error::other("disk"));
        assert_eq!(io.into_tool_result(), Err(ToolError::tool("disk")));
    }

    #[test]
    fn a_value_that_cannot_be_serialized_is_an_internal_error() {
        #[derive(JsonSchema)]
        struct Broken;
        impl Serialize for Broken {
            fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
                Err(serde::ser::Error::custom("no"))
            }
        }
        let error = Json(Broken).into_tool_result().unwrap_err();
        assert_eq!(
            error,
            ToolError::rpc(-32603, "Tool result could not be serialized")
        );
    }
}
