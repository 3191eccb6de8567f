import type { Command } from 'commander';
import type { CliContext } from '../context.ts';
import * as admin from './admin.ts';
import * as ai from './ai.ts';
import * as auth from './auth.ts';
import * as cdn from './cdn.ts';
import * as domains from './domains.ts';
import * as hosting from './hosting.ts';
import * as integrations from './integrations.ts';
import * as keys from './keys.ts';
import * as mcp from './mcp.ts';
import * as memory from './memory.ts';
import * as orgs from './orgs.ts';
import * as projects from './projects.ts';
import * as releases from './releases.ts';
import * as secrets from './secrets.ts';
import * as web from './web.ts';
import * as workflows from './workflows.ts';

/** A command group: one file in this folder exporting `register(program, ctx)`. */
export type CommandGroup = { register(program: Command, ctx: CliContext): void };

// Every group of `pier` commands, in the order `pier --help` lists them. Add a new file here.
export const commandGroups: CommandGroup[] = [
  auth,
  orgs,
  projects,
  secrets,
  hosting,
  releases,
  keys,
  ai,
  domains,
  memory,
  cdn,
  workflows,
  integrations,
  web,
  mcp,
  admin,
];
