//! The frame of every page: the stylesheet, the script, the navigation and the logout form.

use maud::{html, Markup, DOCTYPE};

use crate::config::AdminConfig;

/// A page titled `title` holding `body`; `csrf` (a browser session's) adds the logout
/// button; `refresh` asks the script to reload the page every 5 s.
pub(crate) fn page(
    config: &AdminConfig,
    title: &str,
    csrf: Option<&str>,
    refresh: bool,
    body: Markup,
) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · tasks admin" }
                link rel="stylesheet" href=(config.path("/assets/admin.css"));
                script src=(config.path("/assets/admin.js")) defer {}
            }
            body data-refresh=[refresh.then_some("5")] {
                header {
                    nav {
                        a href=(config.home()) { "Tasks" }
                        a href=(config.path("/nodes")) { "Nodes" }
                        @if let Some(csrf) = csrf {
                            form.logout method="post" action=(config.path("/logout")) {
                                input type="hidden" name=(crate::csrf::FIELD) value=(csrf);
                                button type="submit" { "Log out" }
                            }
                        }
                    }
                }
                main { h1 { (title) } (body) }
            }
        }
    }
}
