import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { downloadHubFile, type PinnedFile } from './hub';
import { loadBertCheckpoint } from './load';
import { encodeSafetensors, parseSafetensors } from './safetensors';
import { fetchCheckpoint, type BaseCheckpointSpec } from './sources';
import { readZipEntries } from './wheel';

const TINY = join(__dirname, '../../fixtures/tiny-bert');
const FILES = ['config.json', 'model.safetensors', 'tokenizer.json'];
const pin = (name: string, bytes = readFileSync(join(TINY, name))): PinnedFile => ({
  name,
  size: bytes.length,
  sha256: createHash('sha256').update(bytes).digest('hex'),
});

/** A hub on loopback: `/<repo>/resolve/<rev>/<file>` from a map, with Range, the hub's ETag headers and faults. */
function startHub(files: Map<string, Buffer>, opts: { cutAfter?: number; wrongEtag?: boolean } = {}) {
  const requests: Array<{ url: string; range?: string }> = [];
  const server: Server = createServer((req, res) => {
    requests.push({ url: req.url!, range: req.headers.range });
    const m = /^\/org\/tiny\/resolve\/main\/(.+)$/.exec(req.url!);
    const body = m ? files.get(decodeURIComponent(m[1]!)) : undefined;
    if (!body) {
      res.writeHead(404).end('Entry not found');
      return;
    }
    const sha = opts.wrongEtag ? 'f'.repeat(64) : createHash('sha256').update(body).digest('hex');
    const from = req.headers.range ? Number(/bytes=(\d+)-/.exec(req.headers.range)![1]) : 0;
    const slice = body.subarray(from);
    res.writeHead(from ? 206 : 200, {
      'content-length': String(slice.length),
      'x-linked-etag': `"${sha}"`,
      ...(from ? { 'content-range': `bytes ${from}-${body.length - 1}/${body.length}` } : {}),
    });
    if (opts.cutAfter !== undefined && slice.length > opts.cutAfter) {
      res.write(slice.subarray(0, opts.cutAfter), () => setTimeout(() => res.destroy(), 50));
    } else res.end(slice);
  });
  return new Promise<{ endpoint: string; requests: typeof requests; close: () => Promise<void> }>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        requests,
        close: () => new Promise((r) => server.close(() => r())),
      }),
    ),
  );
}

const spec = (files: PinnedFile[]): BaseCheckpointSpec => ({
  id: 'tiny',
  files,
  hub: { repo: 'org/tiny', revision: 'main' },
  wheel: { package: 'none', version: '0', sha256: '0'.repeat(64), prefix: '' },
  licence: 'test',
});

