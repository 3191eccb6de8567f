import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import { modelErrors } from '../../core/ai/errors.ts';
import {
  baseUrlOf,
  parseModelRef,
  platformProvider,
  type ResolvedModel,
  VENDORS,
} from '../../core/ai/providers.ts';
import type { Deps } from '../../deps.ts';
import { modelProviderKeys } from './tables.ts';

// Bring-your-own provider keys and model resolution (the model proxy's `model.resolve` scope).

export const vendorInput = z.enum(VENDORS);

/**
 * Which provider serves `model` for an organization and with which key: an explicit `provider/model`
 * wins, else the family table; the organization's own key first, the platform's second.
 */
export async function resolveModelFor(deps: Deps, orgId: string, model: string): Promise<ResolvedModel> {
  const cfg = deps.config.models;
  const ref = parseModelRef(model, Boolean(cfg.pier));
  if (!ref) throw modelErrors.modelNotAvailable(model);
  if (ref.provider !== 'pier') {
    const [own] = await deps.db.orm
      .select({ keyEnc: modelProviderKeys.keyEnc })
      .from(modelProviderKeys)
      .where(and(eq(modelProviderKeys.orgId, orgId), eq(modelProviderKeys.provider, ref.provider)));
    if (own) {
      return {
        provider: ref.provider,
        model: ref.model,
        baseUrl: baseUrlOf(cfg, ref.provider),
        apiKey: deps.keyring.decrypt(own.keyEnc),
        keySource: 'organization',
      };
    }
  }
  const platform = platformProvider(cfg, ref.provider);
  if (!platform) throw modelErrors.modelNotAvailable(model);
  return { provider: ref.provider, model: ref.model, ...platform, keySource: 'platform' };
}
