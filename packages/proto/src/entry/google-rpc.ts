// Public entry for google/rpc: the generated messages and services of that protobuf package.
export * from '../gen/google/rpc/status_pb';
