// How long the event loop waits while the metis-memory package works: a probe schedules
// setImmediate after setImmediate and records the longest gap between two of them (the
// loop's worst stall) while the calls run. scripts/bench-loop runs it against the
// installed package ($METIS_BENCH_NODE_PACKAGE, its directory, else `metis-memory` as
// installed beside this file) and writes BENCHMARKS.md's section from what it prints (one
// JSON object a line).
//
// Usage: node loop-stall.mjs MODE [RUNS]
//   first    the process's first call (a read, which loads and compiles the component),
//            in this fresh process
//   async    RUNS times, each on a fresh workspace: the probe while a 200 ms timer runs
//            out ("control": the stalls this machine makes on its own, measured between
//            the others), 40 adds one after another ("adds"), then 20 tool-call adds of
//            one session at once, by Promise.all ("session")
//   neighbour RUNS times: 40 adds one after another while the probe runs in another
//            process ("neighbour"), and that probe while this process waits 200 ms
//            ("neighbour-control"): what the adds cost every program on the machine, the
//            floor for this process's own loop
//   probe    (run by neighbour) the probe until a line comes on stdin; prints its worst gap
// Each case but the control runs twice: with the probe (the stall, and the time taken)
// and without it ("alone_ms").

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";

const ADDS = 40;
const SESSION_ADDS = 20;

const [mode, runsArg] = process.argv.slice(2);
const runs = Number(runsArg ?? 10);
const where = process.env.METIS_BENCH_NODE_PACKAGE;
const { openWorkspace } =
  mode === "probe" ? {} : await import(where ? pathToFileURL(path.join(where, "index.js")).href : "metis-memory");
const info = { node: process.versions.node };

/** Runs `work` with the probe going: its worst gap (ms), how many turns the loop made, and
 * how long `work` took (ms). */
async function probed(work) {
  let worst = 0;
  let turns = 0;
  let done = false;
  let finish;
  const finished = new Promise((resolve) => (finish = resolve));
  let last = performance.now();
  const tick = () => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    turns += 1;
    last = now;
    if (done) finish();
    else setImmediate(tick);
  };
  setImmediate(tick);
  const start = performance.now();
  await work();
  const took = performance.now() - start;
  // The probe's next turn ends the gap the work's last step made.
  done = true;
  await finished;
  return { stall_ms: worst, turns, took_ms: took };
}

/** Runs `work` while the probe runs in a process of its own (this script's `probe` mode):
 * that process's worst gap, and how long `work` took. */
async function probedElsewhere(work) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "probe"], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout });
  const next = () => once(lines, "line").then(([line]) => line);
  if ((await next()) !== "ready") throw new Error("the probe process did not start");
  const start = performance.now();
  await work();
  const took = performance.now() - start;
  child.stdin.end("stop\n");
  const { stall_ms } = JSON.parse(await next());
  await once(child, "exit");
  return { stall_ms, took_ms: took };
}

async function timed(work) {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

function freshWorkspace() {
  return openWorkspace(fs.mkdtempSync(path.join(os.tmpdir(), "metis-loop-")));
}

const print = (result) => console.log(JSON.stringify(result));

if (mode === "first") {
  const ws = freshWorkspace();
  print({ mode, ...info, ...(await probed(() => ws.read("MEMORY.md"))) });
} else if (mode === "async") {
  for (let run = 0; run < runs; run++) {
    print({ mode, case: "control", ...info, ...(await probed(() => sleep(200))) });
    const ws = freshWorkspace();
    // The component compiled and every path run once, as in a host that has been up.
    await ws.addEntry("MEMORY.md", "- warm");
    const warm = ws.session();
    await warm.systemPrompt("");
    await warm.callTool("memory_add", { file: "USER.md", entry: "- warm" });
    const session = ws.session();
    const cases = {
      adds: async () => {
        for (let i = 0; i < ADDS; i++) await ws.addEntry("MEMORY.md", `- entry ${i}`);
      },
      session: () =>
        Promise.all(
          Array.from({ length: SESSION_ADDS }, (_, i) =>
            session.callTool("memory_add", { file: "USER.md", entry: `- fact ${i}` }),
          ),
        ),
    };
    for (const [name, work] of Object.entries(cases)) {
      const result = await probed(work);
      result.alone_ms = await timed(work);
      print({ mode, case: name, ...info, ...result });
    }
  }
} else if (mode === "neighbour") {
  for (let run = 0; run < runs; run++) {
    const ws = freshWorkspace();
    await ws.addEntry("MEMORY.md", "- warm");
    for (const [name, work] of [
      ["neighbour-control", () => sleep(200)],
      ["neighbour", async () => {
        for (let i = 0; i < ADDS; i++) await ws.addEntry("MEMORY.md", `- entry ${i}`);
      }],
    ]) {
      print({ mode: "async", case: name, ...info, ...(await probedElsewhere(work)) });
    }
  }
} else if (mode === "probe") {
  // Started by `neighbour`: says it is turning, then turns until told to stop.
  const lines = createInterface({ input: process.stdin });
  const stop = once(lines, "line");
  const result = await probed(async () => {
    console.log("ready");
    await stop;
  });
  lines.close();
  print(result);
} else {
  console.error("usage: node loop-stall.mjs first|async|neighbour [RUNS]");
  process.exit(2);
}
