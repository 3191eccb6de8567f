import { defineCatalogue, type StatusesOf } from '../../core/errors.ts';

// The codes of the MCP server's own tools (the inline deploy tool); the rest it answers comes from the
// operations it calls.

export const mcpCatalogue = defineCatalogue({
  UPLOAD_FAILED: { status: 503, message: 'The artifact upload failed.' },
});

declare module '../../core/errors.ts' {
  interface ErrorCodes extends StatusesOf<typeof mcpCatalogue> {}
}
