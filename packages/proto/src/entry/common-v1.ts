// Public entry for common/v1: the generated messages and services of that protobuf package.
export * from '../gen/whetstone/common/v1/caller_pb';
export * from '../gen/whetstone/common/v1/error_pb';
export * from '../gen/whetstone/common/v1/sampling_pb';
