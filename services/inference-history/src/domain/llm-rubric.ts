/**
 * The LLM judge's rubric prompts, one per kind of task, and the strict parser of its answer. Pure: the adapter sends
 * the prompt through the router's Chat and hands the reply text here.
 */
import type { InferenceRecord } from './record';

export type RubricTask = 'extraction' | 'classification' | 'generation';

/** Which rubric a record gets: decoder replies are generation, classification calls classification, else extraction. */
export function rubricTaskOf(record: InferenceRecord): RubricTask {
  if (record.messages.length > 0 || record.task === 'generate') return 'generation';
  if (record.task === 'classification') return 'classification';
  return 'extraction';
}

const ANSWER_FORMAT =
  'Answer with one JSON object and nothing else, no code fence: {"score": <number from 0 to 1>, "rationale": "<one sentence, at most 200 characters>"}.';

const RUBRICS: Record<RubricTask, string> = {
  extraction: [
    'You grade the output of an information-extraction model. You are given the input text, the schema the caller',
    'asked for (entity types, relations, structure fields) and the model output.',
    'Score 1 when every extracted item is present in the text, has the right type and exact boundaries, and nothing',
    'the schema asks for is missing; 0.5 when it is partly right (some items wrong, mis-typed or missing); 0 when it',
    'is mostly wrong or empty while the text clearly contains what the schema asks for.',
  ].join(' '),
  classification: [
    'You grade the output of a text classifier. You are given the input text, the tasks with their allowed labels',
    'and the label(s) the model chose. Score 1 when each chosen label is the best of the allowed labels for the text,',
    '0.5 when it is defensible but another label fits better, 0 when it is wrong.',
  ].join(' '),
  generation: [
    'You grade a chat model reply. You are given the conversation and the reply. Score 1 when the reply is correct,',
    'relevant and follows the instructions, 0.5 when it is partly useful, 0 when it is wrong, off-topic or empty.',
  ].join(' '),
};

/** The system prompt: the task's rubric and the strict answer format. */
export function rubricPrompt(task: RubricTask): string {
  return `${RUBRICS[task]}\n${ANSWER_FORMAT}`;
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);

/** The user turn: what was asked and what the model answered, as JSON (long inputs clipped). */
export function rubricSubject(record: InferenceRecord): string {
  const subject =
    rubricTaskOf(record) === 'generation'
      ? {
          // Tool calls and the calls tool turns answer, so the judge sees what the model asked for and got.
          conversation: record.messages.map((m) => ({
            role: m.role,
            content: clip(m.content, 4000),
            ...(m.toolCalls?.length
              ? { tool_calls: m.toolCalls.map((c) => ({ ...c, arguments: clip(c.arguments, 4000) })) }
              : {}),
            ...(m.toolCallId ? { tool_call_id: m.toolCallId } : {}),
          })),
          reply: record.outputs[0] ?? null,
        }
      : {
          inputs: record.inputs.map((t) => clip(t, 4000)),
          schema: record.schema,
          outputs: record.outputs,
        };
  return JSON.stringify(subject);
}

/**
 * The judge's answer, strictly: one JSON object (surrounding whitespace allowed) with a numeric `score` in [0, 1] and
 * a non-empty string `rationale`; anything else is null (the caller asks again, a bounded number of times).
 */
export function parseJudgeAnswer(text: string): { score: number; rationale: string } | null {
  let value: unknown;
  try {
    value = JSON.parse(text.trim());
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const { score, rationale } = value as Record<string, unknown>;
  if (typeof score !== 'number' || !Number.isFinite(score) || score < 0 || score > 1) return null;
  if (typeof rationale !== 'string' || !rationale.trim()) return null;
  return { score, rationale: clip(rationale.trim(), 500) };
}
