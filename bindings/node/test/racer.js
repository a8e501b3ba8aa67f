// The racer of race.test.js: `node racer.js ROOT` swaps ROOT/.metis
// between the real directory and the symbolic link ROOT/.metis-link (to another
// directory) in a loop, by renames: the real directory is parked at ROOT/.metis-parked,
// the link put in its place, taken back, and the directory put back. A directory a write
// created at ROOT/.metis while it was free is replaced by the real one if it is empty,
// else moved aside to ROOT/.metis-created-N, so the real directory always gets back.
// Prints "ready" after its first swap, and stops at the end of the swap during which
// ROOT/stop appears, with `.metis` the real directory again; its last line is
// `{"swaps", "created"}`, as JSON.
import fs from "node:fs";
import path from "node:path";

const root = process.argv[2];
const metis = path.join(root, ".metis");
const parked = path.join(root, ".metis-parked");
const link = path.join(root, ".metis-link");
const stop = path.join(root, "stop");
let created = 0;

/** Puts the parked directory back at `.metis`, moving aside one a write made there. */
function putBack() {
  for (;;) {
    try {
      fs.renameSync(parked, metis);
      return;
    } catch (e) {
      if (e.code !== "ENOTEMPTY" && e.code !== "EEXIST") throw e;
    }
    try {
      fs.renameSync(metis, path.join(root, `.metis-created-${created}`));
      created++;
    } catch (e) {
      // Removed by the write that made it, since: the next rename puts the real one back.
      if (e.code !== "ENOENT") throw e;
    }
  }
}

/** One swap: `.metis` a link for a moment, then the real directory again, which stays
 * while `.metis` is looked at a few times (the racer's own pace, not a wait for anyone). */
function swap() {
  fs.renameSync(metis, parked);
  try {
    fs.renameSync(link, metis);
  } catch {
    // A write created `.metis/` in the moment it was free: no link this time.
    putBack();
    return;
  }
  fs.renameSync(metis, link);
  putBack();
  for (let i = 0; i < 32; i++) fs.lstatSync(metis);
}

let swaps = 0;
swap();
swaps++;
fs.writeSync(1, "ready\n");
while (!fs.existsSync(stop)) {
  swap();
  swaps++;
}
fs.writeSync(1, `${JSON.stringify({ swaps, created })}\n`);
