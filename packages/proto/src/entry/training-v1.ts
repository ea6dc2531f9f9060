// Public entry for training/v1: the generated messages and services of that protobuf package.
export * from '../gen/whetstone/training/v1/training_pb';
export * from '../gen/whetstone/training/v1/events_pb';
export * from '../gen/whetstone/training/v1/job_status_pb';
export * from '../gen/whetstone/training/v1/adaptive_pb';
