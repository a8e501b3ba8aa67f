//! What `metis-memory mcp` serves: the component's three tools, the two files and the
//! composed prompt as resources (with update notifications), and the memory as a prompt.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use metis_memory::json::{error_json, tool_success_json};
use metis_memory::{
    AuditFinding, ComposedPrompt, Error, MemoryFile, Session, ShownFile, ToolDefinition,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, InitializeRequestParams, InitializeResult,
    JsonObject, ListPromptsResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    Prompt, PromptArgument, PromptMessage, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents,
    ResourceUpdatedNotificationParam, Role, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, Tool, ToolAnnotations, UnsubscribeRequestParams,
};
use rmcp::service::{Peer, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};

use super::transport::ToolArguments;
use super::worker::{MemoryWorker, WorkerGone};

/// The one prompt this server offers.
const PROMPT_NAME: &str = "memory";

/// The protocol versions served: those with the `initialize` handshake, since
/// `resources/subscribe` is how this server announces changes and 2026-07-28 dropped it
/// with the handshake; not 2025-03-26, whose JSON-RPC batches this server does not read
/// (a client asking for it is offered 2025-11-25).
static PROTOCOL_VERSIONS: [ProtocolVersion; 3] = [
    ProtocolVersion::V_2024_11_05,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_11_25,
];

/// What the server tells every client's model at `initialize`, before the memory itself.
const GUIDANCE: &str = "Bounded memory for this workspace: MEMORY.md (facts about the workspace) and \
     USER.md (facts about the user), each with a hard byte cap. What is remembered follows, \
     if your client shows you these instructions; call memory_view to see it as it is now. \
     Record durable facts with memory_add, fix them with memory_replace, and rewrite a file \
     with memory_consolidate when a tool result says it is over its soft cap: a consolidate \
     must keep what memory_view (or a refusal) showed you, and is refused if you were not \
     shown the file in a tool result or it changed since.";

/// The read-only tool that shows the model the memory: over MCP only a tool result is
/// sure to reach the model (clients may keep the instructions, resources and prompts to
/// themselves), so only what it shows counts as seen.
const VIEW_TOOL: &str = "memory_view";
/// The `_meta` key of a successful write's details (what `metis-memory call` prints).
const WRITE_META: &str = "metis-memory/write";

const VIEW_DESCRIPTION: &str = "Show the memory as it is now: USER.md (facts about the user), then \
     MEMORY.md (facts about this workspace), as a system prompt's sections. Call it before \
     memory_consolidate: a consolidate must be built on what it shows.";

/// The server's state: the worker that owns the connection's session, and what the
/// client subscribed to.
pub struct MemoryServer {
    worker: MemoryWorker,
    tools: Vec<Tool>,
    /// URIs of resources the client subscribed to (stdio serves one client).
    subscribed: Mutex<BTreeSet<String>>,
    /// Whether `initialize` was answered: a session has one, and a second would change
    /// the protocol version rmcp goes by for the rest of it.
    initialized: AtomicBool,
    /// The resources this server has (`MemoryResource::all`).
    resources: Vec<MemoryResource>,
}

/// A resource this server has: one of the files, or the prompt composed from both.
#[derive(Clone, Copy, PartialEq, Eq)]
enum MemoryResource {
    File(MemoryFile),
    Prompt,
}

impl MemoryResource {
    /// The resources of a workspace with `files`: its files (the user's own too, with global user memory
    /// on), then the prompt.
    fn all(files: &[MemoryFile]) -> Vec<MemoryResource> {
        let mut all: Vec<MemoryResource> =
            files.iter().copied().map(MemoryResource::File).collect();
        all.push(MemoryResource::Prompt);
        all
    }

    fn uri(self) -> String {
        match self {
            MemoryResource::File(MemoryFile::GlobalUser) => "memory://global/USER.md".to_owned(),
            MemoryResource::File(file) => format!("memory://{}", file.file_name()),
            MemoryResource::Prompt => "memory://prompt".to_owned(),
        }
    }

    fn parse(all: &[MemoryResource], uri: &str) -> Option<MemoryResource> {
        all.iter().copied().find(|resource| resource.uri() == uri)
    }

    fn listing(self) -> Resource {
        let (name, description) = match self {
            MemoryResource::File(MemoryFile::Memory) => (
                "MEMORY.md",
                "Facts about this workspace, kept by the agent (soft cap 2048 bytes, hard cap 4096)",
            ),
            MemoryResource::File(MemoryFile::User) => (
                "USER.md",
                "Facts about the user, kept by the agent (soft cap 1536 bytes, hard cap 3072)",
            ),
            MemoryResource::File(MemoryFile::GlobalUser) => (
                "~/.metis/USER.md",
                "Facts about the user shared by every workspace (global user memory; soft cap 1536 bytes, hard cap 3072)",
            ),
            MemoryResource::Prompt => (
                "prompt",
                "The memory as a system prompt's sections: USER.md, then MEMORY.md (what `metis-memory prompt` prints)",
            ),
        };
        Resource::new(self.uri(), name)
            .with_description(description)
            .with_mime_type("text/markdown")
    }
}

