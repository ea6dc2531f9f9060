// Generated code lives under ./gen (buf generate); import services from their
// own paths, e.g. `@whetstone/proto/gen/whetstone/common/v1/error_pb`.
export * from './gen/whetstone/common/v1/error_pb';
