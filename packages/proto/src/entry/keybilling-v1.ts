// Public entry for keybilling/v1: the generated messages and services of that protobuf package.
export * from '../gen/whetstone/keybilling/v1/key_billing_pb';
export * from '../gen/whetstone/keybilling/v1/events_pb';
