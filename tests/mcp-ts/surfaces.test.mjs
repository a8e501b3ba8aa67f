// The cross-surface suite (tests/surfaces/behaviours.json, its README gives the format)
// against `metis-memory mcp` through the official TypeScript SDK: one test per row. Each
// session ("A", "B") is a client connection of its own, its own server process spawned
// by `StdioClientTransport` on the row's workspace. Over MCP only a tool result is sure
// to reach the model, so `open` connects (`Client.connect` initializes) and calls
// `memory_view` (what the model is shown is that result's text; the initialize result's
// instructions count for nothing), and `start` connects alone; `call` is `tools/call`,
// `memory_view` included (it wrote, or showed, when the result is not `isError`; its text
// is the text content); `next_response` is nothing (a refusal's content counts as seen
// at once); `file` reads the file from disk; `version` is `serverInfo.version` against
// wit/world.wit; `memory_options` starts every later server with `--global-user G` (and
// `--prompt-budget`). Every server of a row runs with `HOME` set to the row's own home, a
// temporary directory, so `~/.metis/USER.md` (in `given` and `file`) is its
// `.metis/USER.md` and the server finds it by itself, never in the real home. A row whose
// `surfaces` leave out `mcp` is passed over (skipped), saying why. A step, or an
// `expect`, with a key this driver does not know fails the row, naming the key (the
// table's `prompt`, `update`, `sessionless` and `snapshot` are for other surfaces, in
// rows that leave out `mcp`, and are not known here).

import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';

import { ROOT, Workspace, bytesOrNull, call, connectUnder, connectWith, refusedAtStart, witVersion } from './support.mjs';

const TABLE = join(ROOT, 'tests', 'surfaces', 'behaviours.json');

// Each step's kind (the key that names it), with every key it may have and the checks
// its `expect` may hold.
const STEPS = {
  open: [['open', 'expect'], ['prompt_contains', 'prompt_lacks']],
  start: [['start'], []],
  call: [['call', 'tool', 'input', 'expect'], ['ok', 'text_contains', 'text_lacks']],
  next_response: [['next_response'], []],
  file: [['file', 'is'], []],
  version: [['version'], []],
  add_under: [['add_under', 'expect'], ['kind', 'text_contains']],
  metis_holds: [['metis_holds'], []],
  root_mode: [['root_mode'], []],
  read_refused: [['read_refused', 'expect'], ['kind', 'text_contains']],
  memory_options: [['memory_options'], []],
};
// The options a `memory_options` step may set.
const OPTIONS = ['global_user', 'prompt_budget'];
const ROW_KEYS = ['name', 'covers', 'given', 'steps', 'surfaces', 'surfaces_why'];
const SURFACE = 'mcp';
// The read-only tool that shows the model the memory, and counts as shown.
const VIEW = 'memory_view';

const rows = existsSync(TABLE) ? JSON.parse(readFileSync(TABLE, 'utf8')).behaviours : [];

test('the table is found', () => {
  assert.ok(rows.length > 0, `no behaviours in ${TABLE}: set METIS_REPO_ROOT`);
});

class RowFailed extends Error {}

function checkTexts(expect, prefix, text) {
  for (const wanted of expect[`${prefix}_contains`] ?? []) {
    if (!text.includes(wanted)) {
      throw new RowFailed(`the ${prefix} lacks ${JSON.stringify(wanted)}: ${JSON.stringify(text)}`);
    }
  }
  for (const unwanted of expect[`${prefix}_lacks`] ?? []) {
    if (text.includes(unwanted)) {
      throw new RowFailed(`the ${prefix} holds ${JSON.stringify(unwanted)}: ${JSON.stringify(text)}`);
    }
  }
}

/** The MCP server as a surface: a connection per session name, all on `ws`, with `HOME`
 * the row's own `home`. */
class Driver {
  constructor(ws, home) {
    this.ws = ws;
    this.home = home;
    this.sessions = new Map();
    // Every connection made, closed when the row ends.
    this.connections = [];
    // Set by `memory_options`: `off`, `read` or `write` (null: never set, no flag).
    this.globalUser = null;
    this.promptBudget = false;
  }

