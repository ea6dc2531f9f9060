/**
 * History's own words for an inference and its feedback: plain types and the
 * rules that need no I/O. Transport maps the contracts to these.
 */
import type { JudgeState } from './judge';

export type Surface =
  'native' | 'gliner-2' | 'systemone' | 'project' | 'chat-completions' | 'messages' | 'completions' | 'responses';

export type Status = 'succeeded' | 'failed';

/** One turn of a decoder conversation: its joined text, an assistant's tool calls or the call a tool turn answers. */
export interface Turn {
  role: string;
  content: string;
  toolCalls?: { id: string; name: string; arguments: string }[];
  toolCallId?: string;
}

export type Verdict = 'correct' | 'incorrect';

/** How the router labelled a call (the surface-level task of the inference contract). */
export type CallKind =
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
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  costMicroCredits: bigint;
}

export interface Feedback {
  inferenceId: string;
  verdict: Verdict;
  /** The right output; null when the verdict is correct. */
  correctedOutput: unknown;
  notes: string;
  submittedAt: Date;
}

/** One stored inference. */
export interface InferenceRecord {
  inferenceId: string;
  teamId: string;
  keyId: string;
  userId: string;
  projectId: string | null;
  modelId: string;
  trainingJobId: string | null;
  baseModel: string;
  task: string;
  surface: Surface;
  inputs: string[];
  messages: Turn[];
  schema: Record<string, unknown> | null;
  outputs: Record<string, unknown>[];
  usage: Usage;
  latencyMs: number;
  status: Status;
  errorCode: string | null;
  createdAt: Date;
  completedAt: Date;
  llmajScore: number | null;
  feedback: Feedback | null;
  /** The judge's state; absent (as on a record just built from its event) means not sampled. */
  judge?: JudgeState;
  /** The caller's string pairs of a stored compatible call (OpenAI's `metadata`); empty when none. */
  metadata: Record<string, string>;
  /** UUID of the OpenAI conversation a Responses call belongs to; absent for none. */
  conversationId?: string;
}

/** What the list filters on; every field left undefined matches everything. */
export interface ListFilter {
  limit: number;
  offset: number;
  modelId?: string | undefined;
  task?: string | undefined;
  projectId?: string | undefined;
  trainingJobId?: string | undefined;
  latencyMin?: number | undefined;
  latencyMax?: number | undefined;
  llmajScoreMin?: number | undefined;
  llmajScoreMax?: number | undefined;
  /** Inclusive. */
  since?: Date | undefined;
  /** Exclusive. */
  until?: Date | undefined;
  surface?: Surface | undefined;
  /** Pairs the record's metadata must hold. */
  metadata?: Record<string, string> | undefined;
  oldestFirst?: boolean | undefined;
  /** Cursor: only records after this one in the page's order. */
  afterId?: string | undefined;
  /** Count only up to limit + 1 (a cursor list's has_more), not TOTAL_CAP. */
  countToPage?: boolean | undefined;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The extraction kinds a schema asks for, in the names history uses. */
export function schemaKinds(schema: Record<string, unknown> | null): string[] {
  if (!schema) return [];
  const present = (key: string) => {
    const v = schema[key];
    return Array.isArray(v) ? v.length > 0 : isRecord(v) && Object.keys(v).length > 0;
  };
  const kinds: string[] = [];
  if (present('entities')) kinds.push('ner');
  if (present('classifications')) kinds.push('classification');
  if (present('relations')) kinds.push('relations');
  if (present('structures')) kinds.push('structures');
  return kinds;
}

const FIXED_TASK: Partial<Record<CallKind, string>> = {
  ner: 'ner',
  classification: 'classification',
  json: 'structures',
  relations: 'relations',
  systemone: 'decision',
  generate: 'generate',
  embed: 'embed',
};

/**
 * The task a record is filed under: what the call asked for. GLiNER2's
 * per-task routes say it; a free-form schema says it by what it holds (one kind
 * → that kind, several → `extraction`).
 */
export function taskOf(kind: CallKind, schema: Record<string, unknown> | null): string {
  const fixed = FIXED_TASK[kind];
  if (fixed) return fixed;
  const kinds = schemaKinds(schema);
  return kinds.length === 1 ? kinds[0]! : 'extraction';
}
