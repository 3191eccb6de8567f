import { describe, expect, it } from 'vitest';
import { nodeCommand } from './local-driver.ts';

describe('nodeCommand: which start commands run as node itself', () => {
  it('takes plain `node <file>` with options and arguments', () => {
    expect(nodeCommand('node server.js')).toEqual(['server.js']);
    expect(nodeCommand('  node   dist/server.js  ')).toEqual(['dist/server.js']);
    expect(nodeCommand('node --enable-source-maps ./dist/main.mjs --port=3000')).toEqual([
      '--enable-source-maps',
      './dist/main.mjs',
      '--port=3000',
    ]);
    expect(nodeCommand('node -r dotenv/config server.js')).toEqual(['-r', 'dotenv/config', 'server.js']);
  });

  it('leaves everything a shell would interpret, and other programs, to sh', () => {
    for (const start of [
      'npm start',
      'next start',
      'node',
      'node --version',
      'PORT=1 node server.js',
      'node server.js && echo done',
      'node server.js > out.log',
      'node $APP_ENTRY',
      'node "my server.js"',
      'node -e "console.error(\'boom\'); process.exit(1)"',
      'node src/*.js',
      'node ~/server.js',
      'node server.js # comment',
      'node server.js; rm -rf /',
      'node `which app`',
      'nodemon server.js',
      './node server.js',
    ])
      expect(nodeCommand(start), start).toBeNull();
  });
});
