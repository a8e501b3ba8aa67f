// Transpiles the component for this package: `node transpile.mjs COMPONENT.wasm` writes
// gen/ with jco's transpiler (@bytecodealliance/jco-transpile, the library `jco
// transpile` of jco 1.35 runs). Instantiation is left to index.js (`instantiation:
// "sync"`), which passes each call a fresh preview2-shim WASIShim as its imports.
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
await writeFiles(files);
