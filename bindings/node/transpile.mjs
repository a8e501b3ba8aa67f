// Transpiles the component for this package: `node transpile.mjs COMPONENT.wasm` writes
// gen/ with jco's transpiler (@bytecodealliance/jco-transpile, the library `jco
// transpile` of jco 1.35 runs). Instantiation is left to index.js (`instantiation:
// "sync"`), which passes each instance a preview2-shim WASIShim of its own as its imports.
import { rm } from "node:fs/promises";
import { transpile, writeFiles } from "@bytecodealliance/jco-transpile";

const [component] = process.argv.slice(2);
if (!component) {
  console.error("usage: node transpile.mjs COMPONENT.wasm");
  process.exit(2);
}
const outDir = new URL("./gen/", import.meta.url).pathname;
await rm(outDir, { recursive: true, force: true });
const { files } = await transpile(component, {
  name: "metis_memory",
  outDir,
  instantiation: "sync",
  // As `jco transpile` does: a returned `err` is thrown as a ComponentError carrying it,
  // which index.js tells apart from a trap.
  noComponentErrorWrapping: false,
  emitTypescriptDeclarations: false,
});
const js = Object.keys(files).find((name) => name.endsWith(".js"));
files[js] = new TextEncoder().encode(withQuietDebugLog(withoutThrowingProbes(new TextDecoder().decode(files[js]))));
await writeFiles(files);

/** jco's instantiation tries `WebAssembly.promising` (JSPI) on a dozen exports, each in a
 * try/catch that falls back to the export itself; the results are never used in sync
 * mode. Where the engine has no JSPI, each try throws a TypeError whose message V8 builds
 * by parsing the enclosing function again: jco's 12,000-line instantiation generator,
 * about 3 ms a throw, every one on every instance. Asking whether it exists first gives
 * the catch's value without the throw; anything else calling it is refused, not shipped
 * slow. */
function withoutThrowingProbes(code) {
  const probe = /^(\s*)(\w+) = WebAssembly\.promising\(([^;\n]*)\);$/gm;
  let rewritten = 0;
  const out = code.replace(probe, (_, indent, name, arg) => {
    rewritten += 1;
    return `${indent}${name} = typeof WebAssembly.promising === "function" ? WebAssembly.promising(${arg}) : ${arg};`;
  });
  const calls = out.split("WebAssembly.promising(").length - 1;
  if (rewritten === 0 || calls !== rewritten) {
    throw new Error(`expected jco's WebAssembly.promising probes only, found ${rewritten} probes in ${calls} calls`);
  }
  return out;
}

/** jco's `_debugLog`, called some 200 times a call, reads `process.env.JCO_DEBUG` on every
 * call: a lookup in the process's environment each time (locked, on a worker thread),
 * about 0.3 ms of a 5 ms write in a profile of this package's worker. Read once, when the
 * module loads, it does the same for a process that sets it before starting. */
function withQuietDebugLog(code) {
  const slow = `  const _debugLog = (...args) => {
    if (!globalThis?.process?.env?.JCO_DEBUG) { return; }
    console.debug(...args);
  };`;
  const found = code.split(slow).length - 1;
  if (found !== 1) throw new Error(`expected jco's _debugLog once, found it ${found} times`);
  return code.replace(slow, "  const _debugLog = globalThis?.process?.env?.JCO_DEBUG ? (...args) => console.debug(...args) : () => {};");
}
