import { defineCatalogue, type StatusesOf } from '../errors.ts';

// The codes of the blob stores and of the presigned URLs Pier serves for the disk driver.

export const blobCatalogue = defineCatalogue({
  INVALID_BLOB_KEY: {
    status: 400,
    message: 'Blob keys are 1–512 characters of A-Z, a-z, 0-9, ., _, - and / with no empty, . or .. segment.',
  },
  SIGNATURE_INVALID: { status: 403, message: 'The URL signature is missing or invalid.' },
  URL_EXPIRED: { status: 403, message: 'This signed URL has expired; ask for a new one.' },
  BLOB_NOT_FOUND: { status: 404, message: 'Blob was not found.' },
  BLOB_KEY_CONFLICT: { status: 409, message: 'That key collides with an existing key used as a folder.' },
  UPLOAD_URL_USED: {
    status: 409,
    message: 'This upload URL was already used; it accepts one upload. Ask for a new upload URL.',
  },
  RANGE_NOT_SATISFIABLE: { status: 416, message: 'The requested range is outside the object.' },
});

declare module '../errors.ts' {
  interface ErrorCodes extends StatusesOf<typeof blobCatalogue> {}
}

const error = blobCatalogue.error;

export const blobErrors = {
  invalidBlobKey: () => error('INVALID_BLOB_KEY'),
  blobNotFound: () => error('BLOB_NOT_FOUND'),
  blobKeyConflict: () => error('BLOB_KEY_CONFLICT'),
  signatureInvalid: (message?: string) => error('SIGNATURE_INVALID', message),
  urlExpired: () => error('URL_EXPIRED'),
  uploadUrlUsed: () => error('UPLOAD_URL_USED'),
  rangeNotSatisfiable: (size: number) =>
    error('RANGE_NOT_SATISFIABLE', undefined, { 'content-range': `bytes */${size}` }),
} as const;