/// What a client may show or check before it runs a tool: its title, and whether it can
/// lose what is there (`destructiveHint`) or does nothing more when repeated
/// (`idempotentHint`). No tool reads or writes beyond the workspace's `.metis/`.
const ANNOTATIONS: [(&str, &str, bool, bool); 3] = [
    // Appends: never loses an entry; a repeat adds it again.
    ("memory_add", "Remember a fact", false, false),
    // Rewrites an entry; a repeat finds nothing to replace, unless NEW contains OLD.
    ("memory_replace", "Change a remembered fact", true, false),
    // Rewrites the whole file; a repeat writes the same bytes.
    (
        "memory_consolidate",
        "Rewrite a memory file whole",
        true,
        true,
    ),
];

fn view_tool() -> Tool {
    let schema: JsonObject = serde_json::from_value(serde_json::json!({
        "type": "object",
        "properties": {},
        "additionalProperties": false,
    }))
    .unwrap_or_default();
    Tool::new(VIEW_TOOL, VIEW_DESCRIPTION, Arc::new(schema)).annotate(
        ToolAnnotations::with_title("Show the memory")
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            .open_world(false),
    )
}

fn annotations(tool: &str) -> Option<ToolAnnotations> {
    let (_, title, destructive, idempotent) = ANNOTATIONS.iter().find(|row| row.0 == tool)?;
    Some(
        ToolAnnotations::with_title(*title)
            .read_only(false)
            .destructive(*destructive)
            .idempotent(*idempotent)
            .open_world(false),
    )
}

impl MemoryServer {
    /// `definitions` are the component's own (`Workspace::tool_definitions`), served as
    /// they are.
    pub fn new(
        worker: MemoryWorker,
        definitions: &[ToolDefinition],
        files: &[MemoryFile],
    ) -> Result<Self, String> {
        let tools: Vec<Tool> = definitions
            .iter()
            .map(|definition| {
                let schema: JsonObject =
                    serde_json::from_str(&definition.input_schema).map_err(|e| {
                        format!(
                            "{}: the input schema is not a JSON object: {e}",
                            definition.name
                        )
                    })?;
                let tool = Tool::new(
                    definition.name.clone(),
                    definition.description.clone(),
                    Arc::new(schema),
                );
                Ok(match annotations(&definition.name) {
                    Some(annotations) => tool.annotate(annotations),
                    None => tool,
                })
            })
            .collect::<Result<_, String>>()?;
        let tools = std::iter::once(view_tool()).chain(tools).collect();
        Ok(MemoryServer {
            worker,
            tools,
            subscribed: Mutex::default(),
            initialized: AtomicBool::new(false),
            resources: MemoryResource::all(files),
        })
    }

    /// Runs `call` on the worker; the error a client sees if the worker is gone.
    async fn run<T: Send + 'static>(
        &self,
        call: impl FnOnce(&mut Session) -> T + Send + 'static,
    ) -> Result<T, McpError> {
        self.worker
            .run(call)
            .await
            .map_err(|WorkerGone| McpError::internal_error("the memory call failed", None))
    }

    /// Tells the client that `file` and the prompt changed, where it subscribed to them.
    async fn announce_write(&self, peer: &Peer<RoleServer>, file: MemoryFile) {
        let uris: Vec<String> = {
            let subscribed = self.subscriptions();
            [MemoryResource::File(file), MemoryResource::Prompt]
                .into_iter()
                .map(MemoryResource::uri)
                .filter(|uri| subscribed.contains(uri))
                .collect()
        };
        for uri in uris {
            let param = ResourceUpdatedNotificationParam::new(uri.clone());
            if let Err(e) = peer.notify_resource_updated(param).await {
                complain!("metis-memory mcp: cannot notify {uri}: {e}");
            }
        }
    }

    fn subscriptions(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.subscribed.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn subscribable(&self, uri: &str) -> Result<String, McpError> {
        match MemoryResource::parse(&self.resources, uri) {
            Some(resource) => Ok(resource.uri()),
            None => Err(self.no_such_resource(uri)),
        }
    }

    fn no_such_resource(&self, uri: &str) -> McpError {
        let known: Vec<String> = self.resources.iter().map(|r| r.uri()).collect();
        McpError::resource_not_found(
            format!("no resource {uri}: this server has {}", known.join(", ")),
            None,
        )
    }
}

