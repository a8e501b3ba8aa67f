// The thread that owns the component's instances (remote.js starts it, one per process):
// each call posted here runs on the workspace it names, as workspace.js runs it, in the
// order posted, and its value, or its error as plain data, is posted back with the
// session's state when it moved.

import { parentPort, workerData } from "node:worker_threads";
import { Workspace } from "./workspace.js";

// A test-only module installed before any call runs (its hooks see this thread's calls).
if (workerData?.hooks) await import(workerData.hooks);

const workspaces = new Map();
const sessions = new Map();

/** An error as plain data, to be made again on the other side (remote.js). */
export function serializeError(e) {
  if (!(e instanceof Error)) return { thrown: e };
  const props = {};
  for (const key of Object.keys(e)) props[key] = e[key];
  return {
    cls: e.constructor?.name,
    message: e.message,
    stack: e.stack,
    props,
    hasCause: Object.hasOwn(e, "cause"),
    cause: Object.hasOwn(e, "cause") ? serializeError(e.cause) : undefined,
  };
}

function reply(message) {
  try {
    parentPort.postMessage(message);
  } catch (e) {
    // A value or field that cannot be cloned: its error instead.
    parentPort.postMessage({ id: message.id, error: serializeError(e) });
  }
}

async function run(message) {
  const { op, id } = message;
  if (op === "drop") {
    workspaces.delete(message.wid);
    for (const [sid, s] of sessions) if (s.wid === message.wid) sessions.delete(sid);
    return;
  }
  if (op === "dropSession") {
    sessions.delete(message.sid);
    return;
  }
  let ws = workspaces.get(message.wid);
  if (!ws) {
    ws = new Workspace(message.root, message.options);
    workspaces.set(message.wid, ws);
  }
  if (op === "session") {
    const session = ws.session(message.sessionOptions);
    sessions.set(message.sid, { wid: message.wid, session, state: session.state });
    return;
  }
  let entry;
  let call;
  if (op === "call") call = ws[message.method](...message.args);
  else {
    entry = sessions.get(message.sid);
    call = entry.session[message.method](...message.args);
  }
  const stateOf = () => {
    if (!entry || entry.session.state === entry.state) return undefined;
    entry.state = entry.session.state;
    return entry.state;
  };
  try {
    const value = await call;
    reply({ id, value, state: stateOf() });
  } catch (e) {
    reply({ id, error: serializeError(e), state: stateOf() });
  }
}

parentPort.on("message", (message) => {
  // Started in the order posted: each call takes its place in the workspace's order then.
  run(message).catch((e) => {
    if (message.id !== undefined) reply({ id: message.id, error: serializeError(e) });
  });
});
