//! The login form: the admin token in a password field.

use maud::{html, Markup};

use crate::config::AdminConfig;

/// The form, with `problem` (a wrong token) above it.
pub(crate) fn page(config: &AdminConfig, problem: Option<&str>) -> Markup {
    let body = html! {
        @if let Some(problem) = problem { p.error { (problem) } }
        form.login method="post" action=(config.path("/login")) {
            label for="token" { "Admin token" }
            input #token type="password" name="token" autocomplete="current-password" required;
            button type="submit" { "Log in" }
        }
    };
    super::layout::page(config, "Log in", None, false, body)
}
