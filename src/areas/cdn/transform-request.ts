import { blobErrors } from '../../core/blobs/errors.ts';
import type { Deps } from '../../deps.ts';
import { presetOptionsForAsset } from './presets.ts';
import type { TransformOptions } from './schema.ts';
import { optionsFromQuery, verifyTransformQuery } from './transform-query.ts';
import { verifyUrlKeySignature } from './url-keys.ts';

// The three forms a transform URL takes (docs/cdn.md "Building transform URLs"):
//  - minted by POST /v1/cdn/transform: options in canonical order and `sig` from Pier's own key;
//  - built by the app: any order, `key=<keyId>` and a last `sig` from the organization's URL key;
//  - a preset alone, `?p=<name>`, unsigned: the organization's presets are its allow-list.
// Each ends as plain options (a preset expanded, the URL's own options over it), which key the cache.

const APP_SIGNED = /^(.*)&sig=([A-Za-z0-9_-]+)$/;

export async function resolveTransformRequest(
  deps: Deps,
  assetId: string,
  raw: Record<string, string>,
  rawQuery: string,
): Promise<TransformOptions> {
  let opts = null;
  if (raw.key !== undefined) {
    const { sig, key, ...rest } = raw;
    const signed = APP_SIGNED.exec(rawQuery);
    opts = optionsFromQuery(rest);
    if (!signed || !sig || !opts) throw blobErrors.signatureInvalid();
    await verifyUrlKeySignature(deps, assetId, key, signed[1]!, signed[2]!);
  } else if (raw.sig !== undefined) {
    opts = verifyTransformQuery(deps.keyring, assetId, raw);
  } else if (Object.keys(raw).length === 1 && raw.p !== undefined) {
    opts = optionsFromQuery(raw);
  }
  if (!opts) throw blobErrors.signatureInvalid();
  const { preset, ...own } = opts;
  if (!preset) return own;
  return { ...(await presetOptionsForAsset(deps, assetId, preset)), ...own };
}
