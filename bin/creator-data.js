#!/usr/bin/env node
// Runs the compiled package (dist/, built by `npm run build`, which `npm ci` runs through `prepare`).
let main;
try {
  ({ main } = await import('../dist/cli/main.js'));
} catch (error) {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes('dist/cli/main.js')) throw error;
  process.stderr.write('creator-data: dist/ is missing; run `npm run build` (npm ci does it)\n');
  process.exit(1);
}
process.exitCode = await main(process.argv.slice(2));
