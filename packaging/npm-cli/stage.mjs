// Stages the npm packages of the `metis-memory` program, ready for `npm pack`
// (scripts/package, scripts/test-cli-packages) or `npm publish` (the release workflow):
//
//   node packaging/npm-cli/stage.mjs --version X.Y.Z --out DIR [--binary PATH [--platform KEY]]
//
// DIR/metis-memory-cli is the main package (the launcher `bin/metis-memory`, which runs the
// platform package's program, and platforms.json), its version and the version of every
// platform package it lists as an optional dependency set to X.Y.Z. With --binary,
// DIR/platform is the platform package for KEY (a key of platforms.json; by default this
// machine's), made from the template in platform/, holding the program built for it (PATH).
// Each gets the repository's LICENSE. Node's standard library only, so it runs on every
// release runner.

import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..');
const main = join(here, 'metis-memory-cli');

const { values } = parseArgs({
  options: {
    version: { type: 'string' },
    out: { type: 'string' },
    binary: { type: 'string' },
    platform: { type: 'string' },
  },
});
for (const name of ['version', 'out']) {
  if (!values[name]) throw new Error(`--${name} is required`);
}
const version = values.version;
if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) {
  throw new Error(`--version ${version}: not a release version`);
}
const platforms = JSON.parse(readFileSync(join(main, 'platforms.json'), 'utf8'));
const out = resolve(values.out);
rmSync(out, { recursive: true, force: true });

// The main package: the committed one, with the release's version for itself and for
// each platform package, which must be the ones platforms.json names.
const manifest = JSON.parse(readFileSync(join(main, 'package.json'), 'utf8'));
const listed = Object.keys(manifest.optionalDependencies ?? {}).sort();
const named = Object.values(platforms)
  .map((p) => p.package)
  .sort();
if (JSON.stringify(listed) !== JSON.stringify(named)) {
  throw new Error(
    `metis-memory-cli/package.json's optionalDependencies (${listed}) are not platforms.json's packages (${named})`,
  );
}
manifest.version = version;
manifest.optionalDependencies = Object.fromEntries(named.map((name) => [name, version]));
const mainOut = join(out, 'metis-memory-cli');
mkdirSync(join(mainOut, 'bin'), { recursive: true });
writeFileSync(join(mainOut, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
for (const file of ['bin/metis-memory', 'platforms.json', 'README.md']) {
  copyFileSync(join(main, file), join(mainOut, file));
}
chmodSync(join(mainOut, 'bin/metis-memory'), 0o755);
copyFileSync(join(root, 'LICENSE'), join(mainOut, 'LICENSE'));
console.log(`staged metis-memory-cli ${version} in ${mainOut}`);

if (values.binary) {
  // The platform package: the template, filled in for the platform, with the program.
  const key = values.platform ?? thisMachine();
  const platform = platforms[key];
  if (!platform) {
    throw new Error(`no platform ${key} in platforms.json (${Object.keys(platforms).join(', ')})`);
  }
  const template = join(here, 'platform');
  const fill = (text) =>
    text
      .replaceAll('@metis-memory/cli-PLATFORM', platform.package)
      .replaceAll('DESCRIBE', platform.describe);
  const platformManifest = JSON.parse(fill(readFileSync(join(template, 'package.json'), 'utf8')));
  platformManifest.version = version;
  platformManifest.os = [platform.os];
  platformManifest.cpu = [platform.cpu];
  if (platform.libc) platformManifest.libc = [platform.libc];
  const platformOut = join(out, 'platform');
  mkdirSync(join(platformOut, 'bin'), { recursive: true });
  writeFileSync(join(platformOut, 'package.json'), `${JSON.stringify(platformManifest, null, 2)}\n`);
  writeFileSync(join(platformOut, 'README.md'), fill(readFileSync(join(template, 'README.md'), 'utf8')));
  copyFileSync(resolve(values.binary), join(platformOut, 'bin', platform.binary));
  chmodSync(join(platformOut, 'bin', platform.binary), 0o755);
  copyFileSync(join(root, 'LICENSE'), join(platformOut, 'LICENSE'));
  console.log(`staged ${platform.package} ${version} in ${platformOut}`);
}

/** This machine's key, as the launcher (metis-memory-cli/bin/metis-memory) works it out. */
function thisMachine() {
  const machine = `${process.platform}-${process.arch}`;
  if (process.platform !== 'linux') return machine;
  // The Linux programs link glibc; on musl (Alpine) there is none to run. (The report's
  // network part can take long to gather, and says nothing here.)
  if (process.report) process.report.excludeNetwork = true;
  const glibc = process.report?.getReport()?.header?.glibcVersionRuntime;
  return glibc ? machine : `${machine}-musl`;
}
