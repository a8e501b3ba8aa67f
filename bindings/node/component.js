// The component's core modules, compiled once per process and memory limit (the guest's
// metered for fuel and memory, meter.js, on a thread of its own), and the limits a
// workspace runs calls under.

import path from "node:path";
import { fileURLToPath } from "node:url";
import { Worker, isMainThread } from "node:worker_threads";
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
        if (name === GUEST_CORE_MODULE) bytes = await meterOffThread(bytes, memoryBytes);
        // Asynchronous, so it holds nothing up; V8 compiles each function lazily, on its
        // first call (a part of what the first instantiation costs this thread).
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

/** What the metering thread runs: meter.js on the bytes it is given, the result sent back
 * (its buffer moved, not copied). */
const METER_THREAD = `
const { parentPort, workerData } = require("node:worker_threads");
import(workerData.meter).then(({ meterCoreModule }) => {
  const metered = meterCoreModule(workerData.bytes, workerData.memoryBytes);
  parentPort.postMessage(metered, [metered.buffer]);
});
`;

/** The guest's core module metered (meter.js) on a worker thread: metering walks every
 * instruction of half a megabyte of code, some 16 ms of JavaScript that on this thread
 * would hold up every timer and I/O callback of the process during the first call (on the
 * worker thread that owns the instances, worker.js, it is metered there). Where
 * a worker cannot be had (or fails), it is metered here instead, as before, which also
 * raises meter.js's own error for a module it refuses. */
async function meterOffThread(bytes, memoryBytes) {
  // On the thread that owns the instances (worker.js), already off the loop's: here, so
  // that no third thread competes with the two for the cores.
  if (!isMainThread) return meterCoreModule(bytes, memoryBytes);
  try {
    return await new Promise((resolve, reject) => {
      const worker = new Worker(METER_THREAD, {
        eval: true,
        // Only the metering: none of this process's options or loaders.
        execArgv: [],
        workerData: { meter: new URL("./meter.js", import.meta.url).href, bytes, memoryBytes },
      });
      worker.once("message", resolve);
      worker.once("error", reject);
      worker.once("exit", (code) => reject(new Error(`the metering thread exited with ${code}`)));
    });
  } catch {
    return meterCoreModule(bytes, memoryBytes);
  }
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
