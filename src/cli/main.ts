import { runCli } from './program.ts';

// The `pier` command (bin/pier.js and `npm run pier` land here).
const status = await runCli(process.argv.slice(2));
// Let stdout drain before exiting; an explicit exit stops anything left open (keep-alive sockets).
process.exitCode = status;
process.stdout.write('', () => process.exit(status));
