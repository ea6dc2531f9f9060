// Public entry for dataset/v1: the generated messages and services of that protobuf package.
export * from '../gen/whetstone/dataset/v1/dataset_pb';
export * from '../gen/whetstone/dataset/v1/events_pb';
export * from '../gen/whetstone/dataset/v1/files_pb';
