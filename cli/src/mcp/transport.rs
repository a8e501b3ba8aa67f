//! The stdio transport of `metis-memory mcp`: one JSON-RPC message per line each way.
//!
//! rmcp's own stdio transport silently drops a line that is not JSON; the server
//! answers every line it cannot use instead, so a client (or a person typing) learns
//! what went wrong: `-32700` for a line that is not JSON, `-32600` (with the message's
//! id when it has one) for JSON that is not a message, `-32600` for a line too long to
//! read. Then it reads on. The end of input ends the session once every request read
//! has been answered, so a write asked for just before the end is made, announced and
//! answered; and no more than [`MAX_PENDING`] requests are read ahead of their answers.
//!
//! A key repeated in one object, anywhere in a message, is refused: a JSON parser keeps
//! one of the two (rmcp's, the last), so which the client meant is a guess, and the
//! component, the CLI and the packages refuse such tool input. The one place left to the
//! component is the arguments of `tools/call`: they reach it as written, repeats kept
//! ([`ToolArguments`]), so it refuses them in its own words, as a tool result.
//!
//! Requests are counted one by one, whatever their ids: a request whose id is that of
//! one still open is answered `-32600` and not run (JSON-RPC ids name one request at a
//! time), and a cancelled request stays counted until its handler has finished, its
//! answer then dropped here (the protocol says a cancelled request is not answered).
//! Otherwise a client repeating one id, or cancelling every request it sends, would be
//! read without bound while the work it asked for piles up.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ClientNotification, ClientRequest, JsonRpcMessage, RequestId};
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, Notify};
use tokio::task::JoinHandle;

/// The longest line read, in bytes: far more than any tool call can use (a file's hard
/// cap is 4 KiB) or a prompt's base needs, and bounded so that input without newlines
/// cannot exhaust memory.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Requests read and not yet answered, at most: a client that writes without reading
/// the answers is not read further, so memory stays bounded (a line each).
pub const MAX_PENDING: usize = 64;

/// How long the end of input waits for the requests still open: far past any call
/// (a write waits a few seconds for the lock at most), so only a request that would
/// never be answered is given up on.
const END_WAIT: Duration = Duration::from_secs(60);

/// JSON-RPC's code for input that is not JSON.
const PARSE_ERROR: i32 = -32700;
/// JSON-RPC's code for JSON that is not a valid message.
const INVALID_REQUEST: i32 = -32600;
/// JSON-RPC's code for a known method called with parameters of the wrong shape.
const INVALID_PARAMS: i32 = -32602;

/// The protocol's methods this server answers. rmcp reads one of them whose params do
/// not parse as an unknown method, and would answer "method not found".
const SERVED_METHODS: [&str; 11] = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
];

/// Lines from `input`, messages to `output`; see the module's documentation.
pub struct LineTransport<R, W> {
    input: BufReader<R>,
    /// The line being read. It lives here, not in `receive`, because rmcp polls
    /// `receive` in a `select!` and may drop it mid-line: the next call resumes.
    line: Vec<u8>,
    /// Set while skipping the rest of a line longer than [`MAX_LINE_BYTES`].
    skipping: bool,
    /// Whether `initialize` has come: until then, notifications and responses are
    /// dropped, since rmcp ends the session on anything but a request before it (a
    /// `ping` may come first, as the protocol allows).
    initialized: bool,
    /// The requests handed on and not yet answered.
    pending: Arc<Pending>,
    /// Every line written goes through this lock whole, so lines never interleave.
    output: Arc<Mutex<W>>,
    /// An error reply still being written; awaited before the next line is handed on,
    /// so replies keep the order of the lines they answer.
    reply: Option<JoinHandle<()>>,
}

/// What one line of input turned out to be.
enum Line {
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// Nothing to do: a blank line, or a notification that cannot be parsed (a
    /// notification is never answered).
    Skip,
    /// Not usable: this JSON-RPC error is the answer.
    Refused(Value),
}

enum Read {
    Line,
    TooLong,
    End,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    pub fn new(input: R, output: W) -> Self {
        LineTransport {
            input: BufReader::new(input),
            line: Vec::new(),
            skipping: false,
            initialized: false,
            pending: Arc::default(),
            output: Arc::new(Mutex::new(output)),
            reply: None,
        }
    }

