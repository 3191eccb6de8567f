import { cdnV1 } from '../areas/cdn/v1.ts'; // areas-layout: move to src/areas/index.ts
import type { V1Area } from './kit.ts';
import { mailArea } from './mail/routes.ts';
import { memoryArea } from './memory/routes.ts';

// Every v1 area, one line each; the plugin mounts each at /v1<prefix>.
export const v1Areas: V1Area[] = [mailArea, memoryArea, cdnV1];
