// The workspace, as it runs on the worker thread that owns its instances (worker.js; the
// package's `openWorkspace` is remote.js's, which posts each call there): the component
// instantiated around the workspace's `.metis/`, opened and
// checked first (preopen.js), and with global user memory on, the user's own `.metis/`
// beside it (global-user.js); a fresh instance for each write, with an owner token of its
// own for the clean-up after a trap, and one kept for reads, dropped after a trap, past
// 8 MiB, or when either directory is another one. The workspace's settings reach each
// instance as the `store.settings` of the `store.workspace` made on it (resource.js), next
// to the owner token: what they mean is the component's. The guest sees no environment.

import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { setImmediate as loopTurn } from "node:timers/promises";
import { WASIShim } from "@bytecodealliance/preview2-shim/instantiation";
import { instantiate } from "./gen/metis_memory.js";
import { setFuel } from "./meter.js";
import { directoryId, metisDistrust, openDirectory, rootDistrust, sandboxFilesystem } from "./preopen.js";
import { globalUserOption } from "./global-user.js";
import { Session } from "./session.js";
import { StoreError, TrapError, WorkspaceError, failure, toolError } from "./errors.js";
import { DEFAULT_LIMITS, GUEST_CORE_MODULE, coreModules, limitsOption } from "./component.js";
import { release, settingsRecord, workspaceOf } from "./resource.js";
import { FILE_NAME, GLOBAL_USER_FILE, auditPolicy, composedPrompt, finding, heldSession, scanPolicy, sessionState, text, toolInput, toolSuccess, witFile, writeOptions, writeResult } from "./values.js";

/** The guest path `.metis/` is pre-opened at (`wit/world.wit`). */
const GUEST_METIS_DIR = ".metis";

/** The guest path the user's own `.metis/` is pre-opened at, with global user memory on
 * (`wit/world.wit`). */
const GUEST_GLOBAL_METIS_DIR = "global-metis";

/** A kept instance grown past this is dropped after its call, so that one large call does
 * not hold its memory for the life of the workspace (the Rust host's bound). */
const KEPT_MEMORY_BYTES = 8 << 20;

/** How many times a write is run again after its `.metis/` vanished under it. */
const VANISHED_RETRIES = 3;

/** The workspace as it runs on the thread that owns its instances (worker.js); the
 * package's `openWorkspace` hands out a proxy for it (remote.js). */
export class Workspace {
  #root;
  #followMetisLink;
  #readOnly;
  #trustForeignMetis;
  #limits;
  /** Global user memory (a GlobalUser, global-user.js), undefined when off. */
  #globalUser;
  #promptBudget;
  /** What every instance of this workspace is told, as a key a kept instance is made for. */
  #settings;
  /** The instance reads run on between calls, with what it was made for (`madeFor`: the
   * directoryId of each directory it sees, undefined for none, and the settings) and the
   * directories it holds open (`dirs`: `metis` and `global`, OpenedDirs or undefined). */
  #kept;

  constructor(root, options = {}) {
    this.#root = path.resolve(text(root, "workspace path"));
    this.#followMetisLink = options.followMetisLink === true;
    this.#readOnly = options.readOnly === true;
    this.#trustForeignMetis = options.trustForeignMetis === true;
    this.#limits = limitsOption(options.limits);
    this.#globalUser = globalUserOption(options.globalUser);
    this.#promptBudget = options.promptBudget === true;
    this.#settings = JSON.stringify([this.#readOnly, this.#globalUser?.access ?? null, this.#promptBudget]);
  }

  /** Whether `.metis/` is pre-opened read-only for every call: reads work, every write
   * fails (a ReadOnlyError, or a ToolError with its text) and changes nothing. */
  get readOnly() {
    return this.#readOnly;
  }

  get root() {
    return this.#root;
  }

  get limits() {
    return this.#limits;
  }