/// The audit's word on a file shown to the model, or kept from it (the core's words).
fn audit_note(file: MemoryFile, findings: &[AuditFinding], withheld: bool) -> String {
    let found = findings.iter().map(|f| (f.line, f.rule.as_str()));
    metis_memory_core::audit::audit_note(file.core(), found, withheld)
}

/// A composed prompt as the model is shown it: the text, then a note for each file the
/// audit flagged (left out, or reported).
fn presented(prompt: &ComposedPrompt) -> String {
    let notes: Vec<String> = prompt
        .sources
        .iter()
        .filter(|source| !source.findings.is_empty())
        .map(|source| audit_note(source.file, &source.findings, !source.included))
        .collect();
    let mut text = prompt.text.clone();
    for note in notes {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(&note);
    }
    text
}

/// The files shown one by one (`Session::show_each`): the sections of those that can be
/// shown (the user's own USER.md too, with global user memory on), then a note for each
/// that cannot (flagged, or not readable as text).
fn presented_each(files: &[(MemoryFile, Result<ShownFile, Error>)]) -> String {
    let text = |file: MemoryFile| {
        files
            .iter()
            .find(|(f, _)| *f == file)
            .and_then(|(_, shown)| shown.as_ref().ok())
            .filter(|shown| !shown.withheld)
            .map_or("", |shown| shown.text.as_str())
    };
    let layout = metis_memory_core::PromptLayout {
        global_user: files.iter().any(|(f, _)| *f == MemoryFile::GlobalUser),
        budget: false,
    };
    let mut out = metis_memory_core::compose_system_prompt(
        "",
        |file| Ok(text(MemoryFile::from_core(file)).as_bytes().to_vec()),
        metis_memory_core::audit::AuditPolicy::Off,
        layout,
    )
    .map(|composed| composed.text)
    .unwrap_or_default();
    for (file, shown) in files {
        let note = match shown {
            Ok(shown) if shown.findings.is_empty() => continue,
            Ok(shown) => audit_note(*file, &shown.findings, shown.withheld),
            Err(error) => format!(
                "[metis-memory: {} cannot be shown: {error}. The memory tools will not replace what you cannot be shown: ask the user to fix it (`metis-memory edit`).]",
                file.name()
            ),
        };
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(&note);
    }
    out
}

impl MemoryServer {
    /// `memory_view`: the memory as the prompt shows it, which the model now has seen. If
    /// it cannot be composed whole, each file that can be shown is (and counts as seen),
    /// and each that cannot is named with the reason.
    async fn view(&self, arguments: &JsonObject) -> Result<CallToolResponse, McpError> {
        if let Some(key) = arguments.keys().next() {
            let text = format!("{VIEW_TOOL} takes no arguments, and was given {key:?}");
            return Ok(text_result(text, true).into());
        }
        let memory = self
            .memory(
                Delivery::Shown,
                "(Nothing is remembered yet: MEMORY.md and USER.md are empty.)",
            )
            .await?;
        Ok(text_result(memory, false).into())
    }

    /// The memory as the prompt shows it, `empty` when there is none; delivered as
    /// `delivery` says. If it cannot be composed whole, each file that can be shown is,
    /// and each that cannot is named with the reason.
    async fn memory(&self, delivery: Delivery, empty: &'static str) -> Result<String, McpError> {
        let memory = self
            .run(move |session| match delivery {
                Delivery::Shown => match session.show_prompt("") {
                    Ok(prompt) => presented(&prompt),
                    Err(_) => presented_each(&session.show_each()),
                },
                Delivery::Offered => match session.offer_prompt("") {
                    Ok(prompt) => presented(&prompt),
                    Err(_) => presented_each(&session.offer_each()),
                },
            })
            .await?;
        Ok(if memory.is_empty() {
            empty.to_owned()
        } else {
            memory
        })
    }
}

/// Whether text goes to the model for certain (a tool result: it counts as shown) or only
/// to the client, which may keep it from the model (instructions, resources, prompts).
#[derive(Clone, Copy)]
enum Delivery {
    Shown,
    Offered,
}

/// A store refusal on a read, with the store's text and its JSON shape as data.
fn store_failure(error: &Error) -> McpError {
    McpError::internal_error(error.to_string(), Some(error_json(error)))
}

fn text_result(text: String, is_error: bool) -> CallToolResult {
    let content = vec![ContentBlock::text(text)];
    if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    }
}

