/**
 * pnpm --filter @whetstone/bench bench:rpc
 * One unary internal gRPC hop between two real processes, with generated code:
 * @whetstone/rpc (grpc-js underneath) against plain grpc-js and against Connect
 * for Node, the alternative it was chosen over. p50/p99 at c=1, throughput at c=50.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { createRpcClient } from '@whetstone/rpc';
import { EchoService } from '@whetstone/proto/testing/v1';

const CALLS = Number(process.env.BENCH_CALLS ?? 5000);
type Call = () => Promise<unknown>;

function grpcJsCall(port: number): Call {
  const def = protoLoader.loadSync(path.resolve(__dirname, '../../proto/whetstone/testing/v1/echo.proto'));
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    whetstone: {
      testing: {
        v1: {
          EchoService: new (
            a: string,
            c: grpc.ChannelCredentials,
          ) => { Echo: (r: object, cb: (e: unknown, r: unknown) => void) => void };
        };
      };
    };
  };
  const client = new pkg.whetstone.testing.v1.EchoService(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  return () =>
    new Promise((resolve, reject) => client.Echo({ message: 'ping' }, (e, r) => (e ? reject(e) : resolve(r))));
}

async function latency(call: Call): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < 500; i++) await call();
  const samples: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const t = process.hrtime.bigint();
    await call();
    samples.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  samples.sort((a, b) => a - b);
  return { p50: samples[Math.floor(samples.length * 0.5)]!, p99: samples[Math.floor(samples.length * 0.99)]! };
}

async function throughput(call: Call, concurrency: number): Promise<number> {
  let done = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (done < CALLS * 2) {
        done++;
        await call();
      }
    }),
  );
  return done / (Number(process.hrtime.bigint() - started) / 1e9);
}

async function main(): Promise<void> {
  const child = spawn(process.execPath, ['--require', 'tsx/cjs', path.join(__dirname, 'server.ts')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const ports = JSON.parse(
    await new Promise<string>((r) => readline.createInterface({ input: child.stdout! }).once('line', r)),
  ) as { connect: number; grpc: number; bareConnect: number };
  try {
    const client = createRpcClient(EchoService, { addr: `127.0.0.1:${ports.connect}`, caller: 'bench' });
    const connectClient = createClient(
      EchoService,
      createGrpcTransport({ baseUrl: `http://127.0.0.1:${ports.bareConnect}` }),
    );
    const cases: [string, Call][] = [
      [
        '@whetstone/rpc client → createRpcServer (both grpc-js + protobuf-es, with interceptors)',
        () => client.echo({ message: 'ping' }),
      ],
      ['plain grpc-js client → createRpcServer', grpcJsCall(ports.connect)],
      ['plain grpc-js client → plain grpc-js server (floor)', grpcJsCall(ports.grpc)],
      [
        'Connect client → Connect server (connect-node, no interceptors)',
        () => connectClient.echo({ message: 'ping' }),
      ],
    ];
    console.log(`\nOne unary gRPC hop between two processes (${CALLS} calls per latency row)\n`);
    console.log('| client → server | p50 ms (c=1) | p99 ms (c=1) | calls/s (c=50) |');
    console.log('|---|---|---|---|');
    for (const [name, call] of cases) {
      const l = await latency(call);
      const t = await throughput(call, 50);
      console.log(`| ${name} | ${l.p50.toFixed(3)} | ${l.p99.toFixed(3)} | ${Math.round(t)} |`);
    }
  } finally {
    child.kill('SIGTERM');
  }
}

void main().then(() => process.exit(0));