    /// Reads up to the next newline into `self.line`, never past [`MAX_LINE_BYTES`].
    /// Cancel-safe: bytes are moved from the reader's buffer to `self.line` with no
    /// await in between.
    async fn read_line(&mut self) -> Read {
        loop {
            let available = match self.input.fill_buf().await {
                Ok(available) => available,
                Err(e) => {
                    complain!("metis-memory mcp: cannot read standard input: {e}");
                    return Read::End;
                }
            };
            if available.is_empty() {
                // A last line without a newline is still a line.
                return if self.line.is_empty() || self.skipping {
                    Read::End
                } else {
                    Read::Line
                };
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let take = newline.map_or(available.len(), |at| at + 1);
            let mut outcome = None;
            if self.skipping {
                if newline.is_some() {
                    self.skipping = false;
                }
            } else if self.line.len() + take > MAX_LINE_BYTES {
                self.line.clear();
                self.skipping = newline.is_none();
                outcome = Some(Read::TooLong);
            } else {
                self.line.extend_from_slice(&available[..take]);
                if newline.is_some() {
                    outcome = Some(Read::Line);
                }
            }
            self.input.consume(take);
            if let Some(outcome) = outcome {
                return outcome;
            }
        }
    }

    /// Writes `error` as a reply on its own task, which `receive` awaits before it
    /// hands on another message.
    /// Answers a request whose id is that of one still open, without running it. The
    /// answer carries no id (`null`, the id in `data`): with the id, a client matching
    /// answers by id would take it for the answer to the open request, which did run.
    fn refuse_duplicate(&mut self, id: &RequestId) {
        complain_about_input(format_args!(
            "metis-memory mcp: refused a request reusing the id of one not yet answered"
        ));
        let id = serde_json::to_value(id).unwrap_or(Value::Null);
        let message = format!(
            "Invalid Request: the id {id} is that of a request not yet answered (one request an id at a time)"
        );
        let mut reply = error_reply(Value::Null, INVALID_REQUEST, &message);
        reply["error"]["data"] = json!({ "id": id });
        self.send_reply(reply);
    }

    fn send_reply(&mut self, error: Value) {
        let output = self.output.clone();
        let line = format!("{error}\n");
        self.reply = Some(tokio::spawn(async move {
            if let Err(e) = write_line(&output, line.as_bytes()).await {
                complain!("metis-memory mcp: cannot write to standard output: {e}");
            }
        }));
    }
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let output = self.output.clone();
        let pending = self.pending.clone();
        let answers = match &item {
            JsonRpcMessage::Response(response) => Some(response.id.clone()),
            JsonRpcMessage::Error(error) => error.id.clone(),
            _ => None,
        };
        async move {
            // The answer to a cancelled request is not sent: its handler has finished,
            // which is all that was waited for.
            if let Some(id) = &answers
                && pending.close_if_cancelled(id)
            {
                return Ok(());
            }
            let mut line = serde_json::to_vec(&item)?;
            line.push(b'\n');
            let written = write_line(&output, &line).await;
            if let Some(id) = answers {
                pending.close(&id);
            }
            written
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if let Some(reply) = self.reply.as_mut() {
                let _ = reply.await;
                self.reply = None;
            }
            self.pending.open_below(MAX_PENDING).await;
            match self.read_line().await {
                Read::End => {
                    if tokio::time::timeout(END_WAIT, self.pending.open_below(1))
                        .await
                        .is_err()
                    {
                        complain!(
                            "metis-memory mcp: {} requests still unanswered at the end of input",
                            self.pending.count()
                        );
                    }
                    return None;
                }
                Read::TooLong => {
                    complain_about_input(format_args!(
                        "metis-memory mcp: refused a line longer than {MAX_LINE_BYTES} bytes"
                    ));
                    self.send_reply(error_reply(
                        Value::Null,
                        INVALID_REQUEST,
                        &format!("Invalid Request: a line longer than {MAX_LINE_BYTES} bytes"),
                    ));
                }
                Read::Line => {
                    let line = std::mem::take(&mut self.line);
                    match parse_line(&line) {
                        Line::Message(message) => {
                            match &*message {
                                JsonRpcMessage::Request(request) => {
                                    if !self.pending.open(&request.id) {
                                        self.refuse_duplicate(&request.id);
                                        continue;
                                    }
                                    if matches!(
                                        request.request,
                                        ClientRequest::InitializeRequest(_)
                                    ) {
                                        self.initialized = true;
                                    }
                                }
                                _ if !self.initialized => {
                                    complain_about_input(format_args!(
                                        "metis-memory mcp: ignored a message before initialize"
                                    ));
                                    continue;
                                }
                                // Kept from rmcp, which would forget the request at once
                                // and drop its answer: the request stays counted until
                                // its handler finishes (`send` drops the answer then).
                                // The handlers do not stop early anyway: a call already
                                // made is made whole.
                                JsonRpcMessage::Notification(notification)
                                    if matches!(
                                        &notification.notification,
                                        ClientNotification::CancelledNotification(_)
                                    ) =>
                                {
                                    if let ClientNotification::CancelledNotification(cancelled) =
                                        &notification.notification
                                        && let Some(id) = &cancelled.params.request_id
                                    {
                                        self.pending.cancel(id);
                                    }
                                    continue;
                                }
                                _ => {}
                            }
                            return Some(*message);
                        }
                        Line::Skip => {}
                        Line::Refused(error) => self.send_reply(error),
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.output.lock().await.flush().await
    }
}

/// The most lines said on stderr about unusable input: stderr is written on the one
/// thread that serves, so a client that floods garbage and never reads stderr would
/// otherwise block the server once the pipe is full. Every such line is still answered.
pub const MAX_INPUT_COMPLAINTS: u32 = 100;

fn complain_about_input(message: std::fmt::Arguments) {
    static SAID: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    match SAID.fetch_add(1, std::sync::atomic::Ordering::Relaxed) {
        n if n < MAX_INPUT_COMPLAINTS => complain!("{message}"),
        MAX_INPUT_COMPLAINTS => complain!(
            "metis-memory mcp: {MAX_INPUT_COMPLAINTS} lines of unusable input so far; more are answered but not logged"
        ),
        _ => {}
    }
}

/// The requests read and not yet answered, by id (one request an id), each with
/// whether the client has cancelled it.
#[derive(Default)]
struct Pending {
    ids: std::sync::Mutex<HashMap<String, bool>>,
    /// Woken whenever one is answered.
    answered: Notify,
}

impl Pending {
    fn key(id: &RequestId) -> String {
        serde_json::to_string(id).unwrap_or_default()
    }

    fn ids(&self) -> std::sync::MutexGuard<'_, HashMap<String, bool>> {
        self.ids.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts a request; false if one with this id is still open.
    fn open(&self, id: &RequestId) -> bool {
        let mut ids = self.ids();
        let key = Pending::key(id);
        if ids.contains_key(&key) {
            return false;
        }
        ids.insert(key, false);
        true
    }

    fn cancel(&self, id: &RequestId) {
        if let Some(cancelled) = self.ids().get_mut(&Pending::key(id)) {
            *cancelled = true;
        }
    }

    fn close(&self, id: &RequestId) {
        if self.ids().remove(&Pending::key(id)).is_some() {
            self.answered.notify_waiters();
        }
    }

    /// Closes the request if it was cancelled: whether it was (its answer is not sent).
    fn close_if_cancelled(&self, id: &RequestId) -> bool {
        let cancelled = self.ids().get(&Pending::key(id)) == Some(&true);
        if cancelled {
            self.close(id);
        }
        cancelled
    }

    fn count(&self) -> usize {
        self.ids().len()
    }

    /// Waits until fewer than `limit` requests are open (answered ones are removed by
    /// `send`). Cancel-safe: it only waits.
    async fn open_below(&self, limit: usize) {
        loop {
            let answered = self.answered.notified();
            if self.count() < limit {
                return;
            }
            answered.await;
        }
    }
}

async fn write_line<W: AsyncWrite + Unpin>(output: &Mutex<W>, line: &[u8]) -> std::io::Result<()> {
    let mut output = output.lock().await;
    output.write_all(line).await?;
    output.flush().await
}

/// Classifies one line (with or without its newline).
fn parse_line(line: &[u8]) -> Line {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Line::Skip;
    }
    let (value, found) = match read_strictly(line) {
        Ok(read) => read,
        Err(e) => {
            complain_about_input(format_args!(
                "metis-memory mcp: a line that is not JSON: {e}"
            ));
            return Line::Refused(error_reply(
                Value::Null,
                PARSE_ERROR,
                &format!("Parse error: {e}"),
            ));
        }
    };
    let id = match value.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    };
    let is_notification = value.get("id").is_none()
        && value.get("method").is_some_and(Value::is_string)
        && value.get("jsonrpc") == Some(&json!("2.0"));
    let is_tool_call = value.get("method") == Some(&json!("tools/call"));
    let repeated = match (found.repeated, found.in_arguments) {
        (Some(repeated), _) => Some(repeated),
        (None, Some(repeated)) if !is_tool_call => Some(repeated),
        _ => None,
    };
    if let Some(repeated) = repeated {
        let whole_id_repeated = repeated.path.is_empty() && repeated.key == "id";
        let in_params = repeated.path.first().is_some_and(|first| first == "params");
        let message = format!(
            "{}: the key {} is given more than once in {} (a key names one member of an object; which of the two was meant is not known)",
            if in_params {
                "Invalid params"
            } else {
                "Invalid Request"
            },
            shown(&repeated.key),
            repeated.location(),
        );
        complain_about_input(format_args!(
            "metis-memory mcp: refused a message with a repeated key"
        ));
        if is_notification {
            return Line::Skip;
        }
        let id = if whole_id_repeated { Value::Null } else { id };
        let code = if in_params {
            INVALID_PARAMS
        } else {
            INVALID_REQUEST
        };
        return Line::Refused(error_reply(id, code, &message));
    }
    match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value) {
        Ok(JsonRpcMessage::Request(request))
            if matches!(&request.request, ClientRequest::CustomRequest(custom)
                if SERVED_METHODS.contains(&custom.method.as_str())) =>
        {
            Line::Refused(error_reply(
                id,
                INVALID_PARAMS,
                "Invalid params: not the shape this method takes",
            ))
        }
        Ok(JsonRpcMessage::Request(mut request)) => {
            if let ClientRequest::CallToolRequest(call) = &mut request.request
                && let Some(arguments) = found.arguments
            {
                call.extensions.insert(ToolArguments(arguments));
            }
            Line::Message(Box::new(JsonRpcMessage::Request(request)))
        }
        Ok(message) => Line::Message(Box::new(message)),
        Err(e) if is_notification => {
            complain_about_input(format_args!(
                "metis-memory mcp: ignored a notification it cannot read: {e}"
            ));
            Line::Skip
        }
        Err(e) => {
            complain_about_input(format_args!(
                "metis-memory mcp: JSON that is not a message: {e}"
            ));
            Line::Refused(error_reply(
                id,
                INVALID_REQUEST,
                &format!("Invalid Request: {e}"),
            ))
        }
    }
}

/// The arguments of a `tools/call` as the client wrote them (a member given twice is
/// there twice), as JSON: what the server hands the component, which refuses a repeat
/// as it does from every other host. rmcp's own copy of the arguments kept only one.
#[derive(Clone, Debug)]
pub struct ToolArguments(pub String);

/// A key given twice in one object.
struct Repeated {
    /// The keys (and `[index]`es) that lead from the message to that object.
    path: Vec<String>,
    key: String,
}

impl Repeated {
    fn location(&self) -> String {
        if self.path.is_empty() {
            return "the message".to_owned();
        }
        let mut at = String::new();
        for step in &self.path {
            if !step.starts_with('[') && !at.is_empty() {
                at.push('.');
            }
            at.push_str(&shown_plain(step));
        }
        at
    }
}

/// What reading a line strictly found besides its value.
#[derive(Default)]
struct Found {
    /// The first key repeated outside `params.arguments`.
    repeated: Option<Repeated>,
    /// The first key repeated inside `params.arguments`: left to the component when the
    /// message is a `tools/call`.
    in_arguments: Option<Repeated>,
    /// `params.arguments` written out member by member, repeats kept, when an object.
    arguments: Option<String>,
}

/// A line's JSON, and what [`Found`] says of it. One pass, as `serde_json` reads a
/// `Value`, but an object's members are checked for repeats as they are read (the
/// `Value` keeps one of them; the check needs to see both).
fn read_strictly(line: &[u8]) -> Result<(Value, Found), serde_json::Error> {
    let mut found = Found::default();
    let mut path = Vec::new();
    let mut reader = serde_json::Deserializer::from_slice(line);
    let value = Strict {
        path: &mut path,
        found: &mut found,
    }
    .deserialize(&mut reader)?;
    reader.end()?;
    Ok((value, found))
}

struct Strict<'s> {
    path: &'s mut Vec<String>,
    found: &'s mut Found,
}

