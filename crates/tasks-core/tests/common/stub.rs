//! A server view with one tool, `t`, for planner tests: its policy is the view's, it needs no
//! client capability, and arguments holding a `bad` key fail its schema.

use tasks_core::input::ClientCapability;
use tasks_core::plan::ParamHeader;
use tasks_core::plan::ServerView;
use tasks_core::plan::StateKey;
use tasks_core::plan::ToolRules;
use tasks_core::{Feature, JsonObject, TaskPolicy};

/// The tool `t`, with task policy `.0`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct StubTool(pub(crate) TaskPolicy);

impl ToolRules for StubTool {
    fn param_headers(&self) -> &[ParamHeader] {
        &[]
    }
    fn policy_for(&self, _params: &JsonObject) -> TaskPolicy {
        self.0
    }
    fn fixed_policy(&self) -> Option<TaskPolicy> {
        Some(self.0)
    }
    fn client_needs(&self) -> &[ClientCapability] {
        &[]
    }
    fn validate_arguments(&self, arguments: &JsonObject) -> Result<(), String> {
        if arguments.contains_key("bad") {
            Err("Invalid arguments at /bad".into())
        } else {
            Ok(())
        }
    }
}

/// A server with the one tool `t`, a `requestState` key, and the features it offers (none
/// unless set).
pub(crate) struct StubView {
    pub(crate) tool: StubTool,
    pub(crate) key: StateKey,
    pub(crate) features: Vec<Feature>,
}

impl StubView {
    /// `t` with `policy`, and a key of `key_byte`s.
    pub(crate) fn new(policy: TaskPolicy, key_byte: u8) -> Self {
        StubView {
            tool: StubTool(policy),
            key: StateKey::from_bytes([key_byte; 32]),
            features: Vec::new(),
        }
    }

    /// The view offering prompts and resources too (not completion: its methods stay -32601).
    #[allow(dead_code)] // not every test binary uses each constructor
    pub(crate) fn with_prompts_and_resources(mut self) -> Self {
        self.features = vec![Feature::Prompts, Feature::Resources];
        self
    }

    /// The view offering every feature.
    #[allow(dead_code)] // not every test binary uses each constructor
    pub(crate) fn with_all_features(mut self) -> Self {
        self.features = vec![
            Feature::Prompts,
            Feature::Resources,
            Feature::Completions,
            Feature::Skills,
        ];
        self
    }
}

impl ServerView for StubView {
    type Tool = StubTool;

    fn tool(&self, name: &str) -> Option<StubTool> {
        (name == "t").then_some(self.tool)
    }
    fn state_key(&self) -> &StateKey {
        &self.key
    }
    fn offers(&self, feature: Feature) -> bool {
        self.features.contains(&feature)
    }
}
