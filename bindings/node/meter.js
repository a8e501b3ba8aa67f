// Fuel and a memory bound for a core module, since JavaScript engines have neither.
//
// wasmtime counts fuel per instruction and caps memory growth with a limiter; here the
// core module itself is rewritten once, when it is loaded:
// - its memory's declared maximum becomes the limit, so `memory.grow` past it fails in
//   the guest exactly as under wasmtime's limiter (the allocator then aborts: a trap);
// - a mutable i64 global, exported as `metis_fuel`, is charged one unit on entry to every
//   function and at the head of every loop iteration, and `unreachable` traps when it is
//   spent. Those are the only ways wasm code runs on (a loop branches back, or calls
//   recurse), so every call ends within its fuel, as with wasmtime's; the unit is coarser
//   (a loop iteration, not an instruction), which is why the default differs.
// An instruction this decoder does not know is an error at load, never a silent pass.

const SECTION = { import: 2, function: 3, memory: 5, global: 6, export: 7, code: 10 };
/** The sections that come after the global section, in wasm's section order. */
const AFTER_GLOBAL = new Set([7, 8, 9, 12, 10, 11]);
const PAGE_BYTES = 65536;
const MAX_PAGES = 65536;
const FUEL_EXPORT = "metis_fuel";

/** Returns `bytes` (a core module) with a memory maximum of `memoryBytes` and fuel
 * metering; `metis_fuel` is the exported global to set before each call. */
export function meterCoreModule(bytes, memoryBytes) {
  const module = new Uint8Array(bytes);
  if (module[0] !== 0 || module[1] !== 0x61 || module[2] !== 0x73 || module[3] !== 0x6d) {
    throw new Error("not a core wasm module");
  }
  const sections = [];
  const reader = new Reader(module, 8);
  while (!reader.done()) {
    const id = reader.byte();
    const size = reader.u32();
    if (reader.at + size > module.length) throw new Error(`section ${id} runs past the module's end`);
    sections.push({ id, body: module.subarray(reader.at, reader.at + size) });
    reader.at += size;
  }
  // wasm32 memory has at most 65536 pages (4 GiB): a larger limit is no limit.
  const maxPages = Math.min(MAX_PAGES, Math.floor(memoryBytes / PAGE_BYTES));
  const importedGlobals = patchImports(sections, maxPages);
  let definedGlobals = 0;
  const out = [module.subarray(0, 8)];
  let globalWritten = false;
  const fuelGlobal = () => importedGlobals + definedGlobals;
  for (const section of sections) {
    // A new global section goes where it belongs: after memory (5) and before export (7).
    if (!globalWritten && AFTER_GLOBAL.has(section.id)) {
      out.push(encodeSection(SECTION.global, globals(new Uint8Array(), 0)));
      globalWritten = true;
    }
    let body = section.body;
    if (section.id === SECTION.memory) body = limitMemories(body, maxPages);
    if (section.id === SECTION.global) {
      const r = new Reader(body, 0);
      definedGlobals = r.u32();
      body = globals(body.subarray(r.at), definedGlobals);
      globalWritten = true;
    }
    if (section.id === SECTION.export) body = addExport(body, fuelGlobal());
    if (section.id === SECTION.code) body = meterCode(body, fuelGlobal());
    out.push(encodeSection(section.id, body));
  }
  if (!sections.some((s) => s.id === SECTION.export)) {
    throw new Error("the core module has no export section");
  }
  return concat(out);
}

/** Sets a metered instance's fuel (a no-op for a module this file did not meter). */
export function setFuel(instance, fuel) {
  const global = instance.exports[FUEL_EXPORT];
  if (global) global.value = BigInt(fuel);
}

/** Whether a metered instance ran out of fuel. */
export function fuelSpent(instance) {
  const global = instance.exports[FUEL_EXPORT];
  return global !== undefined && global.value === 0n;
}

// A global section: the existing entries, then `(global (mut i64) (i64.const 0))`.
function globals(entries, count) {
  return concat([leb(count + 1), entries, Uint8Array.of(0x7e, 0x01, 0x42, 0x00, 0x0b)]);
}

function addExport(body, globalIndex) {
  const r = new Reader(body, 0);
  const count = r.u32();
  const name = new TextEncoder().encode(FUEL_EXPORT);
  return concat([
    leb(count + 1),
    body.subarray(r.at),
    leb(name.length),
    name,
    Uint8Array.of(0x03),
    leb(globalIndex),
  ]);
}

// Counts imported globals and bounds an imported memory (a module may import its memory
// instead of defining it). Rewrites the import section in place in `sections`.
function patchImports(sections, maxPages) {
  const section = sections.find((s) => s.id === SECTION.import);
  if (!section) return 0;
  const r = new Reader(section.body, 0);
  const out = [];
  let globalsSeen = 0;
  const count = r.u32();
  out.push(leb(count));
  for (let i = 0; i < count; i++) {
    const start = r.at;
    r.bytes(r.u32());
    r.bytes(r.u32());
    const kind = r.byte();
    if (kind === 0x02) {
      out.push(section.body.subarray(start, r.at));
      out.push(limits(r, maxPages));
      continue;
    }
    if (kind === 0x00) r.u32();
    else if (kind === 0x01) {
      r.byte();
      skipLimits(r);
    } else if (kind === 0x03) {
      r.byte();
      r.byte();
      globalsSeen += 1;
    } else throw new Error(`unknown import kind ${kind}`);
    out.push(section.body.subarray(start, r.at));
  }
  section.body = concat(out);
  return globalsSeen;
}

function limitMemories(body, maxPages) {
  const r = new Reader(body, 0);
  const count = r.u32();
  const out = [leb(count)];
  for (let i = 0; i < count; i++) out.push(limits(r, maxPages));
  return concat(out);
}