impl Strict<'_> {
    fn inner(&mut self) -> Strict<'_> {
        Strict {
            path: self.path,
            found: self.found,
        }
    }

    fn in_arguments(&self) -> bool {
        self.path.len() >= 2 && self.path[0] == "params" && self.path[1] == "arguments"
    }
}

impl<'de> DeserializeSeed<'de> for Strict<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            self.path.push(format!("[{}]", items.len()));
            let item = seq.next_element_seed(self.inner())?;
            self.path.pop();
            match item {
                Some(item) => items.push(item),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Value, A::Error> {
        let is_arguments = self.path.len() == 2 && self.in_arguments();
        let mut written = is_arguments.then(String::new);
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            self.path.push(key.clone());
            let value = map.next_value_seed(self.inner())?;
            self.path.pop();
            if let Some(written) = &mut written {
                if !written.is_empty() {
                    written.push(',');
                }
                written.push_str(&Value::from(key.as_str()).to_string());
                written.push(':');
                written.push_str(&value.to_string());
            }
            if object.contains_key(&key) {
                let slot = match self.in_arguments() {
                    true => &mut self.found.in_arguments,
                    false => &mut self.found.repeated,
                };
                if slot.is_none() {
                    *slot = Some(Repeated {
                        path: self.path.clone(),
                        key: key.clone(),
                    });
                }
            }
            object.insert(key, value);
        }
        if let Some(written) = written {
            self.found.arguments = Some(format!("{{{written}}}"));
        }
        Ok(Value::Object(object))
    }
}

