// Public entry for grpc/health/v1: the generated messages and services of that protobuf package.
export * from '../gen/grpc/health/v1/health_pb';