  /** The server's options so far: its flags and its `HOME`, the row's home, where it
   * finds the user's own `.metis/` by itself. */
  server() {
    const args = [];
    if (this.globalUser !== null) args.push('--global-user', this.globalUser);
    if (this.promptBudget) args.push('--prompt-budget');
    return { args, env: { HOME: this.home } };
  }

  /** Where a row's file name is: `~/…` in the row's home, else in `.metis/`. */
  onDisk(file) {
    return file.startsWith('~/') ? join(this.home, file.slice(2)) : this.ws.path(file);
  }

  /** The file's bytes as they are on disk, or null when it is missing. */
  bytes(file) {
    return bytesOrNull(this.onDisk(file));
  }

  async connect() {
    const connection = await connectWith(this.ws.root, this.server());
    this.connections.push(connection);
    return connection;
  }

  /** `tools/call`: whether it wrote and its text; a protocol error (no tool result) fails
   * the row. */
  async call(client, tool, input) {
    try {
      return await call(client, tool, input);
    } catch (error) {
      throw new RowFailed(`tools/call ${tool} failed: ${error}`);
    }
  }

  session(name) {
    const session = this.sessions.get(name);
    if (!session) throw new RowFailed(`session ${JSON.stringify(name)} was never opened`);
    return session;
  }

  async close() {
    await Promise.all(this.connections.map(({ client }) => client.close()));
  }

  async run(row) {
    for (const key of Object.keys(row)) {
      if (!ROW_KEYS.includes(key)) throw new RowFailed(`this driver does not know the row key ${JSON.stringify(key)}`);
    }
    for (const [file, text] of Object.entries(row.given ?? {})) {
      const path = this.onDisk(file);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
    }
    for (const [index, step] of row.steps.entries()) {
      try {
        await this.step(step);
      } catch (error) {
        if (!(error instanceof RowFailed)) throw error;
        const stderr = this.connections.map((c) => c.stderr()).join('');
        throw new RowFailed(
          `step ${index + 1} ${JSON.stringify(step)}: ${error.message}` +
            (stderr ? `\nthe servers' stderr:\n${stderr}` : ''),
        );
      }
    }
  }