/// A key as an error message shows it: as JSON, cut short if long (a key may be as long
/// as a line).
fn shown(key: &str) -> String {
    const MAX_CHARS: usize = 64;
    match key.char_indices().nth(MAX_CHARS) {
        None => Value::from(key).to_string(),
        Some((cut, _)) => format!("{}…", Value::from(&key[..cut])),
    }
}

/// A step of a path as an error message shows it: bare when it is a plain name.
fn shown_plain(step: &str) -> String {
    let plain = step.starts_with('[')
        || (!step.is_empty()
            && step.len() <= 64
            && step
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'));
    if plain { step.to_owned() } else { shown(step) }
}

fn error_reply(id: Value, code: i32, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

#[cfg(test)]
mod tests {
    use std::pin::pin;
    use std::task::{Context, Waker};

    use rmcp::model::{NumberOrString, ServerResult};
    use tokio::io::AsyncReadExt;

    use super::*;

    fn run<F: Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    fn ping(id: u64) -> String {
        format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n")
    }

    fn cancel(id: u64) -> String {
        format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{{\"requestId\":{id}}}}}\n"
        )
    }

    /// The id of the request `message` is, as JSON.
    fn id_of(message: Option<RxJsonRpcMessage<RoleServer>>) -> String {
        match message {
            Some(JsonRpcMessage::Request(request)) => serde_json::to_string(&request.id).unwrap(),
            other => panic!("expected a request, got {other:?}"),
        }
    }

    fn answer(id: i64) -> TxJsonRpcMessage<RoleServer> {
        JsonRpcMessage::response(ServerResult::empty(()), NumberOrString::Number(id))
    }

    /// Every line written to `output` once the transport is gone.
    async fn lines(mut output: tokio::io::DuplexStream) -> Vec<Value> {
        let mut text = String::new();
        output.read_to_string(&mut text).await.unwrap();
        text.lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    #[test]
    fn a_key_given_twice_is_found_wherever_it_is_and_the_arguments_kept_as_written() {
        let found = |line: &str| read_strictly(line.as_bytes()).unwrap().1;
        let at = |repeated: Option<Repeated>| repeated.map(|r| (r.location(), r.key));
        let plain = found(r#"{"a":{"b":[1,{"c":2}]},"params":{"arguments":{"x":"1"}}}"#);
        assert!(plain.repeated.is_none() && plain.in_arguments.is_none());
        assert_eq!(plain.arguments.as_deref(), Some(r#"{"x":"1"}"#));
        let root = found(r#"{"id":1,"id":2}"#);
        assert_eq!(at(root.repeated), Some(("the message".into(), "id".into())));
        let deep = found(r#"{"params":{"list":[{"b":1},{"b":1,"b":2}]}}"#);
        assert_eq!(
            at(deep.repeated),
            Some(("params.list[1]".into(), "b".into()))
        );
        // The same key in two objects is no repeat.
        assert!(found(r#"{"a":{"k":1},"b":{"k":1}}"#).repeated.is_none());
        // An escape names the same key as its character.
        assert!(found(r#"{"file":1,"fil\u0065":2}"#).repeated.is_some());
        let call = found(
            r#"{"params":{"name":"n","arguments":{"file":"MEMORY.md","entry":"- a","file":"USER.md"}}}"#,
        );
        assert!(call.repeated.is_none());
        assert_eq!(
            at(call.in_arguments),
            Some(("params.arguments".into(), "file".into()))
        );
        assert_eq!(
            call.arguments.as_deref(),
            Some(r#"{"file":"MEMORY.md","entry":"- a","file":"USER.md"}"#)
        );
        let odd = found(r#"{"params":{"a b":{"k":1,"k":2}}}"#);
        assert_eq!(
            at(odd.repeated),
            Some(("params.\"a b\"".into(), "k".into()))
        );
        assert!(read_strictly(b"{\"a\":1} x").is_err());
    }

    #[test]
    fn a_request_reusing_the_id_of_an_open_one_is_refused_and_not_run() {
        run(async {
            let mut input = ping(1);
            for _ in 0..100 {
                input.push_str(&ping(1));
            }
            input.push_str(&ping(2));
            let (output, written) = tokio::io::duplex(1 << 20);
            let mut transport = LineTransport::new(input.as_bytes(), output);
            assert_eq!(id_of(transport.receive().await), "1");
            // The hundred copies are answered, not handed on: the next request is 2.
            assert_eq!(id_of(transport.receive().await), "2");
            drop(transport);
            let refusals = lines(written).await;
            assert_eq!(refusals.len(), 100, "{refusals:?}");
            for refusal in refusals {
                assert_eq!(refusal["id"], Value::Null, "{refusal}");
                assert_eq!(refusal["error"]["data"]["id"], 1, "{refusal}");
                assert_eq!(refusal["error"]["code"], INVALID_REQUEST, "{refusal}");
            }
        });
    }

    #[test]
    fn no_more_requests_than_the_limit_are_read_ahead_of_their_answers() {
        run(async {
            let input: String = (1..=MAX_PENDING as u64 + 10).map(ping).collect();
            let mut transport = LineTransport::new(input.as_bytes(), tokio::io::sink());
            for _ in 0..MAX_PENDING {
                id_of(transport.receive().await);
            }
            let mut next = pin!(transport.receive());
            let waiting = next.as_mut().poll(&mut Context::from_waker(Waker::noop()));
            assert!(waiting.is_pending(), "a request past the limit was read");
        });
    }

    #[test]
    fn a_cancelled_request_stays_counted_until_its_handler_ends_and_is_not_answered() {
        run(async {
            let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"0"}}}"#;
            let input = format!(
                "{initialize}\n{}{}{}{}",
                ping(1),
                cancel(1),
                ping(1),
                ping(2)
            );
            let (output, written) = tokio::io::duplex(1 << 20);
            let mut transport = LineTransport::new(input.as_bytes(), output);
            assert_eq!(id_of(transport.receive().await), "0");
            transport.send(answer(0)).await.unwrap();
            assert_eq!(id_of(transport.receive().await), "1");
            // The cancellation is kept from rmcp; 1 is still running, so its id is taken.
            assert_eq!(id_of(transport.receive().await), "2");
            assert_eq!(transport.pending.count(), 2);
            transport.send(answer(1)).await.unwrap();
            transport.send(answer(2)).await.unwrap();
            assert_eq!(transport.pending.count(), 0);
            drop(transport);
            let written = lines(written).await;
            assert_eq!(written.len(), 3, "{written:?}");
            assert_eq!(written[1]["id"], Value::Null);
            assert_eq!(written[1]["error"]["data"]["id"], 1);
            assert_eq!(written[1]["error"]["code"], INVALID_REQUEST);
            assert_eq!(written[2]["id"], 2);
            assert!(written[2].get("result").is_some(), "{}", written[2]);
        });
    }
}
