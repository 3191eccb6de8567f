import type { V1Area } from '../http/v1-kit.ts';
import { mailArea } from './mail/v1.ts';
import { memoryArea } from './memory/v1.ts';

// Every v1 area, one line each; the plugin mounts each at /v1<prefix>.
export const v1Areas: V1Area[] = [mailArea, memoryArea];
