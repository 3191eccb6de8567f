import { functions } from '../areas/index.ts';

// The function API's registry is derived from the areas list (src/areas/index.ts); this module only names
// its types for the transport and the SDK.
export { functions };
export type Functions = typeof functions;
export type FunctionName = Functions[number]['name'];
