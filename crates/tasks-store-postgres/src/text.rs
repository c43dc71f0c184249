//! PostgreSQL `text` cannot hold U+0000: strings that contain it are answered without asking
//! the server (no task can have such an id or scope here).

/// Whether `value` can be stored in a `text` column.
pub(crate) fn storable(value: &str) -> bool {
    !value.contains('\0')
}
