import { runCli } from './program.ts';

// The `pier` command (bin/pier.js and `npm run pier` land here).
// A closed pipe (`pier projects | head -1`) is not a failure of the command.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});
const status = await runCli(process.argv.slice(2));
process.exitCode = status;
// Let stdout drain, then exit: nothing left open (keep-alive sockets) may keep the command waiting.
process.stdout.write('', () => process.exit(status));
