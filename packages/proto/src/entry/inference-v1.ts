// Public entry for inference/v1: the generated messages and services of that protobuf package.
export * from '../gen/whetstone/inference/v1/router_pb';
export * from '../gen/whetstone/inference/v1/batches_pb';
export * from '../gen/whetstone/inference/v1/model_server_pb';
export * from '../gen/whetstone/inference/v1/events_pb';
export * from '../gen/whetstone/inference/v1/kinds_pb';
export * from './recorded-turn';
