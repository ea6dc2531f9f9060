import type { UpstreamCall } from '../../application/ports';

/**
 * Sampling fields, sent only when they differ from the providers' defaults (temperature 1, top_p 1): newer models
 * refuse some of them (GPT-5-style models any temperature but 1, recent Claude models temperature with top_p).
 */
export function sampling(options: UpstreamCall['options'], maxTemperature = 2): Record<string, number> {
  return {
    ...(options.temperature !== 1 ? { temperature: Math.min(maxTemperature, Math.max(0, options.temperature)) } : {}),
    ...(options.topP > 0 && options.topP < 1 ? { top_p: options.topP } : {}),
  };
}
