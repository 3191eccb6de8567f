import { integrationsV1 } from '../areas/integrations/v1.ts';
import type { V1Area } from './kit.ts';
import { mailArea } from './mail/routes.ts';
import { memoryArea } from './memory/routes.ts';

// Every v1 area, one line each; the plugin mounts each at /v1<prefix>.
export const v1Areas: V1Area[] = [
  mailArea,
  memoryArea,
  integrationsV1, // areas-layout: move to src/areas/index.ts
];
