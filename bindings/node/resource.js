// The component's `store.workspace` resource on an instance (workspace.js's): made once per
// instance, with the `store.settings` the instance was made for, and let go of with the
// instance. What a setting means is the component's (`wit/store.wit`).

import { DEFAULT_LIMITS } from "./component.js";
import { setFuel } from "./meter.js";

/** jco's name for a resource's destructor (`[Symbol.dispose]()`). */
const DISPOSE = Symbol.dispose ?? Symbol.for("dispose");

/** The `store.settings` record of an instance of a workspace that is `readOnly`, with
 * global user memory `globalUser` ("read" or "write", or undefined: off) and the prompt
 * budget `promptBudget`, whose write names its lock and temporary file after `owner` (a
 * bigint, for `recover-after-trap`; undefined: random). `.metis/` on a read-only mount is
 * left to the WASI filesystem, which reports EROFS as such (os-errors.js). */
export function settingsRecord({ readOnly, globalUser, promptBudget }, owner) {
  return { readOnly, readOnlyMount: false, globalUser, promptBudget, owner };
}

/** The instance's `store.workspace`, made with its `settings` on first use and kept with
 * it (`instance.workspace`) until `release`. */
export function workspaceOf(instance) {
  instance.workspace ??= new instance.root.store.Workspace(instance.settings);
  return instance.workspace;
}

/** Lets go of the `store.workspace` of an instance that is being dropped, at once: jco
 * would otherwise call its destructor from a finalizer whenever the garbage collector
 * gets to it, where a trap (a spent instance) is an uncaught exception that ends the
 * thread. The destructor runs under the default fuel; after a trap (`instance.trapped`)
 * the instance is not entered again: with no fuel, the destructor traps on entry,
 * running nothing, as wasmtime drops a trapped store without running the guest's. */
export function release(instance) {
  const { workspace } = instance;
  if (!workspace) return;
  instance.workspace = undefined;
  setFuel(instance.guest, instance.trapped ? 0 : DEFAULT_LIMITS.fuel);
  try {
    workspace[DISPOSE]();
  } catch {
    // Spent, or it trapped: the instance goes anyway.
  }
}