  async step(step) {
    const kinds = Object.keys(STEPS).filter((kind) => kind in step);
    if (kinds.length !== 1) {
      const known = new Set(Object.values(STEPS).flatMap(([keys]) => keys));
      const unknown = Object.keys(step).filter((key) => !known.has(key));
      if (unknown.length > 0) throw new RowFailed(`this driver does not know the step key ${JSON.stringify(unknown[0])}`);
      throw new RowFailed(`a step is one of ${Object.keys(STEPS).join(', ')}, not keys ${Object.keys(step).join(', ')}`);
    }
    const [kind] = kinds;
    const [keys, checks] = STEPS[kind];
    for (const key of Object.keys(step)) {
      if (!keys.includes(key)) throw new RowFailed(`this driver does not know the step key ${JSON.stringify(key)}`);
    }
    const expect = step.expect ?? {};
    for (const key of Object.keys(expect)) {
      if (!checks.includes(key)) throw new RowFailed(`this driver does not know the ${kind} check ${JSON.stringify(key)}`);
    }

    switch (kind) {
      case 'open': {
        // A connection (a session opened again is a new connection), and the memory shown
        // to its model: a `memory_view` result, the one way over MCP sure to reach it.
        const { client } = await this.connect();
        this.sessions.set(step.open, client);
        const shown = await this.call(client, VIEW, {});
        if (!shown.ok) throw new RowFailed(`${VIEW} failed: ${JSON.stringify(shown.text)}`);
        checkTexts(expect, 'prompt', shown.text);
        break;
      }
      case 'start': {
        // A connection shown nothing: `initialize` alone, whose instructions a client may
        // never show its model.
        const { client } = await this.connect();
        this.sessions.set(step.start, client);
        break;
      }
      case 'call': {
        const outcome = await this.call(this.session(step.call), step.tool, step.input);
        if ('ok' in expect && expect.ok !== outcome.ok) {
          throw new RowFailed(`expected ok=${expect.ok}, got ok=${outcome.ok}: ${JSON.stringify(outcome.text)}`);
        }
        checkTexts(expect, 'text', outcome.text);
        break;
      }
      case 'next_response':
        // The model answers again: for MCP nothing, a refusal's content counted as seen
        // when it was sent. The session must exist all the same.
        this.session(step.next_response);
        break;
      case 'file': {
        const bytes = this.bytes(step.file);
        if (bytes === null || !bytes.equals(Buffer.from(step.is, 'utf8'))) {
          const shown = bytes === null ? 'missing' : JSON.stringify(bytes.toString('utf8'));
          throw new RowFailed(`${step.file} is ${shown}, expected ${JSON.stringify(step.is)}`);
        }
        break;
      }
      case 'add_under': {
        // `memory_add` through a server running under the cause. A tool result carries no
        // kind, only the text the model reads, which names the cause's kind in
        // parentheses (`read-only file system (read-only)`): that is what `kind` checks.
        const add = step.add_under;
        const connection = await connectUnder(add.cause, this.ws.root, this.server());
        if (connection === null) break;
        this.connections.push(connection);
        const outcome = await call(connection.client, 'memory_add', { file: add.file, entry: add.entry });
        if (outcome.ok) throw new RowFailed(`the add under ${add.cause} wrote: ${JSON.stringify(outcome.text)}`);
        if ('kind' in expect && !outcome.text.includes(`(${expect.kind})`)) {
          throw new RowFailed(`the text does not name the kind (${expect.kind}): ${JSON.stringify(outcome.text)}`);
        }
        checkTexts(expect, 'text', outcome.text);
        break;
      }
      case 'root_mode':
        chmodSync(this.ws.root, parseInt(step.root_mode, 8));
        break;
      case 'read_refused': {
        // A server on an unusable workspace refuses before serving: connecting fails, the
        // server exits 1 (its start refusal: kind `workspace`), the reason on its stderr.
        const said = await refusedAtStart(this.ws.root, this.server());
        if (said === null) throw new RowFailed('the server served an unusable workspace');
        if ((expect.kind ?? 'workspace') !== 'workspace') {
          throw new RowFailed(`a refusal at start is of kind workspace, not ${expect.kind}`);
        }
        checkTexts(expect, 'text', said);
        break;
      }
      case 'metis_holds': {
        const held = readdirSync(join(this.ws.root, '.metis')).sort();
        const wanted = [...step.metis_holds].sort();
        if (JSON.stringify(held) !== JSON.stringify(wanted)) {
          throw new RowFailed(`.metis/ holds ${JSON.stringify(held)}, expected ${JSON.stringify(wanted)}`);
        }
        break;
      }
      case 'memory_options': {
        // Every server started after this runs with these options; a key left out keeps
        // its value.
        const options = step.memory_options;
        for (const key of Object.keys(options)) {
          if (!OPTIONS.includes(key)) throw new RowFailed(`this driver does not know the option ${JSON.stringify(key)}`);
        }
        if ('global_user' in options) this.globalUser = options.global_user;
        if ('prompt_budget' in options) this.promptBudget = options.prompt_budget;
        break;
      }
      case 'version': {
        const wanted = witVersion(join(ROOT, step.version));
        const { client } = await this.connect();
        const reported = client.getServerVersion()?.version;
        if (reported !== wanted) {
          throw new RowFailed(`serverInfo.version is ${reported}, ${step.version} says ${wanted}`);
        }
        break;
      }
    }
  }
}

for (const [index, row] of rows.entries()) {
  const forThis = !row.surfaces || row.surfaces.includes(SURFACE);
  test(row.name ?? `row ${index + 1}`, { skip: forThis ? false : `not for this surface: ${row.surfaces_why}` }, async () => {
    const ws = new Workspace();
    // The row's own home, for the user's own `.metis/`: never the real one.
    const home = mkdtempSync(join(tmpdir(), 'metis-mcp-ts-home-'));
    const driver = new Driver(ws, home);
    try {
      await driver.run(row);
    } catch (error) {
      if (error instanceof RowFailed) assert.fail(`${row.name}: ${error.message}`);
      throw error;
    } finally {
      await driver.close();
      ws.remove();
      rmSync(home, { recursive: true, force: true });
    }
  });
}
