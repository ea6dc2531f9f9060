export { createRpcServer, LIVENESS_SERVICE, type RpcServer, type RpcServerOptions, type ServiceRouter } from './server';
export {
  createRpcClient,
  createHealthChecker,
  closeRpcChannels,
  isTargetUri,
  BALANCED_CHANNEL_OPTIONS,
  type RpcClientOptions,
} from './client';
export { callerOf, activeTraceId, CALLER_HEADER } from './context';
export { appErrorFromStatus, appErrorOfDetail, errorDetailOf, toAppError, toServiceError, CODE_OF } from './errors';
export type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
export { requireCaller, type TeamCaller } from './team-caller';
