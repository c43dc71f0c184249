//! The catalog a runtime hosts beside its tools: prompts, resources and resource templates
//! registered and removed at run time, each change announced
//! ([`crate::catalog`] has the rules of the requests it answers).

use std::sync::Arc;

use crate::catalog::{Catalog, Prompt, Resource, ResourceTemplate, Skill};
use crate::list_changes::ListKind;
use crate::runtime::TaskRuntime;

impl TaskRuntime {
    /// A snapshot of the catalog: a request sees the same prompts and resources from its start
    /// to its end, whatever changes meanwhile.
    pub fn catalog(&self) -> Arc<Catalog> {
        self.catalog.load_full()
    }

    /// Replaces the whole catalog (at start-up; announces nothing).
    pub fn set_catalog(&self, catalog: Catalog) {
        self.catalog.store(Arc::new(catalog));
    }

    /// Registers `prompt`, or replaces the prompt of the same name; announces
    /// `notifications/prompts/list_changed` when [`RuntimeConfig::list_changes`] is set.
    ///
    /// [`RuntimeConfig::list_changes`]: crate::RuntimeConfig::list_changes
    pub fn register_prompt(&self, prompt: Prompt) {
        self.change(ListKind::Prompts, |c| {
            c.add_prompt(prompt.clone());
            true
        });
    }

    /// Removes prompt `name`; whether it was there (announced as
    /// [`TaskRuntime::register_prompt`] does).
    pub fn remove_prompt(&self, name: &str) -> bool {
        self.change(ListKind::Prompts, |c| c.remove_prompt(name))
    }

    /// Registers `resource`, or replaces the resource of the same URI; announces
    /// `notifications/resources/list_changed` when list changes are announced.
    pub fn register_resource(&self, resource: Resource) {
        self.change(ListKind::Resources, |c| {
            c.add_resource(resource.clone());
            true
        });
    }

    /// Removes the resource of `uri`; whether it was there.
    pub fn remove_resource(&self, uri: &str) -> bool {
        self.change(ListKind::Resources, |c| c.remove_resource(uri))
    }

    /// Registers `template`, or replaces the template of the same text; announces
    /// `notifications/resources/list_changed` when list changes are announced.
    pub fn register_template(&self, template: ResourceTemplate) {
        self.change(ListKind::Resources, |c| {
            c.add_template(template.clone());
            true
        });
    }

    /// Removes the template `uri_template`; whether it was there.
    pub fn remove_template(&self, uri_template: &str) -> bool {
        self.change(ListKind::Resources, |c| c.remove_template(uri_template))
    }

    /// Registers `skill`, or replaces the skill of the same URI; its `SKILL.md` is in
    /// `resources/list`, so this announces `notifications/resources/list_changed` when list
    /// changes are announced.
    pub fn register_skill(&self, skill: Skill) {
        self.change(ListKind::Resources, |c| {
            c.add_skill(skill.clone());
            true
        });
    }

    /// Removes the skill whose `SKILL.md` is `uri`; whether it was there.
    pub fn remove_skill(&self, uri: &str) -> bool {
        self.change(ListKind::Resources, |c| c.remove_skill(uri))
    }

    /// Tells the clients subscribed to `uri` that its contents changed
    /// (`notifications/resources/updated`); returns how many streams were open, 0 when list
    /// changes are not announced at all.
    pub fn resource_updated(&self, uri: &str) -> usize {
        self.inner
            .config
            .list_changes
            .as_ref()
            .map_or(0, |changes| changes.resource_updated(uri))
    }

    /// Applies `edit` to a copy of the catalog and, when it changed something, stores the copy
    /// and announces `kind`.
    fn change(&self, kind: ListKind, edit: impl Fn(&mut Catalog) -> bool) -> bool {
        let mut changed = false;
        self.catalog.rcu(|catalog| {
            let mut catalog = Catalog::clone(catalog);
            changed = edit(&mut catalog);
            catalog
        });
        if changed {
            if let Some(changes) = &self.inner.config.list_changes {
                changes.announce(kind);
            }
        }
        changed
    }
}
