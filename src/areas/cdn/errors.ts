import { defineCatalogue, errors, type StatusesOf } from '../../core/errors.ts';

// The codes of the CDN: assets and their uploads, image transforms, merge jobs.
//
// How a catalogue is written (every area's `errors.ts` follows it): the codes with their status and default
// message in `defineCatalogue`, the `declare module` below that adds them to `ErrorCodes` (so route `errors`
// lists and the generic factories accept them), and the factories the services throw. Adding a code: a line
// in the catalogue, a factory if its message takes values, then `throw cdnErrors.theFactory(…)`.

export const cdnCatalogue = defineCatalogue({
  UPLOAD_EXPIRED: {
    status: 400,
    message: 'The upload URL of this asset has expired; request a new upload.',
  },
  ASSET_NOT_IMAGE: { status: 400, message: 'Only image assets can be transformed.' },
  ASSET_NOT_VIDEO: { status: 400, message: 'Only ready video assets have posters, previews and renditions.' },
  WATERMARK_INVALID: {
    status: 400,
    message: 'The watermark must be a ready image asset of the same organization environment.',
  },
  MERGE_INPUT_INVALID: { status: 400, message: 'The merge input is not valid.' },
  ASSET_NOT_FOUND: { status: 404, message: 'Asset not found.' },
  MERGE_JOB_NOT_FOUND: { status: 404, message: 'Merge job not found.' },
  VIDEO_JOB_NOT_FOUND: { status: 404, message: 'Video job not found.' },
  PRESET_NOT_FOUND: { status: 404, message: 'Transform preset not found.' },
  URL_KEY_NOT_FOUND: { status: 404, message: 'URL signing key not found.' },
  PRESET_LIMIT: { status: 409, message: 'An organization environment holds at most 100 presets.' },
  URL_KEY_LIMIT: { status: 409, message: 'An organization environment holds at most 10 URL signing keys.' },
  UPLOAD_ALREADY_CONFIRMED: { status: 409, message: 'This upload was already confirmed.' },
  UPLOAD_OFFSET_MISMATCH: { status: 409, message: 'Upload-Offset is not where the upload stands; HEAD it.' },
  UPLOAD_OFFSET_MISSING: {
    status: 400,
    message: 'A PATCH needs an Upload-Offset header (bytes already sent).',
  },
  UPLOAD_URL_EXPIRED: { status: 410, message: 'This resumable upload has expired; request a new upload.' },
  TUS_VERSION_UNSUPPORTED: { status: 412, message: 'Send Tus-Resumable: 1.0.0.' },
  UPLOAD_CONTENT_TYPE: {
    status: 415,
    message: 'A PATCH body is Content-Type: application/offset+octet-stream.',
  },
  UPLOAD_INCOMPLETE: {
    status: 409,
    message: 'Nothing was uploaded for this asset; PUT the file to uploadUrl first.',
  },
  ASSET_NOT_READY: { status: 409, message: 'Only confirmed, decodable assets can be used.' },
  MERGE_NOT_CANCELLABLE: { status: 409, message: 'Only pending or processing merge jobs can be cancelled.' },
  IMAGE_TOO_LARGE: { status: 413, message: 'The image has too many pixels; it cannot be transformed.' },
  IMAGE_TOO_MANY_FRAMES: { status: 413, message: 'The animation has too many frames to transform.' },
  IMAGE_UNDECODABLE: { status: 422, message: 'The image bytes could not be decoded.' },
  FFMPEG_UNAVAILABLE: { status: 503, message: 'ffmpeg could not be started.' },
});

declare module '../../core/errors.ts' {
  interface ErrorCodes extends StatusesOf<typeof cdnCatalogue> {}
}

const error = cdnCatalogue.error;

export const cdnErrors = {
  assetNotFound: () => error('ASSET_NOT_FOUND'),
  assetUploadExpired: () => error('UPLOAD_EXPIRED'),
  uploadAlreadyConfirmed: () => error('UPLOAD_ALREADY_CONFIRMED'),
  uploadIncomplete: () => error('UPLOAD_INCOMPLETE'),
  resumableIncomplete: (offset: number, size: number) =>
    error('UPLOAD_INCOMPLETE', `${offset} of the ${size} bytes declared have arrived; PATCH the rest first.`),
  offsetMismatch: (offset: number, size: number) =>
    error(
      'UPLOAD_OFFSET_MISMATCH',
      offset >= size
        ? 'The upload is complete; it cannot be written again.'
        : `The upload stands at offset ${offset}; resume from there.`,
    ),
  tusOffsetMissing: () => error('UPLOAD_OFFSET_MISSING'),
  resumableExpired: () => error('UPLOAD_URL_EXPIRED'),
  tusVersion: () => error('TUS_VERSION_UNSUPPORTED'),
  tusContentType: () => error('UPLOAD_CONTENT_TYPE'),
  uploadTooLarge: (declared: number) =>
    errors.tooLarge(`The uploaded file is larger than the ${declared} bytes declared; it was discarded.`),
  assetNotReady: (status: string) =>
    error('ASSET_NOT_READY', `The asset is ${status}; only confirmed, decodable assets can be used.`),
  assetNotImage: () => error('ASSET_NOT_IMAGE'),
  imageTooLarge: (maxPixels: number) =>
    error('IMAGE_TOO_LARGE', `The image has more than ${maxPixels} pixels; it cannot be transformed.`),
  tooManyFrames: (frames: number, max: number) =>
    error('IMAGE_TOO_MANY_FRAMES', `The animation has ${frames} frames; at most ${max} can be transformed.`),
  imageUndecodable: () => error('IMAGE_UNDECODABLE'),
  presetNotFound: (name: string) => error('PRESET_NOT_FOUND', `Transform preset "${name}" not found.`),
  videoJobNotFound: () => error('VIDEO_JOB_NOT_FOUND'),
  assetNotVideo: () => error('ASSET_NOT_VIDEO'),
  watermarkInvalid: () => error('WATERMARK_INVALID'),
  presetLimit: () => error('PRESET_LIMIT'),
  urlKeyNotFound: () => error('URL_KEY_NOT_FOUND'),
  urlKeyLimit: () => error('URL_KEY_LIMIT'),
  mergeJobNotFound: () => error('MERGE_JOB_NOT_FOUND'),
  mergeNotCancellable: (status: string) =>
    error(
      'MERGE_NOT_CANCELLABLE',
      `The merge job is ${status}; only pending or processing jobs can be cancelled.`,
    ),
  mergeInputInvalid: (message: string) => error('MERGE_INPUT_INVALID', message),
} as const;
