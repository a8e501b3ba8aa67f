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
files[js] = new TextEncoder().encode(withoutThrowingProbes(new TextDecoder().decode(files[js])));
await writeFiles(files);

/** jco's instantiation tries `WebAssembly.promising` (JSPI) on nine exports, each in a
 * try/catch that falls back to the export itself; the results are never used in sync
 * mode. Where the engine has no JSPI, each try throws a TypeError whose message V8 builds
 * by parsing the enclosing function again: jco's 12,000-line instantiation generator,
 * about 3 ms a throw, 28 ms an instance. Asking whether it exists first gives the catch's
 * value without the throw; anything else calling it is refused, not shipped slow. */
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
