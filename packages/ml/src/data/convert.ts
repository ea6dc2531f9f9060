import type { EntitySpan, RowError } from './example';

/** Parse CSV (RFC 4180 quoting) with a header naming `text` and `label` columns into classification JSONL rows. */
export function csvToJsonl(content: string): { jsonl: string; errors: RowError[] } {
  const rows: string[][] = [];
  let field = '';
  let row: string[] = [];
  let quoted = false;
  const endField = () => {
    row.push(field);
    field = '';
  };
  const endRow = () => {
    endField();
    rows.push(row);
    row = [];
  };
  for (let i = 0; i < content.length; i++) {
    const ch = content[i]!;
    if (quoted) {
      if (ch === '"' && content[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"' && field === '') quoted = true;
    else if (ch === ',') endField();
    else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && content[i + 1] === '\n') i++;
      endRow();
    } else field += ch;
  }
  if (field !== '' || row.length > 0) endRow();
  const errors: RowError[] = [];
  const header = (rows.shift() ?? []).map((h) => h.trim().toLowerCase());
  const ti = header.indexOf('text');
  const li = header.indexOf('label');
  if (ti === -1 || li === -1)
    return {
      jsonl: '',
      errors: [{ line: 1, field: '(header)', reason: 'a header with "text" and "label" columns is required' }],
    };
  const out: string[] = [];
  rows.forEach((r, i) => {
    if (r.length === 1 && r[0] === '') return;
    const text = r[ti]?.trim();
    const label = r[li]?.trim();
    if (!text || !label) errors.push({ line: i + 2, field: !text ? 'text' : 'label', reason: 'is empty or missing' });
    else out.push(JSON.stringify({ text, label }));
  });
  return { jsonl: out.join('\n'), errors };
}

/**
 * Convert CoNLL (`token TAG` per line, blank line between sentences) in BIO or
 * IOB1 to JSONL with character offsets; tokens are joined by single spaces.
 * Tags may be `B-PER`, `I-PER`, `O`; labels are lower-cased (`PER` → `per`).
 */
export function conllToJsonl(content: string): { jsonl: string; errors: RowError[] } {
  const out: string[] = [];
  const errors: RowError[] = [];
  let tokens: { token: string; tag: string }[] = [];
  const flush = () => {
    if (tokens.length === 0) return;
    let text = '';
    const entities: EntitySpan[] = [];
    let open: EntitySpan | null = null;
    for (const { token, tag } of tokens) {
      const start = text.length === 0 ? 0 : text.length + 1;
      text = text.length === 0 ? token : `${text} ${token}`;
      const [prefix, type] = tag === 'O' ? ['O', ''] : [tag.slice(0, 1), tag.slice(2).toLowerCase()];
      const continues = open && prefix === 'I' && open.label === type;
      if (continues) open!.end = text.length;
      else {
        if (open) entities.push(open);
        open = prefix === 'O' ? null : { start, end: text.length, label: type };
      }
    }
    if (open) entities.push(open);
    out.push(JSON.stringify({ text, entities: entities.map((e) => ({ ...e, text: text.slice(e.start, e.end) })) }));
    tokens = [];
  };
  content.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('-DOCSTART-')) return flush();
    const parts = line.split(/\s+/);
    const token = parts[0]!;
    const tag = parts[parts.length - 1]!;
    if (parts.length < 2 || !/^(O|[BI]-.+)$/.test(tag))
      return void errors.push({
        line: i + 1,
        field: 'tag',
        reason: `expected "token TAG" with TAG O, B-X or I-X; got "${line}"`,
      });
    tokens.push({ token, tag });
  });
  flush();
  return { jsonl: out.join('\n'), errors };
}
