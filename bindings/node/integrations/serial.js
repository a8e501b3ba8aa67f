// One queue per session for the integrations' memory commands. A session already chains
// its own calls, but a command of Claude's memory tool can be more than one of them (an
// insert reads the file, then writes it whole): were another command of the same model
// response to run in between, the write would be composed from a text that is no longer
// there. So every command runs whole, in the order it was handed over, which is the order
// the model emitted the calls.

/** The last command queued for each session; settled, never rejected. */
const tails = new WeakMap();

/** Runs `command` once every command queued for `session` before it has settled. */
export function serially(session, command) {
  const run = (tails.get(session) ?? Promise.resolve()).then(command);
  // A refusal or a failure of one command is its caller's; the next one runs all the same.
  tails.set(
    session,
    run.then(
      () => {},
      () => {},
    ),
  );
  return run;
}
