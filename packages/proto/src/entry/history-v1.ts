// Public entry for history/v1: the generated messages and services of that protobuf package.
export * from '../gen/whetstone/history/v1/history_pb';
export * from '../gen/whetstone/history/v1/events_pb';
export * from '../gen/whetstone/history/v1/conversations_pb';
