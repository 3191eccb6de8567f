import { z } from 'zod';
import { defineFn } from '../../http/fn-kit.ts';
import { projectForUser, slugInput } from '../orgs/index.ts';
import { appRuntimeInfo, appRuntimeSchema } from './app-runtime-info.ts';

export const getAppRuntimeForCli = defineFn({
  name: 'getAppRuntimeForCli',
  summary:
    "Whether the project's app runs sandboxed and what enforces its plan's limits (cgroups or rlimits).",
  auth: { kind: 'user' },
  input: z.strictObject({ projectSlug: slugInput }),
  output: appRuntimeSchema,
  errors: ['PROJECT_NOT_FOUND'],
  handler: async ({ deps, caller }, { projectSlug }) => {
    await projectForUser(deps, caller.userId, projectSlug);
    return appRuntimeInfo(deps);
  },
});