  get metisDir() {
    return path.join(this.#root, ".metis");
  }

  /** Global user memory as this workspace has it: `{ dir, agentWrites }`, or undefined
   * when it is off. */
  get globalUser() {
    return this.#globalUser?.options;
  }

  /** Whether each prompt section's heading shows how full its file is. */
  get promptBudget() {
    return this.#promptBudget;
  }

  /** The memory files this workspace has: the workspace's two, and the user's own with
   * global user memory on, unless it is the workspace's (a workspace at home). */
  memoryFiles() {
    const files = ["MEMORY.md", "USER.md"];
    if (this.#globalUser && !this.globalIsWorkspace()) files.push(GLOBAL_USER_FILE);
    return files;
  }

  /** Whether the user's own `.metis/` is this workspace's (a workspace at home: the same
   * device and inode): then the two USER.md are one file, which the component composes
   * and writes as the workspace's. */
  globalIsWorkspace() {
    if (!this.#globalUser) return false;
    let metis;
    let global;
    try {
      metis = this.#existingMetisDir();
    } catch {}
    try {
      global = this.#globalUser.existing();
    } catch {}
    return metis !== undefined && directoryId(metis) === directoryId(global);
  }

  /** Where `file` is on disk: in the workspace's `.metis/`, or for the user's own, in its
   * directory (undefined with global user memory off). */
  filePath(file) {
    const wit = witFile(file);
    if (wit !== "global-user") return path.join(this.metisDir, FILE_NAME[wit]);
    return this.#globalUser && path.join(this.#globalUser.dir, "USER.md");
  }

  async read(file) {
    return this.#store("read", file, ({ root }, f) => root.store.read(f));
  }

  async exists(file) {
    return this.#store("read", file, ({ root }, f) => root.store.exists(f));
  }

  async sizeBytes(file) {
    return this.#store("read", file, ({ root }, f) => Number(root.store.sizeBytes(f)));
  }

  async softCap(file) {
    return this.#store("read", file, ({ root }, f) => Number(root.store.softCap(f)));
  }

  async hardCap(file) {
    return this.#store("read", file, ({ root }, f) => Number(root.store.hardCap(f)));
  }

  async addEntry(file, entry) {
    text(entry, "entry");
    return this.#edit(file, { tag: "add-entry", val: entry });
  }

  async replace(file, oldText, newText) {
    text(oldText, "oldText");
    text(newText, "newText");
    return this.#edit(file, { tag: "replace", val: { oldText, newText } });
  }

  async consolidate(file, content) {
    text(content, "content");
    return this.#edit(file, { tag: "consolidate", val: content });
  }

  async consolidateIfUnchanged(file, content, expectedHash) {
    text(content, "content");
    text(expectedHash, "expectedHash");
    return this.#edit(file, { tag: "consolidate", val: content }, expectedHash);
  }

  /** `edit` of `file` as the plain write makes it, under this workspace's settings and
   * the write's owner token (`store.workspace.write`); with `ifUnchanged`, only while the
   * file is still that version. */
  #edit(file, edit, ifUnchanged) {
    const options = writeOptions(ifUnchanged);
    return this.#store("write", file, (instance, f) => writeResult(workspaceOf(instance).write(f, edit, options)));
  }

  async assembleSystemPrompt(base = "") {
    text(base, "base");
    // The plain call composes the default layout; global user memory or the budget needs
    // this workspace's, failing on a file that is not text as the plain call does.
    if (!this.#globalUser && !this.#promptBudget) {
      return this.#run("read", ({ root }) => root.store.assembleSystemPrompt(base));
    }
    return this.#run("read", (instance) => workspaceOf(instance).compose(base, { audit: "off", strict: true }).text);
  }

  async composeSystemPrompt(base = "", audit = "off") {
    text(base, "base");
    auditPolicy(audit);
    return this.#run("read", (instance) => composedPrompt(workspaceOf(instance).compose(base, { audit, strict: false })));
  }

  async audit(file) {
    return this.#store("read", file, ({ root }, f) => root.store.audit(f).map(finding));
  }

  async toolDefinitions() {
    return this.#run("read", ({ root }) =>
      root.tools.definitions().map((tool) => ({
        name: tool.name,
        description: tool.description,
        input_schema: JSON.parse(tool.inputSchema),
      })),
    );
  }

  /** One tool call outside any session, held as a session would hold it: to a model shown
   * `seen` (nothing when absent) with `withheld` kept from it, so a `memory_consolidate`
   * of a file not in `seen` that is not empty is refused, showing its content. With
   * `unheld: true`, the call is made as before sessions held it (`hold-unseen: false`):
   * a file not in `seen` is consolidated whatever it holds. */
  async callTool(name, input, options = {}) {
    text(name, "name");
    const inputText = toolInput(input);
    const { seen, withheld, scan, unheld } = options;
    const callOptions = { scan: scanPolicy(scan), session: heldSession(seen, withheld), holdUnseen: unheld !== true };
    return this.#run("write", (instance) => {
      const { outcome } = instance.root.tools.callWithOptions(workspaceOf(instance), name, inputText, callOptions);
      return toolOutcome(outcome);
    });
  }

  /** A conversation with this workspace's memory: prompts and memory updates composed
   * under `audit`, tool calls scanned under `scan` and held to what the model has been
   * shown (session.js); with `snapshot`, the system prompt is composed once per base and
   * kept byte-identical. */
  session({ audit = "omit", scan, snapshot = false } = {}) {
    auditPolicy(audit);
    const policy = scanPolicy(scan);
    // Each runs the component and keeps the session it returns in one synchronous step
    // (`keep`), so concurrent calls of one session each take the one before's session; a
    // snapshot session's frozen prompt is looked up and set in that step too.
    return new Session(this, audit, snapshot === true, {
      systemPrompt: (base, kept, keep, frozen) => {
        text(base, "base");
        return this.#run("read", (instance) => {
          const held = frozen.get();
          if (held && held.base === base) {
            const session = instance.root.tools.nextResponse(kept());
            keep(session, sessionState(session));
            return composedPrompt(held.prompt);
          }
          const prompt = workspaceOf(instance).compose(base, { audit, strict: false });
          keep(prompt.session, sessionState(prompt.session));
          frozen.set(base, prompt);
          return composedPrompt(prompt);
        });
      },
      memoryUpdate: (kept, keep) =>
        this.#run("read", (instance) => {
          const { text, session } = workspaceOf(instance).update(kept(), audit);
          keep(session, sessionState(session));
          return text ?? null;
        }),
      showFile: (file, whole, kept, keep) =>
        this.#store("read", file, (instance, wit) => {
          const { text, findings, withheld, session } = workspaceOf(instance).show(wit, kept(), audit, whole);
          keep(session, sessionState(session));
          return { text, findings: findings.map(finding), withheld };
        }),
      callTool: async (name, input, kept, keep) => {
        text(name, "name");
        const inputText = toolInput(input);
        // The session the call takes, read once: a write run again after its `.metis/`
        // vanished runs from it again, and only the last run's session is kept (the
        // model is told that run's outcome alone). Nothing awaits between the runs.
        let taken;
        return this.#run("write", (instance) => {
          taken ??= kept();
          const options = { scan: policy, session: taken, holdUnseen: true };
          const { outcome, session } = instance.root.tools.callWithOptions(workspaceOf(instance), name, inputText, options);
          keep(session, sessionState(session));
          return toolOutcome(outcome);
        });
      },
      nextResponse: (kept, keep) =>
        this.#run("read", ({ root }) => {
          const session = root.tools.nextResponse(kept());
          keep(session, sessionState(session));
        }),
    });
  }

  /** A call about `file`, checked first: `op(instance, witFile)`. */
  #store(access, file, op) {
    const wit = witFile(file);
    return this.#run(access, (instance) => op(instance, wit));
  }

  /** Runs `f(instance)` on an instance that sees `.metis/` (`root`, jco's exports; for
   * the component's `store.workspace`, resource.js's `workspaceOf`): a read on the kept
   * instance, a write on a fresh one (after creating `.metis/`), then undoes what a
   * failed write left behind. A store refusal rejects with its StoreError. */
  async #run(access, f) {
    const modules = await coreModules(this.#limits.memoryBytes);
    await nextTurn();
    // Nothing awaits from here on, so the checks below hold for the call they precede.
    return access === "read" ? this.#read(modules, f) : this.#write(modules, f);
  }

  /** Runs the read `f` on the kept instance if it was made for the directories there now
   * (the same `.metis/`, or none; with global user memory on, the same user's own
   * `.metis/`, or none) and this workspace's settings, else on one made now; it is kept
   * for the next read unless the call failed other than by the store's refusal (a
   * trapped instance must not be entered again) or its memory grew past
   * KEPT_MEMORY_BYTES. The kept instance holds the directories it was made for open, so
   * a `.metis` swapped after the check below is not what it reads. */
  #read(modules, f) {
    const madeFor = {
      metis: directoryId(this.#existingMetisDir()),
      global: directoryId(this.#globalUser?.existing()),
      settings: this.#settings,
    };
    // Taken for this call, and put back only if it is still fit to use.
    let kept = this.#kept;
    this.#kept = undefined;
    if (kept && !sameMadeFor(kept.madeFor, madeFor)) {
      drop(kept);
      kept = undefined;
    }
    try {
      if (kept?.dirs.metis) this.#checkTrust(kept.dirs.metis);
      if (kept?.dirs.global) this.#globalUser.recheck(kept.dirs.global);
      if (!kept) {
        const dirs = {};
        try {
          if (madeFor.metis !== undefined) dirs.metis = this.#openMetisDir();
          if (madeFor.global !== undefined) dirs.global = this.#openGlobalDir();
          const made = { metis: dirs.metis?.id, global: dirs.global?.id, settings: this.#settings };
          // Reads only: the owner is left random.
          kept = { madeFor: made, dirs, ...this.#instantiate(modules, dirs, true, undefined) };
        } catch (e) {
          closeDirs(dirs);
          throw e;
        }
      }
      const value = this.#call(kept, f);
      this.#keep(kept);
      return value;
    } catch (e) {
      if (kept && e instanceof StoreError) this.#keep(kept);
      else if (kept) drop(kept);
      throw e;
    }
  }

  /** Puts `kept` back for the next read, unless it grew past KEPT_MEMORY_BYTES. */
  #keep(kept) {
    if (kept.guest.exports.memory.buffer.byteLength <= KEPT_MEMORY_BYTES) this.#kept = kept;
    else drop(kept);
  }

  /** Runs the write `f` on a fresh instance with an owner token of its own, so that after
   * a trap exactly its lock and temporary file can be told apart and removed. A read-only
   * workspace's instance can change nothing, so nothing is cleaned up after it. With
   * global user memory on, the user's own `.metis/` is created (0700) if it is missing,
   * and removed again, if still empty, when the call fails. */
  #write(modules, f) {
    // Whether a try below created the user's own `.metis/`: kept across the tries.
    let createdGlobal = false;
    try {
      // A write whose `.metis/` vanished under it (another writer's refused first write
      // removes the `.metis/` it created while still empty) wrote nothing there, and runs
      // again in the new one.
      for (let attempt = 0; ; attempt++) {
        const last = attempt >= VANISHED_RETRIES;
        const created = this.#prepare();
        // Pre-opened as opened here, never through a link swapped in after the check.
        const dirs = {};
        try {
          createdGlobal = this.#prepareGlobal() || createdGlobal;
          dirs.metis = this.#openMetisDir();
          dirs.global = this.#openGlobalDir();
        } catch (e) {
          closeDirs(dirs);
          if (created) this.#removeCreated();
          throw e;
        }
        if (!dirs.metis && !this.#readOnly) {
          closeDirs(dirs);
          if (!last) continue;
          throw new WorkspaceError(`${this.metisDir} was removed as the call began; nothing was written`);
        }
        const owner = ownerToken();
        let instance;
        try {
          instance = this.#instantiate(modules, dirs, this.#readOnly, owner);
          return this.#call(instance, f);
        } catch (e) {
          if (e instanceof TrapError && !this.#readOnly) this.#recoverAfterTrap(modules, dirs, owner, e);
          if (created) this.#removeCreated();
          // A call that created `.metis/` removed it itself just now.
          if (!(e instanceof TrapError) && !created && !last && dirs.metis && !this.#readOnly && this.#vanished(dirs.metis.id)) continue;
          throw e;
        } finally {
          if (instance) release(instance);
          closeDirs(dirs);
        }
      }
    } catch (e) {
      if (createdGlobal) this.#globalUser.removeCreated();
      throw e;
    }
  }

  /** Makes sure the user's own `.metis/` is there for a write to pre-open; whether this
   * call created it: only a write to a workspace that is not read-only, with global user
   * memory on, creates it. */
  #prepareGlobal() {
    if (!this.#globalUser || this.#readOnly) return false;
    return this.#globalUser.create();
  }

  /** The user's own `.metis/` opened (an OpenedDir, which the caller closes) and checked
   * whatever `trustForeignMetis` says, or undefined when global user memory is off or
   * there is none. */
  #openGlobalDir() {
    return this.#globalUser?.open();
  }

  /** Removes the `.metis/` this call created, if it is still empty. */
  #removeCreated() {
    try {
      fs.rmdirSync(this.metisDir);
    } catch {
      // Not empty (another writer's file is there) or already gone: leave it.
    }
  }

  /** Whether `.metis/` is no longer the directory `metis` names (removed, or replaced). */
  #vanished(metis) {
    try {
      return directoryId(this.#existingMetisDir()) !== metis;
    } catch {
      return false;
    }
  }

  /** A new instance that sees the directories `dirs` (`metis`, the workspace's `.metis/`,
   * and `global`, the user's own; none where undefined; through read-only pre-opens if
   * `readOnly`), and no environment: `root` (jco's exports), its guest core instance
   * (`guest`), which holds the fuel and the memory, and the `settings` its
   * `store.workspace` is made with (resource.js): this workspace's, `readOnly`, and
   * `owner`. `dirs` must stay open for as long as the instance is used. */
  #instantiate(modules, dirs, readOnly, owner) {
    let guest;
    try {
      const { filesystem, preopens } = sandboxFilesystem(
        { [GUEST_METIS_DIR]: dirs.metis, [GUEST_GLOBAL_METIS_DIR]: dirs.global },
        readOnly,
      );
      const shim = new WASIShim({
        filesystem,
        sandbox: {
          preopens,
          env: {},
          args: [],
          enableNetwork: false,
        },
      });
      const root = instantiate((name) => modules.get(name), shim.getImportObject(), (module, imports) => {
        const instance = new WebAssembly.Instance(module, imports);
        if (module === modules.get(GUEST_CORE_MODULE)) {
          // Instantiating may run guest code, which is metered too.
          setFuel(instance, this.#limits.fuel);
          guest = instance;
        }
        return instance;
      });
      // The component refuses every write of a read-only workspace itself, with
      // `read-only`, as under every host; read-only.js is the sandbox's own guarantee.
      const settings = settingsRecord(
        { readOnly, globalUser: this.#globalUser?.access, promptBudget: this.#promptBudget },
        owner,
      );
      return { root, guest, settings };
    } catch (e) {
      throw failure(e, guest);
    }
  }

  /** Runs `f(instance)` with the whole fuel limit, as every call gets; an instance that
   * trapped is marked so (`trapped`), never to be entered again. */
  #call(instance, f) {
    setFuel(instance.guest, this.#limits.fuel);
    try {
      return f(instance);
    } catch (e) {
      const error = failure(e, instance.guest);
      if (error instanceof TrapError) instance.trapped = true;
      throw error;
    }
  }

  /** The component's `recover-after-trap`, on a fresh instance that sees the trapped
   * call's directories (`dirs`: `.metis/`, and the user's own) and is given its `owner`:
   * it removes what that call left there (its lock, put back if another writer's; its
   * pending lock; its temporary file) and says whether its write landed, which
   * `trap.written` then tells the caller. Run under the default fuel: the caller's limit
   * may be what the trapped call ran out of. If even this traps, the lock is left to
   * expire (a lease, as after a crash) and what landed is not known. */
  #recoverAfterTrap(modules, dirs, owner, trap) {
    if (!dirs.metis && !dirs.global) return;
    try {
      const instance = this.#instantiate(modules, dirs, false, undefined);
      setFuel(instance.guest, DEFAULT_LIMITS.fuel);
      const landing = instance.root.store.recoverAfterTrap(owner);
      trap.written = landing === "untraced" ? null : landing === "written";
    } catch {
      trap.written = null;
    }
  }

  /** Makes sure `.metis/` is there for a write to pre-open; whether this call created it:
   * only a write to a workspace that is not read-only creates it, and not in a root this
   * user may not trust. */
  #prepare() {
    if (this.#existingMetisDir() || this.#readOnly) return false;
    this.#checkRoot();
    try {
      fs.mkdirSync(this.metisDir, { mode: 0o700 });
    } catch (e) {
      if (e.code === "EEXIST") return false;
      throw new WorkspaceError(`cannot create ${this.metisDir}: ${e.message}`, { cause: e });
    }
    // The new entry in the workspace directory is made durable before anything is written
    // into it, as the rename of a file into `.metis/` is by its own sync.
    let fd;
    try {
      fd = fs.openSync(this.root, "r");
      fs.fsyncSync(fd);
      return true;
    } catch (e) {
      try {
        fs.rmdirSync(this.metisDir);
      } catch {}
      throw new WorkspaceError(`cannot sync ${this.root} after creating .metis/ in it: ${e.message}`, { cause: e });
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
  }

  /** `.metis/` opened (an OpenedDir, which the caller closes) and checked, or undefined
   * when there is none: never through a symbolic link this workspace was not told to
   * follow, and only a directory this user may trust. */
  #openMetisDir() {
    const dir = this.metisDir;
    let opened;
    try {
      opened = openDirectory(dir, this.#followMetisLink);
    } catch (e) {
      // None at that moment (what a read finds then is no memory; a write creates it
      // again); else say why as #existingMetisDir does (a link refused, not a directory),
      // and a directory again by now means it was swapped meanwhile.
      if (e.code === "ENOENT" || this.#existingMetisDir() === undefined) return undefined;
      if (e.code === "ELOOP" || e.code === "ENOTDIR") {
        throw new WorkspaceError(
          `${dir} changed as it was opened (it was a symbolic link or not a directory a moment ago: ${e.message}), so it is refused`,
          { cause: e },
        );
      }
      throw new WorkspaceError(`cannot open ${dir}: ${e.message}`, { cause: e });
    }
    try {
      this.#checkTrust(opened);
    } catch (e) {
      opened.close();
      throw e;
    }
    return opened;
  }

  /** Refuses `opened` (this workspace's `.metis/`) if another user owns it, or if it is in
   * a root every user can write and it has no sticky bit; unless `trustForeignMetis`. */
  #checkTrust(opened) {
    if (this.#trustForeignMetis) return;
    let distrust;
    try {
      distrust = metisDistrust(opened, this.#root, this.metisDir);
    } catch (e) {
      throw new WorkspaceError(`cannot check ${this.metisDir}: ${e.message}`, { cause: e });
    }
    if (distrust) throw new WorkspaceError(distrust);
  }

  /** Refuses to create `.metis/` in a root every user can write that has no sticky bit;
   * unless `trustForeignMetis`. */
  #checkRoot() {
    if (this.#trustForeignMetis) return;
    let distrust;
    try {
      distrust = rootDistrust(this.#root);
    } catch (e) {
      throw new WorkspaceError(`cannot check ${this.#root}: ${e.message}`, { cause: e });
    }
    if (distrust) throw new WorkspaceError(distrust);
  }

  /** `.metis/`'s stat if it exists, else undefined; an error if something other than a
   * directory is there, or a symbolic link this workspace was not told to follow. */
  #existingMetisDir() {
    const dir = this.metisDir;
    let isLink = false;
    try {
      isLink = fs.lstatSync(dir).isSymbolicLink();
    } catch {}
    if (isLink && !this.#followMetisLink) {
      let target = "";
      try {
        target = fs.readlinkSync(dir);
      } catch {}
      throw new WorkspaceError(
        `${dir} is a symbolic link to ${target}: memory would be read and written outside this workspace, so it is refused (if you keep memory there on purpose, pass { followMetisLink: true } to openWorkspace)`,
      );
    }
    let stat;
    try {
      stat = fs.statSync(dir, { bigint: true });
    } catch (e) {
      if (e.code === "ENOENT") return undefined;
      throw new WorkspaceError(`cannot access ${dir}: ${e.message}`, { cause: e });
    }
    if (!stat.isDirectory()) throw new WorkspaceError(`${dir} exists but is not a directory`);
    return stat;
  }
}

/** The turn of the event loop the last call made runs in (see `nextTurn`). */
let lastTurn = Promise.resolve();

/** A turn of the event loop of its own for the next call: one after the turn of every
 * call made before it. A call's work runs in one synchronous step (jco's instantiation,
 * the component, preview2-shim's file system) on the worker thread that owns the
 * instances (worker.js, remote.js), so the caller's loop turns meanwhile; here it keeps
 * that thread's own messages (the next calls posted) flowing between calls. Calls still
 * run in the order they were made. */
function nextTurn() {
  lastTurn = lastTurn.then(() => loopTurn());
  return lastTurn;
}

/** Lets go of a dropped kept instance's `store.workspace` and closes the directories it
 * held open. */
function drop(kept) {
  release(kept);
  closeDirs(kept.dirs);
}

/** Closes the directories of `dirs` (`metis`, `global`) that were opened. */
function closeDirs(dirs) {
  dirs.metis?.close();
  dirs.global?.close();
}

/** Whether a kept instance made for `a` may serve a read made for `b`: the same
 * directories (or none) and the same settings. */
function sameMadeFor(a, b) {
  return a.metis === b.metis && a.global === b.global && a.settings === b.settings;
}

/** A write's owner token (`settings.owner`, a u64): its lock and temporary file are named
 * after it. */
function ownerToken() {
  return randomBytes(8).readBigUInt64BE();
}

/** A tool call's outcome: its ToolSuccess, or its refusal thrown, inside the write, so
 * that a refused first write removes the `.metis/` it created. */
function toolOutcome(outcome) {
  if (outcome.tag === "err") throw toolError(outcome.val);
  return toolSuccess(outcome.val);
}

/** The workspace at `root` (its memory lives in `root/.metis/`). Nothing is touched
 * until a call is made. Options: `followMetisLink`, `readOnly`, `trustForeignMetis`,
 * `limits`, `globalUser` (`{ dir, agentWrites }`: global user memory on, `dir` defaulting
 * to `$HOME/.metis`), `promptBudget`. */
export function openWorkspace(root, options) {
  return new Workspace(root, options);
}
