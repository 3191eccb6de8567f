import { defineArea } from '../manifest.ts';
import { mcpCatalogue } from './errors.ts';
import { mcpRoutes } from './route.ts';

// The MCP server at {base}/mcp: one tool per function-API function and v1 operation of every area, derived
// from their manifests, plus a deploy-from-files tool (docs/mcp.md). It has no tables: calls go to the real
// routes in-process.

export const mcpArea = defineArea({
  name: 'mcp',
  errors: [mcpCatalogue],
  http: mcpRoutes,
});

export { mcpAudience } from './route.ts';
