import { defineCatalogue, type StatusesOf } from '../../core/errors.ts';

// The codes of hosting: deployment artifacts, deployments, restarts.

export const hostingCatalogue = defineCatalogue({
  ARTIFACT_INVALID: { status: 400, message: 'The artifact is not valid.' },
  ARTIFACT_MISSING: {
    status: 400,
    message: 'Nothing was uploaded for this deployment; PUT the artifact to uploadUrl first.',
  },
  UPLOAD_EXPIRED: {
    status: 400,
    message: 'The upload URL of this deployment has expired; create a new deployment.',
  },
  DEPLOYMENT_NOT_FOUND: { status: 404, message: 'Deployment not found.' },
  SECRET_NOT_FOUND: { status: 404, message: 'The project has no secret of that name.' },
  DEPLOYMENT_ALREADY_STARTED: { status: 409, message: 'This deployment was already started.' },
  PROJECT_NOT_READY: { status: 409, message: 'The project is not ready for deployments.' },
  NOTHING_TO_ROLL_BACK: {
    status: 409,
    message: 'The project has no earlier live deployment to roll back to.',
  },
  NOTHING_TO_REDEPLOY: { status: 409, message: 'The project has no deployment to build again.' },
  RELEASE_PRUNED: {
    status: 409,
    message: "This deployment's build is no longer kept; redeploy it to build it again.",
  },
  DEPLOYMENT_NOT_REUSABLE: { status: 409, message: 'This deployment cannot be run again.' },
  NOTHING_TO_RESTART: { status: 409, message: 'The project has no live or crashed deployment to restart.' },
  ARTIFACT_TOO_LARGE: {
    status: 413,
    message: 'The artifact is too large; leave build outputs and caches out.',
  },
});

declare module '../../core/errors.ts' {
  interface ErrorCodes extends StatusesOf<typeof hostingCatalogue> {}
}

const error = hostingCatalogue.error;

export const hostingErrors = {
  artifactInvalid: (why: string) => error('ARTIFACT_INVALID', why),
  artifactTooLarge: (maxBytes: number) =>
    error(
      'ARTIFACT_TOO_LARGE',
      `The artifact is larger than ${Math.round(maxBytes / 1024 / 1024)} MB; leave build outputs and caches out.`,
    ),
  artifactMissing: () => error('ARTIFACT_MISSING'),
  uploadExpired: () => error('UPLOAD_EXPIRED'),
  deploymentNotFound: (id?: string) =>
    error('DEPLOYMENT_NOT_FOUND', id ? `Deployment '${id}' was not found.` : undefined),
  deploymentStarted: (status: string) =>
    error('DEPLOYMENT_ALREADY_STARTED', `This deployment was already started (status ${status}).`),
  projectNotReady: (slug: string, status: string) =>
    error('PROJECT_NOT_READY', `Project '${slug}' is ${status}, not ready for deployments.`),
  nothingToRollBack: (slug: string) =>
    error(
      'NOTHING_TO_ROLL_BACK',
      `Project '${slug}' has no earlier live deployment to roll back to; list them with 'pier deployments'.`,
    ),
  nothingToRedeploy: (slug: string) =>
    error('NOTHING_TO_REDEPLOY', `Project '${slug}' has never been live; deploy it with 'pier deploy'.`),
  releasePruned: (id: string) =>
    error(
      'RELEASE_PRUNED',
      `The build of deployment '${id}' is no longer kept on disk; run 'pier redeploy ${id}' to build it again.`,
    ),
  notReusable: (id: string, why: string) =>
    error('DEPLOYMENT_NOT_REUSABLE', `Deployment '${id}' cannot be run again: ${why}.`),
  secretNotFound: (key: string, slug: string) =>
    error(
      'SECRET_NOT_FOUND',
      `Project '${slug}' has no secret '${key}'; set it first with 'pier secrets set ${key} --build'.`,
    ),
  nothingToRestart: (slug: string) =>
    error(
      'NOTHING_TO_RESTART',
      `Project '${slug}' has no live or crashed deployment to restart; deploy it with 'pier deploy'.`,
    ),
} as const;
