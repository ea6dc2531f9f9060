/** The bench's server process: the echo service behind createRpcServer, a plain grpc-js server and a plain Connect server. */
import path from 'node:path';
import { create } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { createRpcServer } from '@whetstone/rpc';
import { createLogger } from '@whetstone/telemetry';
import { EchoService, EchoResponseSchema } from '@whetstone/proto/testing/v1';

async function main(): Promise<void> {
  const connect = await createRpcServer({
    name: 'echo',
    port: 0,
    host: '127.0.0.1',
    logger: createLogger({ service: 'bench', level: 'silent' }),
    register: (r) => r.service(EchoService, { echo: (req) => create(EchoResponseSchema, { message: req.message }) }),
  });
  const def = protoLoader.loadSync(path.resolve(__dirname, '../../proto/whetstone/testing/v1/echo.proto'));
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    whetstone: { testing: { v1: { EchoService: { service: grpc.ServiceDefinition } } } };
  };
  const plain = new grpc.Server();
  plain.addService(pkg.whetstone.testing.v1.EchoService.service, {
    Echo: (call: grpc.ServerUnaryCall<{ message: string }, unknown>, cb: grpc.sendUnaryData<unknown>) =>
      cb(null, { message: call.request.message }),
  });
  const grpcPort = await new Promise<number>((resolve, reject) =>
    plain.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) =>
      err ? reject(err) : resolve(port),
    ),
  );
  const bare = http2.createServer(
    connectNodeAdapter({
      routes: (r) => r.service(EchoService, { echo: (req) => create(EchoResponseSchema, { message: req.message }) }),
    }),
  );
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  process.stdout.write(
    `${JSON.stringify({ connect: connect.port, grpc: grpcPort, bareConnect: (bare.address() as AddressInfo).port })}\n`,
  );
  process.on('SIGTERM', () => process.exit(0));
}

void main();