// Memory limits with the maximum lowered to `maxPages` (kept when already lower).
function limits(r, maxPages) {
  const flags = r.byte();
  if (flags !== 0x00 && flags !== 0x01) throw new Error(`unsupported memory limits ${flags}`);
  const min = r.u32();
  const max = flags === 0x01 ? Math.min(r.u32(), maxPages) : maxPages;
  if (max < min) {
    throw new RangeError(
      `a memory limit of ${maxPages * PAGE_BYTES} bytes is below the module's initial memory of ${min * PAGE_BYTES} bytes`,
    );
  }
  return concat([Uint8Array.of(0x01), leb(min), leb(max)]);
}

function skipLimits(r) {
  const flags = r.byte();
  r.u32();
  if (flags & 0x01) r.u32();
}

// The charge: `if fuel == 0 trap; fuel -= 1`.
function charge(global) {
  const g = leb(global);
  return concat([
    Uint8Array.of(0x23), g, Uint8Array.of(0x50, 0x04, 0x40, 0x00, 0x0b),
    Uint8Array.of(0x23), g, Uint8Array.of(0x42, 0x01, 0x7d, 0x24), g,
  ]);
}

function meterCode(body, global) {
  const r = new Reader(body, 0);
  const count = r.u32();
  const cost = charge(global);
  const out = [leb(count)];
  for (let i = 0; i < count; i++) {
    const size = r.u32();
    const end = r.at + size;
    if (end > body.length) throw new Error(`function ${i} runs past the code section's end`);
    const fn = new Reader(body.subarray(0, end), r.at);
    const locals = fn.u32();
    for (let j = 0; j < locals; j++) {
      fn.u32();
      fn.byte();
    }
    const parts = [body.subarray(r.at, fn.at), cost];
    let from = fn.at;
    while (!fn.done()) {
      const op = fn.byte();
      if (op === 0x03) {
        blockType(fn);
        parts.push(body.subarray(from, fn.at), cost);
        from = fn.at;
      } else {
        immediates(op, fn);
      }
    }
    parts.push(body.subarray(from, end));
    const metered = concat(parts);
    out.push(leb(metered.length), metered);
    r.at = end;
  }
  return concat(out);
}

function blockType(r) {
  const b = r.peek();
  if (b === 0x40 || (b >= 0x6f && b <= 0x7f)) r.byte();
  else r.s64();
}

// Skips the immediates of the instruction `op` (MVP, sign extension, saturating
// conversions, bulk memory, reference types, multi-value: what Rust's wasm32 targets emit).
function immediates(op, r) {
  if (op === 0x02 || op === 0x04) return blockType(r);
  if (op === 0x0c || op === 0x0d || op === 0x10) return r.u32();
  if (op === 0x0e) {
    const n = r.u32();
    for (let i = 0; i <= n; i++) r.u32();
    return;
  }
  if (op === 0x11) {
    r.u32();
    return r.u32();
  }
  if (op === 0x1c) {
    const n = r.u32();
    for (let i = 0; i < n; i++) r.byte();
    return;
  }
  if (op >= 0x20 && op <= 0x26) return r.u32();
  if (op >= 0x28 && op <= 0x3e) {
    const align = r.u32();
    if (align & 0x40) r.u32();
    return r.u32();
  }
  if (op === 0x3f || op === 0x40) return r.u32();
  if (op === 0x41 || op === 0x42) return r.s64();
  if (op === 0x43) return r.bytes(4);
  if (op === 0x44) return r.bytes(8);
  if (op === 0xd0) return r.byte();
  if (op === 0xd2) return r.u32();
  if (op === 0xfc) return prefixedFc(r.u32(), r);
  if (op <= 0x01 || op === 0x05 || op === 0x0b || op === 0x0f || op === 0x1a || op === 0x1b) {
    return;
  }
  if ((op >= 0x45 && op <= 0xc4) || op === 0xd1) return;
  throw new Error(`unsupported instruction 0x${op.toString(16)} at byte ${r.at - 1}`);
}

function prefixedFc(sub, r) {
  if (sub <= 7) return;
  const immediateCounts = { 8: 2, 9: 1, 10: 2, 11: 1, 12: 2, 13: 1, 14: 2, 15: 1, 16: 1, 17: 1 };
  const n = immediateCounts[sub];
  if (n === undefined) throw new Error(`unsupported instruction 0xfc ${sub}`);
  for (let i = 0; i < n; i++) r.u32();
}

class Reader {
  constructor(bytes, at) {
    this.data = bytes;
    this.at = at;
  }
  done() {
    return this.at >= this.data.length;
  }
  peek() {
    if (this.done()) throw new Error("truncated module");
    return this.data[this.at];
  }
  byte() {
    const b = this.peek();
    this.at += 1;
    return b;
  }
  bytes(n) {
    if (this.at + n > this.data.length) throw new Error("truncated module");
    this.at += n;
  }
  u32() {
    let value = 0;
    let shift = 0;
    for (;;) {
      const b = this.byte();
      value += (b & 0x7f) * 2 ** shift;
      if (!(b & 0x80)) return value;
      shift += 7;
      if (shift > 35) throw new Error("bad LEB128");
    }
  }
  s64() {
    for (let i = 0; i < 10; i++) if (!(this.byte() & 0x80)) return;
    throw new Error("bad LEB128");
  }
}

function leb(value) {
  const out = [];
  do {
    let b = value % 128;
    value = Math.floor(value / 128);
    if (value > 0) b |= 0x80;
    out.push(b);
  } while (value > 0);
  return Uint8Array.from(out);
}

function encodeSection(id, body) {
  return concat([Uint8Array.of(id), leb(body.length), body]);
}

function concat(parts) {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
