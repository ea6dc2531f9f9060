/**
 * The router's own words for what it serves: plain types, no I/O. Sampling
 * options and chat turns are declared here once; the model-server fleet adapter
 * and the RPC mappers translate them to and from the contracts.
 */

/** Who is calling; every read and write is scoped to the team. */
export interface Caller {
  teamId: string;
  keyId: string;
  userId: string;
}

/** Which model and, for a trained one, where its bundle lives (empty for built-in models). */
export interface ModelRef {
  modelId: string;
  bucket: string;
  key: string;
}

export type ChatRole = 'system' | 'user' | 'assistant';

/** One chat message, its content blocks already joined into one text. */
export interface ChatTurn {
  role: ChatRole;
  content: string;
}

/** How a decoder picks tokens; the gateway applies the public defaults before they reach the router. */
export interface GenerateOptions {
  temperature: number;
  topP: number;
  /** 0 means the model-server's default. */
  maxTokens: number;
  stop: string[];
  seed: number;
  /** OpenAI's penalties (−2 to 2; 0 is off) and Anthropic's top_k (0 keeps every token); unset: off. */
  frequencyPenalty?: number;
  presencePenalty?: number;
  topK?: number;
  /** OpenAI's `logit_bias`: token id (the model's tokenizer's) to a bias from −100 to 100; unset: none. */
  logitBias?: Readonly<Record<number, number>>;
  /**
   * With logprobs: the prompt's own tokens' log probabilities first (OpenAI's `echo`; built-in decoders only), and
   * with promptOnly nothing generated (`max_tokens: 0`).
   */
  promptLogprobs?: boolean;
  promptOnly?: boolean;
  /** When set, each token's log probability with this many of the most likely tokens at its place (0–20). */
  logprobs?: number;
  signal?: AbortSignal;
}

export type FinishReason = 'stop' | 'length';

/** Which public surface asked for an inference; recorded with it. */
export type InferenceTask =
  | 'extract'
  | 'ner'
  | 'classification'
  | 'json'
  | 'relations'
  | 'schema'
  | 'systemone'
  | 'project'
  | 'generate'
  | 'embed';

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  costMicroCredits: bigint;
}

/** What one metered call returns besides its results. */
export interface InferenceReceipt {
  inferenceId: string;
  model: string;
  usage: Usage;
  latencyMs: number;
}
