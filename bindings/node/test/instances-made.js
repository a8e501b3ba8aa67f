// A test helper: how many guest instances a piece of work makes: on the package's worker
// thread, which owns them (hook-channel.js), and on this one.

import { countingInstances } from "./hook-channel.js";

/** Counts the guest instances made while `f` runs: its core module is the one meter.js
 * gave a `metis_fuel` export. */
export async function instancesMade(f) {
  const Instance = WebAssembly.Instance;
  let made = 0;
  WebAssembly.Instance = new Proxy(Instance, {
    construct(target, args) {
      const instance = Reflect.construct(target, args);
      if (instance.exports.metis_fuel) made += 1;
      return instance;
    },
  });
  try {
    const counted = await countingInstances(f);
    return { value: counted.value, made: made + counted.made };
  } finally {
    WebAssembly.Instance = Instance;
  }
}
