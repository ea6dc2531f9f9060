export { createRpcServer, type RpcServer, type RpcServerOptions } from './server';
export { createRpcClient, createHealthChecker, type RpcClientOptions } from './client';
export { callerOf, activeTraceId, CALLER_HEADER } from './context';
export { appErrorFromConnect, toAppError, toConnectError, CODE_OF } from './errors';
export type { ConnectRouter, HandlerContext } from '@connectrpc/connect';