impl ServerHandler for MemoryServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_prompts()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_tools()
            .build();
        ServerConfig::new(capabilities)
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
            .with_server_info(
                Implementation::new("metis-memory", metis_memory::VERSION)
                    .with_title("metis-memory: bounded agent memory"),
            )
            .with_instructions(GUIDANCE)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(&PROTOCOL_VERSIONS)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        if self.initialized.swap(true, Ordering::SeqCst) {
            return Err(McpError::invalid_request(
                "this session is already initialized (one initialize a session)",
                None,
            ));
        }
        context.peer.set_peer_info(request.clone());
        let mut result = self.negotiate_initialize(&request)?;
        // Many clients put the instructions in the model's system prompt: the memory goes
        // there. Others never show them to the model, so nothing in them counts as seen
        // (memory_view shows it).
        let memory = self
            .memory(Delivery::Offered, "(Nothing is remembered yet.)")
            .await?;
        result.instructions = Some(format!("{GUIDANCE}\n\n{memory}"));
        Ok(result)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    /// The component validates the input, runs the write and the poisoning scan; every
    /// refusal, whatever its cause, is a tool result the model reads, with nothing written.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.into_owned();
        let arguments = request.arguments.unwrap_or_default();
        if name == VIEW_TOOL {
            return self.view(&arguments).await;
        }
        // As the client wrote them, when the transport kept them: a member given twice
        // is then the component's to refuse, as from every other host.
        let input = match context.extensions.get::<ToolArguments>() {
            Some(ToolArguments(written)) => written.clone(),
            None => serde_json::Value::Object(arguments).to_string(),
        };
        let outcome = self
            .run(move |session| {
                let outcome = session.call_tool(&name, &input);
                // A refusal's content is a tool result: the model reads it before its next
                // call (MCP has no response boundaries to wait for).
                if let Err(Error::Tool(refusal)) = &outcome
                    && refusal.shown.is_some()
                {
                    session.next_response();
                }
                outcome
            })
            .await?;
        let result = match outcome {
            Ok(success) => {
                self.announce_write(&context.peer, success.result.file)
                    .await;
                // The write's details go in `_meta`, not `structuredContent`: clients that
                // see structured content hand it to the model instead of the text
                // (pydantic-ai does), ~700 bytes of hashes for a 40-byte message.
                let mut result = text_result(success.text.clone(), false);
                let mut meta = serde_json::Map::new();
                meta.insert(WRITE_META.into(), tool_success_json(&success));
                result.meta = Some(rmcp::model::MetaObject(meta));
                result
            }
            Err(Error::Tool(refused)) if refused.shown.is_some() => text_result(
                format!(
                    "{}\n(Build the next memory_consolidate on the content above, or call {VIEW_TOOL} to see all of memory as it is now.)",
                    refused.message
                ),
                true,
            ),
            Err(Error::Tool(refused)) => text_result(refused.message, true),
            Err(other) => text_result(other.to_string(), true),
        };
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let resources = self.resources.iter().map(|r| r.listing()).collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    /// Read from disk on every request: a person's edit or another agent's write is
    /// seen at once.
    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let resource = MemoryResource::parse(&self.resources, &request.uri)
            .ok_or_else(|| self.no_such_resource(&request.uri))?;
        let text = self
            .run(move |session| match resource {
                MemoryResource::File(file) => session.offer_file(file).map(|shown| {
                    match (shown.findings.is_empty(), shown.withheld) {
                        (true, _) => shown.text,
                        (false, true) => audit_note(file, &shown.findings, true),
                        (false, false) => format!(
                            "{}\n\n{}",
                            audit_note(file, &shown.findings, false),
                            shown.text
                        ),
                    }
                }),
                MemoryResource::Prompt => session.offer_prompt("").map(|p| presented(&p)),
            })
            .await?
            .map_err(|e| store_failure(&e))?;
        let contents = ResourceContents::text(text, resource.uri()).with_mime_type("text/markdown");
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let uri = self.subscribable(&request.uri)?;
        self.subscriptions().insert(uri);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let uri = self.subscribable(&request.uri)?;
        self.subscriptions().remove(&uri);
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let base = PromptArgument::new("base")
            .with_description("A base system prompt the memory sections follow")
            .with_required(false);
        let prompt = Prompt::new(
            PROMPT_NAME,
            Some(
                "The memory sections (USER.md, then MEMORY.md) composed as a system prompt, read fresh",
            ),
            Some(vec![base]),
        );
        Ok(ListPromptsResult::with_all_items(vec![prompt]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if request.name != PROMPT_NAME {
            return Err(McpError::invalid_params(
                format!(
                    "no prompt {:?}: this server has {PROMPT_NAME:?}",
                    request.name
                ),
                None,
            ));
        }
        let base = match request.arguments.as_ref().and_then(|args| args.get("base")) {
            None => String::new(),
            Some(serde_json::Value::String(base)) => base.clone(),
            Some(_) => return Err(McpError::invalid_params("`base` must be a string", None)),
        };
        let prompt = self
            .run(move |session| session.offer_prompt(&base).map(|p| presented(&p)))
            .await?
            .map_err(|e| store_failure(&e))?;
        let message = PromptMessage::new_text(Role::User, prompt);
        Ok(GetPromptResult::new(vec![message])
            .with_description("The workspace's memory, as a system prompt's sections")
            .into())
    }
}
