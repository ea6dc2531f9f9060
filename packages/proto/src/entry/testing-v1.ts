// Public entry for testing/v1: the generated messages and services of that protobuf package.
export * from '../gen/whetstone/testing/v1/echo_pb';
