// The component's core modules, compiled once per process and memory limit (the guest's
// metered for fuel and memory, meter.js), and the limits a workspace runs calls under.

import path from "node:path";
import { fileURLToPath } from "node:url";
import { meterCoreModule } from "./meter.js";
import { readdir, readFile } from "node:fs/promises";
import { TrapError } from "./errors.js";

/** What one call may use, as the Rust and Python hosts' `Limits`. Fuel here is counted
 * per function entry and loop iteration (meter.js), so its default is not wasmtime's. */
export const DEFAULT_LIMITS = Object.freeze({ fuel: 100_000_000, memoryBytes: 64 << 20 });

/** The core module that holds the guest's code and memory; the others are jco's. */
export const GUEST_CORE_MODULE = "metis_memory.core.wasm";

const compiled = new Map();

export function coreModules(memoryBytes) {
  // Keyed by what the metered module holds: every limit past wasm32's 4 GiB is the same.
  memoryBytes = Math.min(memoryBytes, 65536 * 65536);
  let modules = compiled.get(memoryBytes);
  if (!modules) {
    modules = (async () => {
      const dir = fileURLToPath(new URL("./gen/", import.meta.url));
      const names = (await readdir(dir)).filter((name) => name.endsWith(".wasm"));
      const out = new Map();
      for (const name of names) {
        let bytes = await readFile(path.join(dir, name));
        if (name === GUEST_CORE_MODULE) bytes = meterCoreModule(bytes, memoryBytes);
        out.set(name, await WebAssembly.compile(bytes));
      }
      if (!out.has(GUEST_CORE_MODULE)) throw new Error(`${GUEST_CORE_MODULE} is missing`);
      return out;
    })().catch((error) => {
      compiled.delete(memoryBytes);
      throw new TrapError(`cannot load the memory component: ${error.message}`, { cause: error });
    });
    compiled.set(memoryBytes, modules);
  }
  return modules;
}

export function limitsOption(limits = {}) {
  const out = { ...DEFAULT_LIMITS, ...limits };
  for (const key of ["fuel", "memoryBytes"]) {
    if (!Number.isSafeInteger(out[key]) || out[key] <= 0) {
      throw new TypeError(`limits.${key} must be a positive integer, got ${out[key]}`);
    }
  }
  return Object.freeze({ fuel: out.fuel, memoryBytes: out.memoryBytes });
}