describe('checkpoint sources', () => {
  let tmp: string;
  beforeEach(() => {
    tmp = mkdtempSync(join(tmpdir(), 'ckpt-'));
  });
  afterEach(() => rmSync(tmp, { recursive: true, force: true }));

  it('downloads from the hub with progress, verifies sha256, then serves from the cache', async () => {
    const hub = await startHub(new Map(FILES.map((f) => [f, readFileSync(join(TINY, f))])));
    try {
      const events: string[] = [];
      const got = await fetchCheckpoint(spec(FILES.map((f) => pin(f))), {
        cacheDir: tmp,
        hubEndpoint: hub.endpoint,
        wheel: false,
        progress: (e) => events.push(`${e.file}:${e.done}/${e.total}`),
      });
      expect(got.source).toContain('hub');
      expect(events).toContain(`model.safetensors:${pin('model.safetensors').size}/${pin('model.safetensors').size}`);
      expect(hub.requests.map((r) => r.url)).toEqual(FILES.map((f) => `/org/tiny/resolve/main/${f}`));
      expect(loadBertCheckpoint(got.dir).config.hidden_size).toBe(32);
      const again = await fetchCheckpoint(spec(FILES.map((f) => pin(f))), { cacheDir: tmp, hubEndpoint: hub.endpoint });
      expect(again.source).toBe('cache');
      expect(hub.requests).toHaveLength(FILES.length);
    } finally {
      await hub.close();
    }
  });

  it('resumes a broken-off download with a Range request', async () => {
    const body = readFileSync(join(TINY, 'model.safetensors'));
    const cut = await startHub(new Map([['model.safetensors', body]]), { cutAfter: 40_000 });
    const dest = join(tmp, 'model.safetensors');
    try {
      await expect(
        downloadHubFile({ repo: 'org/tiny', revision: 'main', endpoint: cut.endpoint }, pin('model.safetensors'), dest),
      ).rejects.toThrow(/model\.safetensors: (truncated: 40000 bytes received|the download broke off at 40000)/);
    } finally {
      await cut.close();
    }
    expect(statSync(`${dest}.part`).size).toBe(40_000);
    const hub = await startHub(new Map([['model.safetensors', body]]));
    try {
      await downloadHubFile(
        { repo: 'org/tiny', revision: 'main', endpoint: hub.endpoint },
        pin('model.safetensors'),
        dest,
      );
      expect(hub.requests[0]!.range).toBe('bytes=40000-');
      expect(readFileSync(dest).equals(body)).toBe(true);
      expect(existsSync(`${dest}.part`)).toBe(false);
    } finally {
      await hub.close();
    }
  });

  it('names the file and what was expected: missing, mismatched, reported by the hub', async () => {
    const files = new Map(FILES.map((f) => [f, readFileSync(join(TINY, f))]));
    files.delete('tokenizer.json');
    const hub = await startHub(files);
    const src = { repo: 'org/tiny', revision: 'main', endpoint: hub.endpoint };
    try {
      await expect(
        downloadHubFile(src, pin('tokenizer.json', readFileSync(join(TINY, 'tokenizer.json'))), join(tmp, 't')),
      ).rejects.toThrow(/tokenizer\.json: .*answered HTTP 404, expected the file \(\d+ bytes\)/);
      const wrong = { ...pin('config.json'), sha256: 'a'.repeat(64) };
      await expect(downloadHubFile(src, wrong, join(tmp, 'c'))).rejects.toThrow(
        `config.json: the hub reports sha256 ${pin('config.json').sha256}, expected ${'a'.repeat(64)} (pinned)`,
      );
    } finally {
      await hub.close();
    }
    const lying = await startHub(new Map(FILES.map((f) => [f, readFileSync(join(TINY, f))])), { wrongEtag: true });
    try {
      await expect(
        fetchCheckpoint(spec(FILES.map((f) => pin(f))), { cacheDir: tmp, hubEndpoint: lying.endpoint, wheel: false }),
      ).rejects.toThrow(
        /tiny: no source could supply the checkpoint:\n {2}hub .*config\.json: the hub reports sha256 f{64}/,
      );
    } finally {
      await lying.close();
    }
  });

  it('a local directory is used as it is; one missing a file is refused by name', async () => {
    const dir = join(tmp, 'mine');
    for (const f of FILES) {
      execFileSync('mkdir', ['-p', dir]);
      copyFileSync(join(TINY, f), join(dir, f));
    }
    expect((await fetchCheckpoint(spec([]), { cacheDir: tmp, localDir: dir })).dir).toBe(dir);
    rmSync(join(dir, 'model.safetensors'));
    writeFileSync(join(dir, 'pytorch_model.bin'), 'x');
    await expect(fetchCheckpoint(spec([]), { cacheDir: tmp, localDir: dir })).rejects.toThrow(
      /mine: missing model\.safetensors; a checkpoint needs config\.json, model\.safetensors, tokenizer\.json \(pickled \.bin weights are never loaded/,
    );
  });

  it('safetensors: round trip, F16 and BF16 widened, truncation and shape errors named', () => {
    const bytes = encodeSafetensors(
      new Map([['a.weight', { shape: [2, 2], data: Float32Array.from([1, -2, 0.5, 3]) }]]),
      {
        format: 'pt',
      },
    );
    const back = parseSafetensors(bytes, 'x.safetensors');
    expect(Array.from(back.tensors.get('a.weight')!.data)).toEqual([1, -2, 0.5, 3]);
    expect(back.metadata).toEqual({ format: 'pt' });
    expect(() => parseSafetensors(bytes.subarray(0, bytes.length - 4), 'x.safetensors')).toThrow(
      /x\.safetensors: truncated: tensor a\.weight ends at byte \d+, the file has \d+ bytes/,
    );
    const header = JSON.stringify({
      h: { dtype: 'F16', shape: [2], data_offsets: [0, 4] },
      b: { dtype: 'BF16', shape: [1], data_offsets: [4, 6] },
    });
    const raw = new Uint8Array(8 + header.length + 6);
    new DataView(raw.buffer).setBigUint64(0, BigInt(header.length), true);
    raw.set(new TextEncoder().encode(header), 8);
    const dv = new DataView(raw.buffer, 8 + header.length);
    dv.setUint16(0, 0x3c00, true); // 1.0
    dv.setUint16(2, 0xc000, true); // -2.0
    dv.setUint16(4, 0x3fc0, true); // bf16 1.5
    const t = parseSafetensors(raw);
    expect(Array.from(t.tensors.get('h')!.data)).toEqual([1, -2]);
    expect(Array.from(t.tensors.get('b')!.data)).toEqual([1.5]);
  });

  it('reads a wheel (zip) made by Python and finds the pinned files in it', () => {
    const src = join(tmp, 'pkg', 'model');
    execFileSync('mkdir', ['-p', src]);
    copyFileSync(join(TINY, 'config.json'), join(src, 'config.json'));
    const wheel = join(tmp, 'x.whl');
    execFileSync('python3', ['-m', 'zipfile', '-c', wheel, join(tmp, 'pkg')]);
    const entries = readZipEntries(readFileSync(wheel), (n) => n.endsWith('config.json'));
    expect(entries.get('pkg/model/config.json')).toEqual(new Uint8Array(readFileSync(join(TINY, 'config.json'))));
    expect(() => readZipEntries(readFileSync(wheel).subarray(0, 100), () => true, 'x.whl')).toThrow(
      /x\.whl: not a zip archive/,
    );
  });
});
